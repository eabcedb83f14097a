"""What the operator sees of each request: its id, one access-log line, and the metrics.

`Observed` wraps the whole app (the static fast lane included). For every HTTP request it

- takes the `X-Request-Id` a trusted proxy sent (peer in `--trusted-proxy`, a token of at most 128
  safe characters) or makes one, and echoes it on the response;
- writes one access-log line when the response is over: method, path, status, duration, the
  rate-limit key (`runtime/clients/ratelimit.py` leaves it in the scope) and the request id;
- counts the request in the metrics (`runtime/http/metrics.py`), when they are on.

Settings and formats: docs/operations.md.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any

from runtime.clients.ratelimit import RATE_KEY, is_trusted
from runtime.settings import Network

REQUEST_ID = b"x-request-id"
VALID_ID = re.compile(rb"[A-Za-z0-9._:@+=/-]{1,128}")
CLIENT_GONE = 499  # logged when no response began: the client left first (nginx's code for it)
MAX_LOGGED_TARGET = 1024  # characters of path and query in a log line
UNPRINTABLE = re.compile(r"[^\x21-\x7e]")

access_log = logging.getLogger("petgen.access")


class RequestIds:
    """Request ids: a trusted proxy's, or this process's random prefix and a counter (unique across
    replicas with near certainty, and cheaper than a UUID per request)."""

    def __init__(self, trusted: tuple[Network, ...]) -> None:
        self.trusted = trusted
        self.prefix = os.urandom(6).hex()
        self.counter = itertools.count(1)

    def of(self, scope: dict[str, Any]) -> bytes:
        if self.trusted:
            for name, value in scope["headers"]:
                if name == REQUEST_ID:
                    client = scope.get("client")
                    if VALID_ID.fullmatch(value) and client and is_trusted(client[0], self.trusted):
                        return value
                    break
        return f"{self.prefix}-{next(self.counter):x}".encode()


def shown_target(scope: dict[str, Any]) -> str:
    """The request target as sent (path and query), with anything unprintable escaped so that a line in
    the log is always one line and cannot be forged by a client; cut at MAX_LOGGED_TARGET."""
    target = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    text = target[:MAX_LOGGED_TARGET].decode("latin-1")
    return UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class Observed:
    """The ASGI wrapper described in the module docstring."""

    def __init__(self, app: Callable[..., Any], *, trusted_proxies: tuple[Network, ...] = (),
                 access: bool = True, metrics: Any = None) -> None:
        self.app = app
        self.ids = RequestIds(trusted_proxies)
        self.access = access
        self.metrics = metrics  # runtime.metrics.Metrics or None

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = self.ids.of(scope)
        status = 0

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message["headers"], (REQUEST_ID, request_id)]
            await send(message)

        if self.metrics is not None:
            self.metrics.started()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            status = status or CLIENT_GONE
            duration = time.perf_counter() - started
            if self.metrics is not None:
                self.metrics.finished(scope["path"], status, duration)
            if self.access and access_log.isEnabledFor(logging.INFO):
                log_request(scope, status, duration, request_id.decode("latin-1"))


def log_request(scope: dict[str, Any], status: int, duration: float, request_id: str) -> None:
    """The access-log line (status 499: the client went away before a response began). The same fields go to the JSON log format as `access` (runtime/http/logs.py)."""
    fields = {"method": scope["method"], "path": shown_target(scope), "status": status,
              "duration_ms": round(duration * 1000, 3), "rate_key": scope.get(RATE_KEY), "request_id": request_id}
    access_log.info("%s %s %d %.1fms key=%s id=%s", fields["method"], fields["path"], status, duration * 1000,
                    fields["rate_key"] or "-", request_id, extra={"access": fields})

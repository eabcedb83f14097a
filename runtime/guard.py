"""The outermost middleware: request bodies over the size limit → 413; any exception → 500 envelope.

No traceback ever reaches a client; it is logged here instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from runtime.errors import send_error

log = logging.getLogger("petgen.runtime")


class BodyTooLarge(Exception):
    pass


class GuardMiddleware:
    def __init__(self, app: Callable[..., Any], *, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                if not value.isdigit() or int(value) > self.max_body:
                    await self._too_large(send)
                    return
        started = False
        received = 0

        async def counting_receive() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._too_large(send)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await send_error(send, 500, "Internal server error.", "the error was logged; try again later")

    async def _too_large(self, send: Callable[..., Any]) -> None:
        await send_error(send, 413, f"Request body too large: the limit is {self.max_body} bytes.",
                         "send a smaller body")

"""Per-client-IP rate limiting as pure ASGI middleware (a sliding log over a rolling window).

Every response carries `X-RateLimit-Limit/Remaining/Reset` (Reset = Unix time in seconds when the
next request slot frees up) and the IETF `RateLimit-Policy` / `RateLimit` fields
(draft-ietf-httpapi-ratelimit-headers); over budget, 429 `rate_limited` with `Retry-After`.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from runtime.errors import send_error
from runtime.settings import Network

POLICY = "per-ip"


class SlidingLog:
    """In-memory store of recent request times per key. One process; use Redis for replicas."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.hits: dict[str, deque[float]] = {}
        self._next_sweep = 0.0

    def hit(self, key: str) -> tuple[bool, int, float]:
        """Record a request if allowed; return (allowed, remaining, seconds until a slot frees up)."""
        now = self.clock()
        if now >= self._next_sweep:
            self._sweep(now)
        log = self.hits.get(key)
        if log is None:
            log = self.hits[key] = deque()
        cutoff = now - self.window
        while log and log[0] <= cutoff:
            log.popleft()
        allowed = len(log) < self.limit
        if allowed:
            log.append(now)
        reset = (log[0] + self.window - now) if log else 0.0
        return allowed, self.limit - len(log), reset

    def _sweep(self, now: float) -> None:
        """Forget clients idle for a whole window, so memory stays bounded by active clients."""
        cutoff = now - self.window
        for key in [k for k, log in self.hits.items() if not log or log[-1] <= cutoff]:
            del self.hits[key]
        self._next_sweep = now + self.window


def client_ip(scope: dict[str, Any], trusted: tuple[Network, ...]) -> str:
    """The socket peer, or, when the peer is a trusted proxy, the nearest untrusted X-Forwarded-For hop."""
    client = scope.get("client")
    peer = client[0] if client else "unknown"
    if not trusted or not _is_trusted(peer, trusted):
        return peer
    forwarded = b",".join(v for k, v in scope["headers"] if k == b"x-forwarded-for").decode("latin-1")
    for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
        if not _is_trusted(hop, trusted):
            return hop
    return peer


def _is_trusted(address: str, trusted: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in trusted)


class RateLimitMiddleware:
    def __init__(self, app: Callable[..., Any], *, limit: int, window: int = 60,
                 trusted_proxies: tuple[Network, ...] = (), clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.app = app
        self.limit = limit
        self.window = window
        self.trusted = trusted_proxies
        self.store = SlidingLog(limit, window, clock)
        self.wall_clock = wall_clock
        self.policy = f'"{POLICY}";q={limit};w={window}'.encode()

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def evaluate(self, scope: dict[str, Any]) -> tuple[bool, list[tuple[bytes, bytes]]]:
        """Count this request; return (allowed, the rate-limit headers for its response)."""
        allowed, remaining, reset = self.store.hit(client_ip(scope, self.trusted))
        reset_s = max(1, math.ceil(reset))
        headers = [
            (b"x-ratelimit-limit", str(self.limit).encode()),
            (b"x-ratelimit-remaining", str(remaining).encode()),
            (b"x-ratelimit-reset", str(math.ceil(self.wall_clock() + reset)).encode()),
            (b"ratelimit-policy", self.policy),
            (b"ratelimit", f'"{POLICY}";r={remaining};t={reset_s}'.encode()),
        ]
        if not allowed:
            headers.append((b"retry-after", str(reset_s).encode()))
        return allowed, headers

    async def reject(self, send: Callable[..., Any], headers: list[tuple[bytes, bytes]]) -> None:
        """Answer 429 with the headers from `evaluate`."""
        retry = dict(headers)[b"retry-after"].decode()
        await send_error(send, 429, f"Too many requests: the limit is {self.limit} per {self.window} seconds "
                         "per client.", f"retry after {retry} seconds", headers)

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or self.limit <= 0:
            await self.app(scope, receive, send)
            return
        allowed, headers = self.evaluate(scope)
        if not allowed:
            await self.reject(send, headers)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], *headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)

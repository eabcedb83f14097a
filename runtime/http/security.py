"""The security headers (petgen/contract/security.py) on every response the runtime sends, as pure ASGI middleware.

Static files carry them already (runtime/builds/dist.py prepares them with their other headers); this adds
them to everything else — errors, redirects, 304s, 429s, /ask (JSON and SSE), /mcp, /api/search,
/api/status, the HTML 404 page — without repeating a header a response already has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from petgen.contract.security import RAW_SECURITY_HEADERS

_NAMES = frozenset(name for name, _ in RAW_SECURITY_HEADERS)


def with_security_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """`headers` plus each security header it lacks (names compared case-insensitively)."""
    present = {name.lower() for name, _ in headers if name.lower() in _NAMES}
    if len(present) == len(_NAMES):
        return headers
    return [*headers, *((name, value) for name, value in RAW_SECURITY_HEADERS if name not in present)]


class SecurityHeadersMiddleware:
    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = with_security_headers(list(message.get("headers", [])))
            await send(message)

        await self.app(scope, receive, send_with_headers)

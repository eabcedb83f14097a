"""CORS `*` on every response and preflight answers, as pure ASGI middleware.

The API is anonymous and read-only, so any origin may read it; no credentials are involved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EXPOSED = b"ETag, Link, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, " \
          b"RateLimit-Policy, Location"
ALLOWED_HEADERS = b"Accept, Content-Type, If-None-Match, Prefer, Mcp-Session-Id, Mcp-Protocol-Version, " \
                  b"Last-Event-ID, Signature, Signature-Input, Signature-Agent"
CORS_HEADERS = [(b"access-control-allow-origin", b"*"), (b"access-control-expose-headers", EXPOSED)]


class CORSMiddleware:
    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and any(k == b"access-control-request-method" for k, _ in scope["headers"]):
            await send({"type": "http.response.start", "status": 204, "headers": [
                *CORS_HEADERS,
                (b"access-control-allow-methods", b"GET, HEAD, POST, OPTIONS"),
                (b"access-control-allow-headers", ALLOWED_HEADERS),
                (b"access-control-max-age", b"86400"),
                (b"content-length", b"0"),
            ]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], *CORS_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_cors)

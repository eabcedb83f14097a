"""CORS on every response and preflight answers, as pure ASGI middleware.

The API is anonymous and read-only, so by default any origin may read it (`*`, no credentials). An
operator can restrict it to a list of origins (`--allow-origin`, `PETGEN_ALLOWED_ORIGINS`): then an
allowed Origin is echoed with `Vary: Origin`, any other gets no `Access-Control-Allow-Origin`, in the
preflight and in the real response alike. A preflight names the methods the path really serves (POST
on the POST endpoints, GET and HEAD everywhere else), so what it allows is what the request gets. A
preflight is not counted against the rate limit, but carries its headers (the client's budget as it stands).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any

from petgen.contract.security import CORS_ALLOWED_HEADERS, CORS_EXPOSED

EXPOSED = CORS_EXPOSED.encode()
ALLOWED_HEADERS = CORS_ALLOWED_HEADERS.encode()
ANY_ORIGIN = [(b"access-control-allow-origin", b"*"), (b"access-control-expose-headers", EXPOSED)]
READ_METHODS = b"GET, HEAD"
POST_METHODS = b"POST"


def normalise_origin(origin: str) -> str:
    """Origins compare as browsers send them: scheme://host[:port], lowercase, no trailing slash."""
    return origin.strip().rstrip("/").lower()


class CORSMiddleware:
    def __init__(self, app: Callable[..., Any], *, allowed_origins: Collection[str] = (),
                 post_paths: Collection[str] = (),
                 preflight_headers: Callable[[dict[str, Any]], Awaitable[list[tuple[bytes, bytes]]]] | None = None,
                 ) -> None:
        self.app = app
        self.allowed_origins = frozenset(normalise_origin(origin) for origin in allowed_origins)
        self.post_paths = frozenset(post_paths)
        self.preflight_headers = preflight_headers  # the rate limiter's, for its headers on every response

    def headers_for(self, scope: dict[str, Any]) -> list[tuple[bytes, bytes]]:
        """The CORS headers of a response to this request."""
        if not self.allowed_origins:
            return ANY_ORIGIN
        origin = next((v for k, v in scope["headers"] if k == b"origin"), None)
        if origin is not None and normalise_origin(origin.decode("latin-1")) in self.allowed_origins:
            return [(b"access-control-allow-origin", origin), (b"access-control-expose-headers", EXPOSED),
                    (b"vary", b"Origin")]
        return [(b"vary", b"Origin")]  # a cache must not hand this answer to an allowed origin, or vice versa

    def methods_for(self, path: str) -> bytes:
        """The methods `path` serves. A preflight for any other method is answered with this list, not refused:
        the browser then names the method it may not use, which says more than a failed preflight."""
        return POST_METHODS if path in self.post_paths else READ_METHODS

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cors = self.headers_for(scope)
        if scope["method"] == "OPTIONS" and any(k == b"access-control-request-method" for k, _ in scope["headers"]):
            extra = await self.preflight_headers(scope) if self.preflight_headers is not None else []
            await send({"type": "http.response.start", "status": 204, "headers": [
                *cors,
                (b"access-control-allow-methods", self.methods_for(scope["path"])),
                (b"access-control-allow-headers", ALLOWED_HEADERS),
                (b"access-control-max-age", b"86400"),
                (b"content-length", b"0"),
                *extra,
            ]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], *cors]
            await send(message)

        await self.app(scope, receive, send_with_cors)

"""Serve every manifest route from memory: ETag, If-None-Match → 304, HEAD, Cache-Control.

This is the hot path, so it is plain ASGI: one dict lookup and two `send` calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from petgen.dist import REVALIDATE, content_hash
from runtime.dist import Dist, StaticFile, prepared_file

Scope = dict[str, Any]
ASGIApp = Callable[..., Any]


def etag_matches(scope: Scope, etag: bytes) -> bool:
    """True if the request's If-None-Match names this ETag (or `*`); weak comparison per RFC 9110."""
    for name, value in scope["headers"]:
        if name == b"if-none-match":
            for candidate in value.split(b","):
                candidate = candidate.strip()
                if candidate == b"*" or candidate.removeprefix(b"W/") == etag:
                    return True
    return False


async def send_file(scope: Scope, send: Callable[..., Any], file: StaticFile, status: int = 200,
                    extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """Send a prepared file, or 304 if the client has it; no body for HEAD or 304."""
    if etag_matches(scope, file.etag):
        headers = [h for h in file.headers if h[0] != b"content-length" and h[0] != b"content-type"]
        await send({"type": "http.response.start", "status": 304, "headers": headers + extra if extra else headers})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = file.headers + extra if extra else file.headers
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else file.body})


def dynamic_file(body: bytes, content_type: str = "application/json; charset=utf-8") -> StaticFile:
    """Wrap a body computed at request time with the same headers a static file gets."""
    return prepared_file(body, content_hash(body), content_type, REVALIDATE)


class StaticRoutes:
    """Answer GET/HEAD for manifest routes; pass everything else to the app behind."""

    def __init__(self, app: ASGIApp, *, dist: Callable[[], Dist], dynamic_paths: frozenset[str]) -> None:
        self.app = app
        self.dist = dist
        self.dynamic_paths = dynamic_paths  # paths whose query string matters (list pages, live status)

    async def __call__(self, scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            path = scope["path"]
            if path not in self.dynamic_paths:
                file = self.dist().routes.get(path)
                if file is not None:
                    await send_file(scope, send, file)
                    return
        await self.app(scope, receive, send)

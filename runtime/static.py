"""Serve every manifest route: ETag, If-None-Match → 304, HEAD, Cache-Control.

This is the hot path, so it is plain ASGI: a lookup (a dict hit for cached small files) and two
`send` calls; a large file is streamed from disk, or sent by the server from its path.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from petgen.build.dist import REVALIDATE, content_hash
from runtime.builds.files import CHUNK, DistGone, LargeFile, StaticFile, pathsend_path, prepared_file

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


async def send_file(scope: Scope, send: Callable[..., Any], file: StaticFile | LargeFile, status: int = 200,
                    extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """Send a prepared file, or 304 if the client has it; no body for HEAD or 304."""
    if etag_matches(scope, file.etag):
        headers = [h for h in file.headers if h[0] != b"content-length" and h[0] != b"content-type"]
        await send({"type": "http.response.start", "status": 304, "headers": headers + extra if extra else headers})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = file.headers + extra if extra else file.headers
    await send({"type": "http.response.start", "status": status, "headers": headers})
    if scope["method"] == "HEAD":
        await send({"type": "http.response.body", "body": b""})
    elif isinstance(file, LargeFile):
        await send_large(scope, send, file)
    else:
        await send({"type": "http.response.body", "body": file.body})


async def send_large(scope: Scope, send: Callable[..., Any], file: LargeFile) -> None:
    """The body of a large file: by path where the server reads files itself (granian's
    `http.response.pathsend`), else read from disk in chunks."""
    path = pathsend_path(file.fd)
    if path is not None and "http.response.pathsend" in (scope.get("extensions") or {}):
        file.build.lend()  # the server opens the path after `send` returns: keep the handle open a while
        await send({"type": "http.response.pathsend", "path": path})
        return
    fd = os.dup(file.fd)  # its own handle, however long the client takes; pread leaves the offset alone
    try:
        offset = 0
        while offset < file.size:
            chunk = os.pread(fd, min(CHUNK, file.size - offset), offset)
            if not chunk:  # a build's files never change; if one did, the server aborts the short response
                raise OSError(f"{file.file} is shorter than its {file.size} bytes")
            offset += len(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": offset < file.size})
    finally:
        os.close(fd)


def dynamic_file(body: bytes, content_type: str = "application/json; charset=utf-8") -> StaticFile:
    """Wrap a body computed at request time with the same headers a static file gets."""
    return prepared_file(body, content_hash(body), content_type, REVALIDATE)


class StaticRoutes:
    """Answer GET/HEAD for manifest routes; pass everything else to the app behind."""

    def __init__(self, app: ASGIApp, *, serve: Callable[[str], Awaitable[StaticFile | LargeFile | None]],
                 gone: Callable[[Scope, Callable[..., Any], DistGone], Awaitable[None]],
                 dynamic_paths: frozenset[str]) -> None:
        self.app = app
        self.serve = serve  # Runtime.static_file
        self.gone = gone  # answers while the loaded build's files are gone
        self.dynamic_paths = dynamic_paths  # paths whose query string matters (list pages, live status)

    async def __call__(self, scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            path = scope["path"]
            if path not in self.dynamic_paths:
                try:
                    file = await self.serve(path)
                except DistGone as exc:
                    await self.gone(scope, send, exc)
                    return
                if file is not None:
                    await send_file(scope, send, file)
                    return
        await self.app(scope, receive, send)

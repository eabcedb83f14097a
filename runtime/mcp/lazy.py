"""`/mcp`, loaded on first use.

Importing the MCP SDK (and pydantic's models of every MCP message) takes 1 to 3 s and about 26 MB,
longer than loading a build of 10,000 entries. The runtime therefore starts serving without it and
loads it in a worker thread right after it started (runtime/app.py); a request to /mcp that comes
earlier waits for it. The routes are then those of `runtime.mcp.mcp_routes`, as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
from starlette.routing import BaseRoute, Route, Router

Scope = dict[str, Any]


class LazyMcp:
    """The ASGI app behind /mcp and /mcp/ that builds the real routes the first time it is needed."""

    def __init__(self, build: Callable[[], tuple[list[BaseRoute], Any]],
                 loaded: Callable[[Any], Awaitable[None]]) -> None:
        self._build = build  # run in a worker thread: import the SDK, build the server and its routes
        self._loaded = loaded  # then, in the event loop: start the server's session manager
        self._router: Router | None = None
        self._lock: anyio.Lock | None = None
        self.server: Any = None  # the MCP server, once loaded
        self._post: Any = None  # the app of its `POST /mcp` route, called without routing again

    async def ready(self) -> Router:
        if self._router is None:
            self._lock = self._lock or anyio.Lock()
            async with self._lock:
                if self._router is None:
                    routes, server = await anyio.to_thread.run_sync(self._build)
                    self.server = server
                    await self._loaded(server)
                    self._post = next((route.app for route in routes if isinstance(route, Route)
                                       and route.path == "/mcp" and "POST" in (route.methods or ())), None)
                    self._router = Router(routes)
        return self._router

    async def __call__(self, scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if self._post is not None and scope["method"] == "POST" and scope["path"] == "/mcp":
            await self._post(scope, receive, send)  # what the router would pick, as its first route
            return
        router = await self.ready()
        await router(scope, receive, send)

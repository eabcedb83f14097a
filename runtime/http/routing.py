"""Routes that take every HTTP method, so that their handler answers 405 with the path's own `Allow`.

A Starlette route lists its methods, and a request with another one falls through to Starlette's 405,
whose `Allow` names the methods of the first route that matched the path only partly, from a set: for
`CONNECT /mcp` that was every method of a catch-all route, in an order that changed between runs. A
function endpoint given no methods is a GET route in Starlette; wrapped as an ASGI app it takes any.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, request_response


class _AnyMethod:
    """An ASGI app around a request → response function (not a function itself: see the module's text)."""

    def __init__(self, endpoint: Callable[[Request], Awaitable[Response]]) -> None:
        self.app = request_response(endpoint)

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        await self.app(scope, receive, send)


def any_method(path: str, endpoint: Callable[[Request], Awaitable[Response]]) -> Route:
    """A route for `path` that passes every method to `endpoint` (which answers 405 to those it refuses)."""
    return Route(path, _AnyMethod(endpoint), name=endpoint.__name__)

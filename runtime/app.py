"""The ASGI application: `create_app(settings)` (or `create_app()` reading the environment)."""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from petgen.resources import encode, status_resource
from runtime.ask import BadAsk, ask_json, ask_stream, parse_ask_request
from runtime.cors import CORS_HEADERS, CORSMiddleware
from runtime.dist import Dist, StaticFile
from runtime.errors import error_response, use_license
from runtime.guard import BodyTooLarge, GuardMiddleware, client_gone
from runtime.logs import ensure_logging, root_logger_kept
from runtime.mcp import build_mcp, mcp_routes
from runtime.names import BadRequest, list_page, parse_list_query, unknown_or_redirect
from runtime.ratelimit import RateLimitMiddleware
from runtime.search import BadSearch, parse_search_query, search_results
from runtime.settings import Settings
from runtime.static import StaticRoutes, dynamic_file, send_file

log = logging.getLogger("petgen.runtime")

HTML = "text/html; charset=utf-8"
FAST_METHODS = frozenset({"GET", "HEAD"})
DYNAMIC_PATHS = frozenset({"/api/names", "/api/status"})  # their query string or the clock matters
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]


class Runtime:
    """What the app has loaded; `reload()` swaps in a new dist without a restart."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dist = self._load()

    def _load(self) -> Dist:
        dist = Dist.load(self.settings.dist)
        use_license(dict(dist.site.license))
        # The loaded dist is long-lived and large (10,000 entries: ~500,000 objects); moving it out of
        # the garbage collector's view keeps full collections from pausing requests.
        gc.collect()
        gc.freeze()
        return dist

    def reload(self) -> None:
        gc.unfreeze()  # let the collector see the old dist again once it is dropped
        self.dist = self._load()
        log.info("reloaded %s (%d routes)", self.settings.dist, len(self.dist.routes))


class PreparedResponse(Response):
    """A response over a prepared file: ETag/304 and HEAD handled exactly as for static routes."""

    def __init__(self, file_or_body: StaticFile | bytes) -> None:
        self.file = dynamic_file(file_or_body) if isinstance(file_or_body, bytes) else file_or_body
        self.status_code = 200
        self.background = None
        self.raw_headers = list(self.file.headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send_file(scope, send, self.file)


def build_starlette(runtime: Runtime) -> Starlette:
    def dist() -> Dist:
        return runtime.dist

    async def names(request: Request) -> Response:
        try:
            query = parse_list_query(request.scope["query_string"].decode("latin-1"), dist())
        except BadRequest as exc:
            return error_response(400, exc.message, exc.hint)
        return PreparedResponse(list_page(query, dist()))

    async def search(request: Request) -> Response:
        try:
            q, limit = parse_search_query(request.scope["query_string"].decode("latin-1"))
        except BadSearch as exc:
            return error_response(400, exc.message, exc.hint)
        return PreparedResponse(encode(search_results(q, limit, dist())))

    async def ask(request: Request) -> Response:
        d = dist()
        try:
            ask_request = parse_ask_request(await request.body(), dict(request.headers), d.site.site)
        except BadAsk as exc:
            return error_response(exc.status, exc.message, exc.hint)
        if ask_request.streaming:
            return StreamingResponse(ask_stream(ask_request, d), media_type="text/event-stream; charset=utf-8",
                                     headers={"cache-control": "no-store", "x-accel-buffering": "no"})
        response = Response(encode(ask_json(ask_request, d)), media_type="application/json; charset=utf-8")
        response.headers["cache-control"] = "no-store"
        return response

    async def ask_other(request: Request) -> Response:
        return error_response(405, f"Method {request.method} is not allowed on /ask.",
                              'POST a JSON body such as {"query": "Was bedeutet Spatzl?"}', headers={"allow": "POST"})

    async def status(request: Request) -> Response:
        d = dist()
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = status_resource(site=d.site, status="ok" if d.items else "empty", timestamp=now,
                               names=len(d.items), categories=len(d.categories), moods=len(d.moods),
                               content_hash=d.source_hash)
        response = Response(encode(body), media_type="application/json; charset=utf-8")
        response.headers["cache-control"] = "no-store"
        return response

    async def name(request: Request) -> Response:
        return unknown_or_redirect(request, dist(), request.path_params["slug"], "/api/names/")

    async def category(request: Request) -> Response:
        slug = request.path_params["slug"]
        d = dist()
        if f"/api/categories/{slug.lower()}" in d.routes:
            return RedirectResponse(f"/api/categories/{slug.lower()}", status_code=301)
        return error_response(404, f"No category with the slug '{slug}'.",
                              f"valid categories: {', '.join(d.categories)} (see /api/categories)")

    async def page(request: Request) -> Response:
        slug = request.path_params["slug"]
        if f"/names/{slug}/" in dist().routes:
            return RedirectResponse(f"/names/{slug}/", status_code=301)
        response = unknown_or_redirect(request, dist(), slug, "/names/", "/")
        if response.status_code == 404:
            return Response(dist().not_found_html, status_code=404, media_type=HTML)
        return response

    async def without_slash(request: Request) -> Response:
        location = request.url.path.rstrip("/") + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(location, status_code=301)

    async def api_fallback(request: Request) -> Response:
        path = request.url.path
        if path in dist().routes or path in DYNAMIC_PATHS or path == "/api/search":
            return error_response(405, f"Method {request.method} is not allowed on {path}.", "use GET or HEAD",
                                  headers={"allow": "GET, HEAD"})
        return error_response(404, f"No API endpoint at {path}.",
                              "see /openapi.json; the endpoints are /api/names, /api/names/{slug}, /api/categories, "
                              "/api/categories/{slug}, /api/search, /api/status")

    async def site_fallback(request: Request) -> Response:
        return Response(dist().not_found_html, status_code=404, media_type=HTML)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            return error_response(405, f"Method {request.method} is not allowed on {request.url.path}.",
                                  f"allowed: {(exc.headers or {}).get('Allow', 'GET')}", headers=exc.headers)
        if not request.url.path.startswith("/api/"):
            return Response(dist().not_found_html, status_code=exc.status_code, media_type=HTML)
        return error_response(exc.status_code, str(exc.detail), headers=exc.headers)

    async def server_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, BodyTooLarge):  # raised while the handler read a streamed body
            return error_response(413, f"Request body too large: the limit is {runtime.settings.max_body} bytes.",
                                  "send a smaller body")
        return error_response(500, "Internal server error.", "the error was logged; try again later")

    routes = [
        Route("/api/names", names, methods=["GET", "HEAD"]),
        Route("/api/status", status, methods=["GET", "HEAD"]),
        Route("/api/search", search, methods=["GET", "HEAD"]),
        Route("/api/names/{slug}", name, methods=["GET", "HEAD"]),
        Route("/api/categories/{slug}", category, methods=["GET", "HEAD"]),
        Route("/api/names/{slug}/", without_slash, methods=["GET", "HEAD"]),
        Route("/api/categories/{slug}/", without_slash, methods=["GET", "HEAD"]),
        Route("/api", api_fallback, methods=ALL_METHODS),
        Route("/api/{rest:path}", api_fallback, methods=ALL_METHODS),
        Route("/ask", ask, methods=["POST"]),
        Route("/ask", ask_other, methods=[m for m in ALL_METHODS if m != "POST"]),
        Route("/names/{slug}", page, methods=["GET", "HEAD"]),
        Route("/names/{slug}/", page, methods=["GET", "HEAD"]),
        Route("/{rest:path}", site_fallback, methods=["GET", "HEAD"]),
    ]
    mcp = build_mcp(dist, version=runtime.dist.site.api_version, base_url=runtime.dist.site.base_url)
    routes[-1:-1] = mcp_routes(mcp, runtime.dist.site.base_url)  # before the site's catch-all

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():  # the MCP SDK's lifespan runs inside ours
            yield

    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={HTTPException: http_error, Exception: server_error,
                                         ClientDisconnect: client_gone})


class PetgenApp:
    """The middleware stack around Starlette, with the runtime exposed for reloads and tests."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.runtime = Runtime(settings)
        with root_logger_kept():  # the MCP SDK would put rich's handler on the root logger (runtime/logs.py)
            self.starlette = build_starlette(self.runtime)
        inner: Callable[..., Any] = StaticRoutes(self.starlette, dist=lambda: self.runtime.dist,
                                                 dynamic_paths=DYNAMIC_PATHS)
        inner = GuardMiddleware(inner, max_body=settings.max_body, body_timeout=settings.body_timeout)
        self.ratelimit = RateLimitMiddleware(inner, limit=settings.rate_limit, window=settings.rate_window,
                                             trusted_proxies=settings.trusted_proxies)
        self.asgi = CORSMiddleware(self.ratelimit)  # outermost: even a 429 can be read by a browser

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        """Fast lane for static GET/HEAD (the hot path): the same headers as the middleware stack adds,
        without a wrapper per middleware; everything else goes through the stack."""
        if scope["type"] == "http" and scope["method"] in FAST_METHODS and scope["path"] not in DYNAMIC_PATHS:
            file = self.runtime.dist.routes.get(scope["path"])
            if file is not None:
                extra = CORS_HEADERS
                if self.ratelimit.enabled:
                    allowed, limits = self.ratelimit.evaluate(scope)
                    if not allowed:
                        await self.ratelimit.reject(_with_headers(send, CORS_HEADERS), limits)
                        return
                    extra = CORS_HEADERS + limits
                await send_file(scope, send, file, extra=extra)
                return
        await self.asgi(scope, receive, send)


def _with_headers(send: Callable[..., Any], headers: list[tuple[bytes, bytes]]) -> Callable[..., Any]:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message["headers"], *headers]
        await send(message)

    return wrapped


def create_app(settings: Settings | None = None) -> PetgenApp:
    """Build the app; without settings (a bare ASGI server's factory), read them from PETGEN_* environment
    variables and set up logging unless the server did."""
    if settings is None:
        settings = Settings.from_env()
        ensure_logging(settings.log_level)
    return PetgenApp(settings)

"""The ASGI application: `create_app(settings)` (or `create_app()` reading the environment)."""

from __future__ import annotations

import datetime as dt
import gc
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from petgen.build.dist import trim_heap
from petgen.content.model import Site
from petgen.contract.resources import encode, status_resource
from petgen.contract.schemas import OPENAPI_VERSION
from petgen.contract.security import RAW_SECURITY_HEADERS
from runtime.ask import AskEndpoint
from runtime.builds.dist import Dist, DistNotFound, LargeFile, StaticFile, limit_malloc_arenas
from runtime.builds.files import DistGone
from runtime.builds.reloader import DistWatcher, Stamp, manifest_stamp
from runtime.clients.botauth import BotVerifier
from runtime.clients.netlify import SignedProxy
from runtime.clients.nonces import NonceCache
from runtime.clients.ratelimit import RateLimitMiddleware
from runtime.clients.sharedstore import SharedStore
from runtime.health import Health, content_probe
from runtime.http.cors import CORSMiddleware
from runtime.http.errors import JSON, error_response, send_error, use_site
from runtime.http.guard import BodyTooLarge, GuardMiddleware, client_gone
from runtime.http.logs import ensure_logging, root_logger_kept
from runtime.http.metrics import ENV as METRICS_DIR
from runtime.http.metrics import Metrics
from runtime.http.observe import Observed
from runtime.http.params import shown
from runtime.http.routing import any_method
from runtime.http.security import SecurityHeadersMiddleware
from runtime.mcp.lazy import LazyMcp
from runtime.mcp.transport import McpErrorEnvelope
from runtime.names import BadRequest, canonical_page, list_page, parse_list_query, unknown_category, unknown_or_redirect
from runtime.search import parse_search_query, search_results
from runtime.settings import Settings
from runtime.static import StaticRoutes, dynamic_file, send_file
from runtime.webhooks.facility import Webhooks

log = logging.getLogger("petgen.runtime")

HTML = "text/html; charset=utf-8"
FAST_METHODS = frozenset({"GET", "HEAD"})
# The endpoints that answer POST only (CORS preflights say so); with a trailing slash, a POST is a 308 to them.
POST_PATHS = frozenset({"/ask", "/mcp", "/ask/", "/mcp/"})
DYNAMIC_PATHS = frozenset({"/api/names", "/api/status"})  # their query string or the clock matters
AFTER_START = 2.0  # seconds after which the work held back at start begins even if no request came
METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")
# Paths whose every answer is JSON, errors included (human pages answer an HTML 404 instead).
JSON_SURFACES = ("/api", "/.well-known", "/openapi.json", "/webhooks")
# What the Status resource names while no dist (and so no site.yml) is loaded.
FALLBACK_SITE = Site(name="Kosenamen API", site="kosenamen", base_url="", language="de", api_version=OPENAPI_VERSION,
                     description="", license={"name": "CC BY 4.0", "url": "https://creativecommons.org/licenses/by/4.0/",
                                              "attribution": ""})


def is_json_surface(path: str) -> bool:
    return path in ("/ask", "/mcp") or any(path == p or path.startswith(p + "/") for p in JSON_SURFACES)


def status_response(code: int, body: dict[str, Any]) -> Response:
    response = Response(encode(body), status_code=code, media_type=JSON)
    response.headers["cache-control"] = "no-store"
    return response


class Runtime:
    """What the app has loaded; `reload()` swaps in a new dist without a restart.

    Without a loadable dist the runtime is `down`: it answers 503 and tries to load the dist again at
    most every `RETRY_DOWN` seconds, so it comes up by itself once a build appears.
    """

    RETRY_DOWN = 5.0
    RETRY_GONE = 1.0  # seconds between reloads tried because the loaded build's files are gone

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.health = Health()
        if settings.content is not None:
            self.health.add_probe("content", content_probe(settings.content, settings.dist))
        self.dist: Dist | None = None
        self.down_reason = ""
        self._next_attempt = 0.0
        self.on_load: list[Callable[[Dist], None]] = []
        self.loaded_stamp: Stamp | None = None  # the manifest last loaded (or tried): the watcher compares it
        self.serving_stamp: Stamp | None = None  # the manifest of the build loaded now
        self._reloading = threading.Lock()  # petgen dev, the watcher, SIGHUP and up() may all reload
        self._gone_tried = -self.RETRY_GONE  # when a reload was last tried because files were gone
        self._gone_lock: anyio.Lock | None = None
        self.reload()

    def when_loaded(self, callback: Callable[[Dist], None]) -> None:
        """Call `callback` with every dist loaded from now on, and at once with the one loaded already
        (the first load happens in __init__, before anyone could register)."""
        self.on_load.append(callback)
        if self.dist is not None:
            callback(self.dist)

    def reload(self) -> bool:
        """Load the dist; on failure keep serving the previous one (degraded) or stay down."""
        with self._reloading:
            return self._reload()

    def _reload(self) -> bool:
        self.loaded_stamp = stamp = manifest_stamp(self.settings.dist)
        try:
            dist = Dist.load(self.settings.dist, self.settings.static_cache)
        except DistNotFound as exc:
            if self.dist is None:
                if self.down_reason != str(exc):
                    log.error("down: %s", exc)
                self.down_reason = str(exc)
                self._next_attempt = time.monotonic() + self.RETRY_DOWN
            else:
                log.error("reload failed, still serving the previous build: %s", exc)
                self.health.fail("dist", f"reloading failed ({exc}); serving the previous build")
            return False
        use_site(dist.site)
        if self.dist is not None:
            gc.unfreeze()  # let the collector see the old dist again once it is dropped
        # The loaded dist is long-lived and large (10,000 entries: ~500,000 objects); moving it out of
        # the garbage collector's view keeps full collections from pausing requests.
        gc.collect()
        trim_heap()
        gc.freeze()
        first = self.dist is None
        self.dist, self.down_reason, self.serving_stamp = dist, "", stamp
        self.health.recover("dist")
        self.health.forget_probes()
        log.info("%s %s (%d routes)", "loaded" if first else "reloaded", self.settings.dist, len(dist.routes))
        for callback in self.on_load:
            callback(dist)
        return True

    async def static_file(self, path: str) -> StaticFile | LargeFile | None:
        """What to send for a manifest route of the loaded build, None if it has no such route.

        The build's files are read when requested; once `petgen build` has replaced and deleted them,
        the build on disk now is loaded first, so the answer comes whole from one build (tried three
        times, for builds swapped in one after another). DistGone if there is none to load.
        """
        for _ in range(3):
            dist = self.dist
            if dist is None:
                return None
            try:
                return dist.routes.serve(path)
            except FileNotFoundError:
                pass
            await self._reload_gone(dist)
        raise DistGone(f"the files of the loaded build are gone from {self.settings.dist}")

    async def _reload_gone(self, gone: Dist) -> None:
        """Load the build on disk in place of `gone`, whose files were deleted: at once if it is another
        build, else at most every RETRY_GONE seconds."""
        self._gone_lock = self._gone_lock or anyio.Lock()
        async with self._gone_lock:  # one reload for all the requests that found the files gone
            if self.dist is gone:
                newer = manifest_stamp(self.settings.dist) not in (None, self.serving_stamp)
                if newer or time.monotonic() - self._gone_tried >= self.RETRY_GONE:
                    self._gone_tried = time.monotonic()
                    log.warning("the files of the loaded build are gone from %s; loading the build there now",
                                gone.root)
                    await anyio.to_thread.run_sync(self.reload)

    def up(self) -> Dist | None:
        """The loaded dist; while down, try to load it again (at most every RETRY_DOWN seconds)."""
        if self.dist is None and time.monotonic() >= self._next_attempt:
            self.reload()
        return self.dist

    def status(self) -> tuple[int, dict[str, Any]]:
        """The Status resource as now, with its HTTP status (503 when down)."""
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        d = self.dist
        if d is None:
            return 503, status_resource(site=FALLBACK_SITE, status="down", timestamp=now, names=0, categories=0,
                                        moods=0, content_hash="", checks={"dist": {"status": "fail",
                                                                                  "detail": self.down_reason}})
        checks = self.health.checks()
        healthy = all(check["status"] == "ok" for check in checks.values())
        return 200, status_resource(site=d.site, status="ok" if healthy else "degraded", timestamp=now,
                                    names=len(d.items), categories=len(d.categories), moods=len(d.moods),
                                    content_hash=d.source_hash, checks=checks, facets=d.facet_counts)


class PreparedResponse(Response):
    """A response over a prepared file: ETag/304 and HEAD handled exactly as for static routes."""

    def __init__(self, file_or_body: StaticFile | LargeFile | bytes) -> None:
        self.file = dynamic_file(file_or_body) if isinstance(file_or_body, bytes) else file_or_body
        self.status_code = 200
        self.background = None
        self.raw_headers = list(self.file.headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send_file(scope, send, self.file)


def build_starlette(runtime: Runtime, extra_routes: Sequence[BaseRoute] = (),
                    mcp_loaded: Callable[[Any], Awaitable[None]] | None = None) -> Starlette:
    def dist() -> Dist:
        assert runtime.dist is not None  # DistGate answers every request while the runtime is down
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
        except BadRequest as exc:
            return error_response(400, exc.message, exc.hint)
        return PreparedResponse(encode(search_results(q, limit, dist())))

    async def ask_other(request: Request) -> Response:
        return error_response(405, f"Method {request.method} is not allowed on /ask.",
                              'POST a JSON body such as {"query": "Was bedeutet Spatzl?"}', headers={"allow": "POST"})

    async def status(request: Request) -> Response:
        code, body = await run_in_threadpool(runtime.status)  # its probes may touch the file system
        return status_response(code, body)

    async def name(request: Request) -> Response:
        return unknown_or_redirect(request, dist(), request.path_params["slug"], "/api/names/")

    async def category(request: Request) -> Response:
        return unknown_category(request, dist(), request.path_params["slug"])

    async def page(request: Request) -> Response:
        slug = request.path_params["slug"]
        if f"/names/{slug}/" in dist().routes:
            return RedirectResponse(f"/names/{slug}/", status_code=301)
        response = unknown_or_redirect(request, dist(), slug, "/names/", "/")
        if response.status_code == 404:
            return Response(dist().not_found_html, status_code=404, media_type=HTML)
        return response

    async def without_slash(request: Request) -> Response:
        """API paths have no trailing slash: 308 (method and body kept) to the canonical path."""
        location = request.url.path.rstrip("/") + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(location, status_code=308)

    async def api_fallback(request: Request) -> Response:
        """Anything else under the JSON surfaces (/api, /.well-known, /openapi.json, /webhooks): an envelope."""
        path = request.url.path
        if path.endswith("/") and path.rstrip("/"):  # 308 keeps the method: a POST then learns its 405
            return await without_slash(request)
        if path in dist().routes or path in DYNAMIC_PATHS or path == "/api/search":
            return error_response(405, f"Method {request.method} is not allowed on {path}.", "use GET or HEAD",
                                  headers={"allow": "GET, HEAD"})
        if path == "/webhooks" or path.startswith("/webhooks/"):
            return error_response(404, f"No webhook endpoint at {shown(path)}.",
                                  "the endpoints are /webhooks, /webhooks/{id} and /webhooks/{id}/rotate; see "
                                  "/docs#webhooks")
        if path.startswith("/.well-known/"):
            return error_response(404, f"No discovery document at {shown(path)}.",
                                  "see /.well-known/api-catalog for the documents this service publishes")
        return error_response(404, f"No API endpoint at {shown(path)}.",
                              "see /openapi.json; the endpoints are /api/names, /api/names/{slug}, /api/categories, "
                              "/api/categories/{slug}, /api/search, /api/status")

    async def site_fallback(request: Request) -> Response:
        """A page asked for with or without the trailing slash it does not have (`/docs/`, `/a-z`): 301 to the
        page; anything else the 404 page."""
        path = request.url.path
        other = path.rstrip("/") if path.endswith("/") else path + "/"
        query = f"?{request.url.query}" if request.url.query else ""
        if other and other != path and other in dist().routes:
            return RedirectResponse(other + query, status_code=301)
        canonical = canonical_page(path, dist().routes)  # /categories/Tiere/ → /categories/tiere/
        if canonical is not None:
            return RedirectResponse(canonical + query, status_code=301)
        return Response(dist().not_found_html, status_code=404, media_type=HTML)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:  # Starlette names a route's methods from a set: in a stable order here
            given = {m.strip() for m in (exc.headers or {}).get("Allow", "GET").split(",")}
            allow = ", ".join(sorted(given, key=lambda m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else 99, m)))
            return error_response(405, f"Method {request.method} is not allowed on {request.url.path}.",
                                  f"allowed: {allow}", headers={"allow": allow})
        if exc.status_code == 404 and not is_json_surface(request.url.path):
            return Response(dist().not_found_html, status_code=404, media_type=HTML)
        return error_response(exc.status_code, str(exc.detail), headers=exc.headers)

    async def server_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, BodyTooLarge):  # raised while the handler read a streamed body
            return error_response(413, f"Request body too large: the limit is {runtime.settings.max_body} bytes.",
                                  "send a smaller body")
        return error_response(500, "Internal server error.", "the error was logged; try again later")

    routes = [  # the dynamic surfaces first: Starlette tries the routes in turn
        Route("/api/search", search, methods=["GET", "HEAD"]),
        Route("/ask", AskEndpoint(dist), methods=["POST"]),  # an ASGI app (runtime/ask.py)
        Route("/api/names", names, methods=["GET", "HEAD"]),
        Route("/api/status", status, methods=["GET", "HEAD"]),
        Route("/api/names/{slug}", name, methods=["GET", "HEAD"]),
        Route("/api/categories/{slug}", category, methods=["GET", "HEAD"]),
        Route("/api/names/{slug}/", without_slash, methods=["GET", "HEAD"]),
        Route("/api/categories/{slug}/", without_slash, methods=["GET", "HEAD"]),
        *extra_routes,  # before the fallbacks of the JSON surfaces (/webhooks)
        *(any_method(path, api_fallback) for path in JSON_SURFACES),
        *(any_method(f"{path}/{{rest:path}}", api_fallback) for path in JSON_SURFACES),
        any_method("/ask", ask_other),  # any but POST, which the route above took
        # A POST to /ask/ or /mcp/ is a 308 (method and body kept); other methods are refused as on the paths
        # themselves (/mcp/ in runtime/mcp/server.py).
        Route("/ask/", without_slash, methods=["POST"]),
        any_method("/ask/", ask_other),
        Route("/mcp/", without_slash, methods=["POST"]),
        Route("/names/{slug}", page, methods=["GET", "HEAD"]),
        Route("/names/{slug}/", page, methods=["GET", "HEAD"]),
        Route("/{rest:path}", site_fallback, methods=["GET", "HEAD"]),
    ]
    site, settings, runtime_origin = runtime.dist.site, runtime.settings, runtime.dist.manifest.get("runtime_origin")

    def load_mcp() -> tuple[list[BaseRoute], Any]:
        with root_logger_kept():  # the MCP SDK would put rich's handler on the root logger (runtime/http/logs.py)
            from runtime.mcp.server import build_mcp, fast_search, mcp_routes

            mcp = build_mcp(dist, version=site.api_version, base_url=site.base_url)
            return mcp_routes(mcp, site.base_url, settings.allowed_origins, runtime_origin, settings.allowed_hosts,
                              fast=fast_search(dist)), mcp

    async def no_manager(server: Any) -> None:
        return None

    mcp = LazyMcp(load_mcp, mcp_loaded or no_manager)  # every method on /mcp, all but POST (a 308 above) on /mcp/
    routes[2:2] = [Route("/mcp", mcp, methods=None)]  # an ASGI app: any method (runtime/http/routing.py)
    routes[-1:-1] = [Route("/mcp/", mcp, methods=None)]  # any but POST (a 308 above); before the catch-all
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: server_error,
                                                       ClientDisconnect: client_gone})
    app.state.mcp = mcp
    return app


class PetgenApp:
    """The middleware stack around Starlette, with the runtime exposed for reloads and tests.

    The app handles the ASGI lifespan itself: it holds a task group for the server's lifetime, in
    which the MCP SDK's session manager runs once a dist is loaded (at start, or later when a runtime
    that started down comes up).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        limit_malloc_arenas()  # before the runtime starts threads (runtime/builds/dist.py)
        self.runtime = Runtime(settings)
        self.webhooks = Webhooks.from_settings(settings)
        self.webhooks.hold_first()  # the dist loaded now is derived once the server has answered (`_after_start`)
        self.runtime.when_loaded(self.webhooks.dist_loaded)  # the first start records the baseline
        self._answered = False  # set after the first response: the work held back at start may begin
        self._lifespan_began = False
        self._answer: anyio.Event | None = None
        self.runtime.health.add_report("webhooks", self.webhooks.report)
        self.watcher = DistWatcher(settings.dist, self.runtime.reload, lambda: self.runtime.loaded_stamp,
                                   interval=settings.dist_poll)
        self.starlette = self._build_routes() if self.runtime.dist is not None else None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._mcp_started = False
        self.static = StaticRoutes(self._starlette, serve=self.runtime.static_file, gone=self._gone,
                                   dynamic_paths=DYNAMIC_PATHS)
        inner = GuardMiddleware(self._when_up, max_body=settings.max_body, body_timeout=settings.body_timeout)
        # Redis, when configured, holds the rate-limit counts and bot nonces of all replicas (runtime/clients/sharedstore.py).
        self.shared = (SharedStore(settings.redis_url, health=self.runtime.health, timeout=settings.redis_timeout)
                       if settings.redis_url else None)
        self.bots = BotVerifier(nonces=NonceCache(self.shared), trusted_proxies=settings.trusted_proxies)
        self.runtime.when_loaded(lambda dist: self.bots.load(dist.bots))
        self.ratelimit = RateLimitMiddleware(inner, limit=settings.rate_limit, window=settings.rate_window,
                                             trusted_proxies=settings.trusted_proxies, bots=self.bots,
                                             signed_proxy=SignedProxy(settings.netlify_signing_secret)
                                             if settings.netlify_signing_secret else None)
        if self.shared is not None:
            from runtime.clients.sharedcounter import SharedWindowCounter  # redis: only with a Redis URL

            self.ratelimit.shared = SharedWindowCounter(self.shared, self.ratelimit.store)
        # CORS outermost: even a 429 can be read by a browser; on /mcp, a 429 or 413 is a JSON-RPC error too.
        self.cors = CORSMiddleware(McpErrorEnvelope(self.ratelimit), allowed_origins=settings.allowed_origins,
                                   post_paths=POST_PATHS, preflight_headers=self.ratelimit.preflight_headers)
        self.asgi = SecurityHeadersMiddleware(self.cors)  # around everything: preflights and 429s included
        self.metrics = self._metrics()
        # Outermost, the fast lane included: request id, access log, metrics (runtime/http/observe.py).
        self.observed = Observed(self._serve, trusted_proxies=settings.trusted_proxies, access=settings.access_log,
                                 metrics=self.metrics)

    def _metrics(self) -> Metrics | None:
        """The metrics of this process, when `petgen serve` runs a metrics listener (runtime/http/metrics.py)."""
        if not self.settings.metrics_port:
            return None
        if not os.environ.get(METRICS_DIR):
            log.warning("metrics are off: PETGEN_METRICS_PORT needs `petgen serve`, which runs the listener")
            return None
        metrics = Metrics()
        self.runtime.health.on_change.append(metrics.check_changed)
        loaded = [0]

        def dist_loaded(dist: Dist) -> None:
            metrics.dist_loaded(len(dist.items), first=not loaded[0])
            loaded[0] += 1

        self.runtime.when_loaded(dist_loaded)
        return metrics

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if not self._answered and not self._lifespan_began:
            self._lifespan_began = True  # warned once
            log.warning("the ASGI server sent no lifespan events: without them new builds are not loaded, "
                        "webhooks are not delivered and /mcp runs no session manager; run `petgen serve`, or "
                        "start the server with its lifespan on (uvicorn: --lifespan on)")
        await self.observed(scope, receive, send)
        if not self._answered:
            self._answered = True
            if self._answer is not None:
                self._answer.set()

    async def _after_start(self, work: Callable[[], Awaitable[Any]]) -> None:
        """Run `work` once the server has answered its first request, or AFTER_START seconds after the
        lifespan began if none came: what the first answer does not need (importing the MCP SDK, the
        webhook baseline) must not compete with it for the interpreter."""
        if not self._answered:
            self._answer = self._answer or anyio.Event()
            with anyio.move_on_after(AFTER_START):
                await self._answer.wait()
        await work()

    async def _release_webhooks(self) -> None:
        await anyio.to_thread.run_sync(self.webhooks.release)

    async def _serve(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        """Fast lane for static GET/HEAD (the hot path): the same headers as the middleware stack adds,
        without a wrapper per middleware; everything else goes through the stack."""
        if scope["type"] == "http" and scope["method"] in FAST_METHODS and scope["path"] not in DYNAMIC_PATHS:
            dist = self.runtime.dist
            file = dist.routes.hot.get(scope["path"]) if dist is not None else None  # a cached small file
            if file is None:
                try:
                    file = await self.runtime.static_file(scope["path"])
                except DistGone as exc:
                    await self._gone(scope, send, exc)
                    return
            if file is not None:
                extra = cors = self.cors.headers_for(scope)
                if self.ratelimit.enabled:
                    allowed, limits = await self.ratelimit.evaluate(scope)
                    if not allowed:
                        await self.ratelimit.reject(_with_headers(send, cors + RAW_SECURITY_HEADERS), limits)
                        return
                    extra = cors + limits
                await send_file(scope, send, file, extra=extra)
                return
        await self.asgi(scope, receive, send)

    async def _gone(self, scope: dict[str, Any], send: Callable[..., Any], exc: DistGone) -> None:
        log.error("%s", exc)
        await self._down(scope, send)

    async def _when_up(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        """Serve from the loaded dist, or answer 503 while the runtime is down."""
        if self.runtime.up() is None:
            await self._down(scope, send)
            return
        await self._start_surfaces()
        await self.static(scope, receive, send)

    def _build_routes(self) -> Starlette:
        return build_starlette(self.runtime, self.webhooks.routes(), self._mcp_loaded)

    async def _starlette(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        assert self.starlette is not None
        await self.starlette(scope, receive, send)

    async def _start_surfaces(self) -> None:
        """Build the routes (once a dist is loaded); in the lifespan, load /mcp in the background
        (runtime/mcp/lazy.py) and run the MCP session manager in the lifespan's tasks."""
        if self.starlette is None:
            self.starlette = self._build_routes()
        if self._tasks is not None and not self._mcp_started:
            self._mcp_started = True
            mcp: LazyMcp = self.starlette.state.mcp
            if mcp.server is not None:  # loaded by a request before this lifespan began
                await self._tasks.start(self._run_mcp, mcp.server)
            else:
                self._tasks.start_soon(self._after_start, mcp.ready)

    async def _mcp_loaded(self, server: Any) -> None:
        if self._tasks is not None:
            self._mcp_started = True
            await self._tasks.start(self._run_mcp, server)


    @staticmethod
    async def _run_mcp(mcp: Any, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        async with mcp.session_manager.run():
            task_status.started()
            await anyio.sleep_forever()

    async def _lifespan(self, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        await receive()  # lifespan.startup
        self._lifespan_began = True
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            if self.runtime.dist is not None:
                await self._start_surfaces()
            await tasks.start(self.webhooks.run)  # the delivery worker
            tasks.start_soon(self._after_start, self._release_webhooks)  # the build loaded at start
            await tasks.start(self.watcher.run)  # new builds: SIGHUP and dist/_manifest.json
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            tasks.cancel_scope.cancel()
        self._tasks, self._mcp_started = None, False
        if self.shared is not None:
            await self.shared.close()
        await send({"type": "lifespan.shutdown.complete"})

    async def _down(self, scope: dict[str, Any], send: Callable[..., Any]) -> None:
        retry = [(b"retry-after", str(int(Runtime.RETRY_DOWN)).encode())]
        if scope["path"] == "/api/status":
            code, body = self.runtime.status()
            data = encode(body)
            await send({"type": "http.response.start", "status": code, "headers": [
                (b"content-type", JSON.encode()), (b"content-length", str(len(data)).encode()),
                (b"cache-control", b"no-store"), *retry]})
            await send({"type": "http.response.body", "body": data if scope["method"] != "HEAD" else b""})
            return
        await send_error(send, 503, "The service is down: no build of the knowledge base is loaded.",
                         "try again in a minute; /api/status says when it is back", retry)


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
        try:
            settings = Settings.from_env()
        except ValueError as exc:  # one line naming the variable, as `petgen serve` says it, not a traceback
            raise SystemExit(f"petgen: invalid setting: {exc} (docs/operations.md#settings)") from None
        ensure_logging(settings.log_level, settings.log_format)
    return PetgenApp(settings)

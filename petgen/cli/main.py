"""The `petgen` command line: thin commands that parse options and call one library function."""

from __future__ import annotations

import functools
import gc
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from petgen import __version__
from petgen.content.problems import ContentError

if TYPE_CHECKING:
    from petgen.build.files import Scanned
    from petgen.build.forked import Forked

PROGRESS_FROM = 1000  # entries; smaller builds take under a second
_finished: list[object] = []  # what a finished `petgen build` loaded (see `main`)
_process = False  # the command runs as a process of its own (`main`), not called by other code (tests)
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
CONTENT = click.option("--content", "content_dir", type=click.Path(path_type=Path), default=Path("content"),
                       show_default=True, help="Content directory (site.yml, categories.yml, moods.yml, names/).")
OUT = click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("dist"), show_default=True,
                   help="Output directory; replaced atomically.")


def _runtime_origin(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:  # nothing imported: `petgen build` begins its work before it imports the build
        return None
    from petgen.emit.redirects import parse_runtime_origin

    try:
        return parse_runtime_origin(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _signing_secret(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from petgen.emit.redirects import parse_signing_secret

    try:
        return parse_signing_secret(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


RUNTIME_ORIGIN = click.option("--runtime-origin", envvar="PETGEN_RUNTIME_ORIGIN", callback=_runtime_origin,
                              help="Where the CDN proxies what only the runtime answers (scheme://host[:port]); "
                              "written into _redirects. Default: none, a static preview. [env: PETGEN_RUNTIME_ORIGIN]")


def cache_options(f):  # type: ignore[no-untyped-def]
    """`--cache-dir DIR` and `--no-cache`, passed on as one `cache_dir` (None: parse everything)."""
    def with_cache_dir(*args, cache_dir: Path, no_cache: bool, **kwargs):  # type: ignore[no-untyped-def]
        return f(*args, cache_dir=None if no_cache else cache_dir, **kwargs)

    with_cache_dir = functools.update_wrapper(with_cache_dir, f)
    with_cache_dir = click.option("--no-cache", is_flag=True, help="Parse every entry again; read and write no cache.")(
        with_cache_dir)
    return click.option("--cache-dir", type=click.Path(path_type=Path), default=Path(".petgen/cache"),
                        envvar="PETGEN_CACHE_DIR", show_default=True,
                        help="Cache of parsed entries: unchanged files are not parsed again. "
                             "[env: PETGEN_CACHE_DIR]")(with_cache_dir)


def _http_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--base-url` must be an http(s) URL, as site.yml's base_url must: every `url`, link and `nextUrl` starts
    with it."""
    if value is None:  # nothing imported: `petgen build` begins its work before it imports the build
        return None
    from petgen.content.model import HTTP_URL

    if not HTTP_URL.match(value.rstrip("/")):
        raise click.BadParameter(f"'{value}' is not an http(s) URL (e.g. https://kosenamen.example).")
    return value


def _print_problems(exc: ContentError) -> None:
    for problem in exc.problems:
        click.echo(problem.format(), err=True)


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="petgen")
def cli() -> None:
    """Build and serve the Kosenamen API: a knowledge base of German pet names."""


@cli.command()
@CONTENT
@click.option("--strict", is_flag=True, help="Treat warnings (the content guide's soft rules) as errors.")
@cache_options
def check(content_dir: Path, strict: bool, cache_dir: Path | None) -> None:
    """Validate the content and list every problem as path:line: message."""
    from petgen.content.kb import load_knowledge_base

    try:
        kb = load_knowledge_base(content_dir, strict=strict, cache_dir=cache_dir)
    except ContentError as exc:
        _print_problems(exc)
        raise
    for problem in kb.warnings:
        click.echo(problem.format(), err=True)
    warnings = f", {len(kb.warnings)} warnings" if kb.warnings else ""
    click.echo(f"OK: {len(kb.entries)} names, {len(kb.categories)} categories, {len(kb.moods)} moods{warnings}.")


@cli.command()
@CONTENT
@OUT
@click.option("--base-url", callback=_http_url,
              help="Public base URL for every `url` and `nextUrl` (default: site.yml).")
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@RUNTIME_ORIGIN
@cache_options
def build(content_dir: Path, out_dir: Path, base_url: str | None, strict: bool, runtime_origin: str | None,
          cache_dir: Path | None) -> None:
    """Compile the content into dist/: JSON API, pages, manifest, CDN rules. With a runtime origin and
    PETGEN_NETLIFY_SIGNING_SECRET in the environment, the proxy rules are signed (docs/deploy.md)."""
    from petgen.build.files import prescan

    # The entry files' stamps and keys, looked at in a child on the other core while this process imports the build.
    scanning = prescan(content_dir, cache_dir)
    try:
        _build(content_dir, out_dir, base_url, strict, runtime_origin, cache_dir, scanning)
    finally:
        if scanning is not None:
            scanning.stop()  # if the build ended before it took the scan


def _build(content_dir: Path, out_dir: Path, base_url: str | None, strict: bool, runtime_origin: str | None,
           cache_dir: Path | None, scanning: Forked[Scanned] | None) -> None:
    from petgen.build.files import entry_names
    from petgen.build.pipeline import build as run_build
    from petgen.emit.redirects import SIGNING_SECRET_ENV, parse_signing_secret

    try:
        signed = runtime_origin is not None and parse_signing_secret(os.environ.get(SIGNING_SECRET_ENV)) is not None
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    bar = None
    if sys.stderr.isatty():  # a progress bar (the files counted only for it)
        count = len(entry_names(content_dir)) if content_dir.is_dir() else 0
        if count >= PROGRESS_FROM:
            bar = click.progressbar(length=2 * count, label="Building", file=click.get_text_stream("stderr"))
    if _process:  # the process ends after the build: the cyclic collector stays off (`collector_paused` would
        gc.disable()  # turn it on again, and its first run would scan every object the build made: 0.1 s at 10,000)
    try:
        result = run_build(content_dir, out_dir, base_url=base_url, strict=strict, cache_dir=cache_dir,
                           progress=bar.update if bar else None, runtime_origin=runtime_origin,
                           signed_proxies=signed, scanning=scanning)
    except ContentError as exc:
        _print_problems(exc)
        raise
    finally:
        if bar:
            bar.render_finish()
    for problem in result.kb.warnings:
        click.echo(problem.format(), err=True)
    click.echo(result.summary())
    if _process:
        _finished.append(result)  # kept: `main` ends the process without freeing it object by object
    if runtime_origin:
        click.echo(f"Proxy rules to {runtime_origin}: " + (f"signed with the secret in {SIGNING_SECRET_ENV}." if signed
                   else f"not signed ({SIGNING_SECRET_ENV} is not set)."))


def _server_options(f):  # type: ignore[no-untyped-def]
    options = [
        click.option("--host", default="127.0.0.1", show_default=True, envvar="PETGEN_HOST",
                     help="Interface to bind. [env: PETGEN_HOST]"),
        click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), envvar="PETGEN_PORT",
                     help="Port. [env: PETGEN_PORT]"),
        click.option("--dist", "dist_dir", type=click.Path(path_type=Path), default=Path("dist"), show_default=True,
                     envvar="PETGEN_DIST", help="The built dist/ to serve. [env: PETGEN_DIST]"),
        click.option("--content", "content_dir", type=click.Path(path_type=Path), default=Path("content"),
                     show_default=True, envvar="PETGEN_CONTENT", help="Content directory: built when dist/ is "
                     "missing or older; /api/status is degraded while it is newer. [env: PETGEN_CONTENT]"),
        click.option("--base-url", callback=_http_url, envvar="PETGEN_BASE_URL",
                     help="Base URL baked into a build made here (default: http://HOST:PORT). [env: PETGEN_BASE_URL]"),
        click.option("--state-dir", type=click.Path(path_type=Path), default=Path(".petgen"), show_default=True,
                     envvar="PETGEN_STATE_DIR", help="Directory for the runtime's state and the build cache "
                     "(<state-dir>/cache). [env: PETGEN_STATE_DIR]"),
        click.option("--rate-limit", type=click.IntRange(min=0), envvar="PETGEN_RATE_LIMIT", default=60,
                     show_default=True, help="Requests per minute per client IP; 0 turns the limiter off. "
                     "[env: PETGEN_RATE_LIMIT]"),
        click.option("--trusted-proxy", "trusted_proxies", multiple=True, envvar="PETGEN_TRUSTED_PROXIES",
                     help="CIDR of a proxy whose X-Forwarded-For is believed; repeatable. [env: PETGEN_TRUSTED_PROXIES]"),
        click.option("--allow-origin", "allowed_origins", multiple=True, envvar="PETGEN_ALLOWED_ORIGINS",
                     help="Only this origin (scheme://host[:port]) may call from a browser; repeatable. Default: any "
                     "origin (CORS *). [env: PETGEN_ALLOWED_ORIGINS, comma-separated]"),
        click.option("--redis-url", envvar="PETGEN_REDIS_URL",
                     help="Redis shared by several runtime replicas (rate limits, bot nonces, webhooks), e.g. "
                     "redis://127.0.0.1:6379/0. Default: none, each process keeps its own. [env: PETGEN_REDIS_URL]"),
        click.option("--server", type=click.Choice(["uvicorn", "granian"]), default="uvicorn", show_default=True,
                     envvar="PETGEN_SERVER", help="ASGI server: uvicorn, or granian (faster; see docs/benchmarks.md). "
                     "[env: PETGEN_SERVER]"),
        click.option("--workers", type=click.IntRange(min=1), default=1, envvar="PETGEN_WORKERS", show_default=True,
                     help="Server processes sharing the port (one per core). [env: PETGEN_WORKERS]"),
        click.option("--metrics-host", default="127.0.0.1", envvar="PETGEN_METRICS_HOST", show_default=True,
                     help="Interface of the metrics listener (--metrics-port); keep it off the public network. "
                     "[env: PETGEN_METRICS_HOST]"),
    ]
    f = _limit_options(f)  # listed after the options above
    for option in reversed(options):
        f = option(f)
    return f


def _limit_options(f):  # type: ignore[no-untyped-def]
    """Timeouts, the connection cap, logging, metrics and allowed hosts (docs/operations.md#settings), and the
    Netlify signing secret (docs/deploy.md), passed on as one `limits` dict of Settings fields."""
    from runtime.http.logchoices import LOG_FORMATS, LOG_LEVELS  # not runtime.settings: every command would import it

    names = ("header_timeout", "body_timeout", "keepalive_timeout", "graceful_timeout", "max_connections",
             "log_level", "log_format", "access_log", "metrics_port", "allowed_hosts",
             "netlify_signing_secret")

    def with_limits(*args, **kwargs):  # type: ignore[no-untyped-def]
        return f(*args, limits={name: kwargs.pop(name) for name in names}, **kwargs)

    with_limits = functools.update_wrapper(with_limits, f)
    seconds = click.FloatRange(min=0, min_open=True)
    options = [
        click.option("--header-timeout", type=seconds, default=10.0, envvar="PETGEN_HEADER_TIMEOUT", show_default=True,
                     help="Seconds for a client to send the request line and headers. [env: PETGEN_HEADER_TIMEOUT]"),
        click.option("--body-timeout", type=seconds, default=10.0, envvar="PETGEN_BODY_TIMEOUT", show_default=True,
                     help="Seconds for a client to send the request body. [env: PETGEN_BODY_TIMEOUT]"),
        click.option("--keepalive-timeout", type=seconds, default=5.0, envvar="PETGEN_KEEPALIVE_TIMEOUT",
                     show_default=True, help="Seconds an idle keep-alive connection stays open. "
                     "[env: PETGEN_KEEPALIVE_TIMEOUT]"),
        click.option("--graceful-timeout", type=seconds, default=30.0, envvar="PETGEN_GRACEFUL_TIMEOUT",
                     show_default=True, help="Seconds requests in flight get to finish after SIGTERM. "
                     "[env: PETGEN_GRACEFUL_TIMEOUT]"),
        click.option("--max-connections", type=click.IntRange(min=0), default=1000, envvar="PETGEN_MAX_CONNECTIONS",
                     show_default=True, help="Open connections served at once (uvicorn, per worker); more get a 503. "
                     "0: no cap. [env: PETGEN_MAX_CONNECTIONS]"),
        click.option("--log-level", type=click.Choice(LOG_LEVELS), default="info",
                     envvar="PETGEN_LOG_LEVEL", show_default=True, help="Least severe log level printed. "
                     "[env: PETGEN_LOG_LEVEL]"),
        click.option("--log-format", type=click.Choice(LOG_FORMATS), default="text", envvar="PETGEN_LOG_FORMAT",
                     show_default=True, help="One plain line or one JSON object per event. [env: PETGEN_LOG_FORMAT]"),
        click.option("--access-log/--no-access-log", default=True, envvar="PETGEN_ACCESS_LOG", show_default=True,
                     help="One log line per request. [env: PETGEN_ACCESS_LOG=1|0]"),
        click.option("--metrics-port", type=click.IntRange(0, 65535), default=0, envvar="PETGEN_METRICS_PORT",
                     show_default=True, help="Serve Prometheus metrics on this port of --metrics-host, apart from the "
                     "public port; 0: no metrics. [env: PETGEN_METRICS_PORT]"),
        click.option("--allow-host", "allowed_hosts", multiple=True, envvar="PETGEN_ALLOWED_HOSTS",
                     help="A public Host (host[:port]) /mcp answers besides the base URL's; repeatable. "
                     "[env: PETGEN_ALLOWED_HOSTS, comma-separated]"),
        click.option("--netlify-signing-secret", envvar="PETGEN_NETLIFY_SIGNING_SECRET", callback=_signing_secret,
                     help="The secret Netlify signs proxied requests with (X-Nf-Sign): a signed request counts against "
                     "the budget of the client Netlify names. Prefer the environment variable: a command line is "
                     "visible to other users. [env: PETGEN_NETLIFY_SIGNING_SECRET]"),
    ]
    for option in reversed(options):
        with_limits = option(with_limits)
    return with_limits


def _settings(dist_dir: Path, state_dir: Path, rate_limit: int,  # type: ignore[no-untyped-def]
              trusted_proxies: tuple[str, ...], allowed_origins: tuple[str, ...] = (), content_dir: Path | None = None,
              redis_url: str | None = None, limits: dict[str, object] | None = None):
    from runtime.settings import Settings, environment_only, parse_hosts, parse_networks, parse_origins, parse_redis_url

    try:
        networks = parse_networks(list(trusted_proxies))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--trusted-proxy") from None
    try:
        origins = parse_origins(list(allowed_origins))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--allow-origin") from None
    try:
        redis = parse_redis_url(redis_url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--redis-url") from None
    limits = dict(limits or {})
    try:
        limits["allowed_hosts"] = parse_hosts(list(limits.get("allowed_hosts", ())))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--allow-host") from None
    content = content_dir if content_dir is not None and content_dir.is_dir() else None  # /api/status compares
    try:
        from_environment = environment_only()  # PETGEN_DIST_POLL, PETGEN_WEBHOOK_*, PETGEN_REDIS_TIMEOUT_MS
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    return Settings(dist=dist_dir, content=content, state_dir=state_dir, rate_limit=rate_limit,
                    trusted_proxies=networks, allowed_origins=origins, redis_url=redis, **from_environment,
                    **limits)  # type: ignore[arg-type]


def _ensure_built(content_dir: Path, dist_dir: Path, base_url: str, cache_dir: Path | None = None) -> None:
    """Build when dist is missing, older than the content, or made for another base URL or runtime origin
    (PETGEN_RUNTIME_ORIGIN, as for `petgen build`: behind a CDN the runtime serves the dist the CDN got)."""
    from petgen.build.dist import is_stale
    from petgen.build.distpack import built_manifest
    from petgen.emit.redirects import parse_runtime_origin

    try:
        runtime_origin = parse_runtime_origin(os.environ.get("PETGEN_RUNTIME_ORIGIN"))
    except ValueError as exc:
        raise click.ClickException(f"PETGEN_RUNTIME_ORIGIN: {exc}") from None
    manifest = dist_dir / "_manifest.json"
    stale = is_stale(content_dir, dist_dir) if content_dir.is_dir() else not manifest.exists()
    if not stale:
        try:
            built = built_manifest(dist_dir)
            stale = (built.get("base_url"), built.get("runtime_origin")) != (base_url.rstrip("/"), runtime_origin)
        except (OSError, ValueError):
            stale = True
    if stale:
        from petgen.build.pipeline import build as run_build  # the whole build: only when there is one to run

        if not content_dir.is_dir():
            raise click.ClickException(f"{dist_dir} is not built and there is no content directory {content_dir}; "
                                       "pass --content DIR")
        try:
            result = run_build(content_dir, dist_dir, base_url=base_url, cache_dir=cache_dir,
                               runtime_origin=runtime_origin)
        except ContentError as exc:
            _print_problems(exc)
            raise
        click.echo(result.summary())


def _run(host: str, port: int, server: str, settings, workers: int = 1,  # type: ignore[no-untyped-def]
         metrics_host: str = "127.0.0.1", app=None) -> None:
    """Serve under `server` with `workers` processes (each loads the app from the environment that
    `settings.to_env()` writes), or in this process when one uvicorn worker will do (`app`, if given,
    is served as it is: `petgen dev` reloads it)."""
    from runtime.http.logs import configure_logging

    configure_logging(settings.log_level, settings.log_format)
    if app is None:
        _start_metrics(settings, metrics_host)
    click.echo(f"Serving {settings.dist} on {local_url(host, port)} (rate limit: {settings.rate_limit or 'off'}/min, "
               f"server: {server}, workers: {workers}"
               + (f", metrics: {local_url(metrics_host, settings.metrics_port)}/metrics" if settings.metrics_port else "")
               + ")")
    if server == "granian":
        from granian.constants import HTTPModes, Interfaces
        from granian.http import HTTP1Settings
        from granian.server import Server

        os.environ.update(settings.to_env())
        # granian's one timeout, header_read_timeout, also closes idle keep-alive connections; it runs from the
        # connect only in HTTP/1 mode (its HTTP/1-or-2 detection waits for a silent client forever). No
        # connection cap: docs/operations.md. Its logging stays off: each worker's runtime configures its own.
        Server("runtime.app:create_app", address=host, port=port, interface=Interfaces.ASGI, factory=True,
               workers=workers, log_enabled=False, log_access=False, http=HTTPModes.http1, websockets=False,
               workers_kill_timeout=max(1, round(settings.graceful_timeout)),
               http1_settings=HTTP1Settings(header_read_timeout=round(settings.header_timeout * 1000))).serve()
        return
    import uvicorn

    from runtime.http.connections import ensure_open_files

    ensure_open_files(settings)
    if workers == 1:
        from runtime.app import create_app

        uvicorn.run(app or create_app(settings), **uvicorn_options(host, port, settings))
        return
    os.environ.update(settings.to_env())
    uvicorn.run("runtime.app:create_app", factory=True, workers=workers,
                **{**uvicorn_options(host, port, settings), "http": "runtime.http.connections:EnvHttpProtocol"})


def local_url(host: str, port: int) -> str:
    """The URL of a listener: an IPv6 address in brackets (`http://[::1]:8000`)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _start_metrics(settings, host: str) -> None:  # type: ignore[no-untyped-def]
    """The Prometheus listener, before any app exists (its metrics write to the directory made here)."""
    if settings.metrics_port:
        from runtime.http.metrics import prepare, serve_metrics

        prepare(settings.state_dir)
        try:
            serve_metrics(host, settings.metrics_port)
        except OSError as exc:
            raise click.ClickException(f"cannot listen for metrics on {host}:{settings.metrics_port}: "
                                       f"{exc.strerror or exc}") from None


def uvicorn_options(host: str, port: int, settings=None) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """uvicorn settings for the runtime. Proxy headers stay off: the runtime itself decides whether to
    believe X-Forwarded-For (only from --trusted-proxy networks); uvicorn's own default would believe it
    from 127.0.0.1 and let any local client choose its rate-limit key. Logging is the runtime's
    (runtime/http/logs.py), so uvicorn configures none; timeouts and the connection cap: runtime/http/connections.py."""
    from runtime.http.connections import http_protocol, limit_concurrency
    from runtime.settings import Settings

    settings = settings or Settings()
    return {"host": host, "port": port, "log_level": settings.log_level, "log_config": None, "access_log": False,
            "server_header": False, "proxy_headers": False, "http": http_protocol(settings),
            "timeout_keep_alive": settings.keepalive_timeout, "limit_concurrency": limit_concurrency(settings),
            "timeout_graceful_shutdown": settings.graceful_timeout,
            # No WebSocket endpoint exists: an Upgrade request is answered as the plain HTTP request it also is
            # (RFC 9110 lets a server ignore Upgrade), with the runtime's status and envelope, not a bare 403.
            "ws": "none"}


@cli.command()
@_server_options
def serve(host: str, port: int, dist_dir: Path, content_dir: Path, base_url: str | None, state_dir: Path,
          rate_limit: int, trusted_proxies: tuple[str, ...], allowed_origins: tuple[str, ...], redis_url: str | None,
          server: str, workers: int, metrics_host: str, limits: dict[str, object]) -> None:
    """Serve the API and pages (building first when dist is missing or stale)."""
    settings = _settings(dist_dir, state_dir, rate_limit, trusted_proxies, allowed_origins, content_dir,  # bad options:
                         redis_url, limits)  # no build
    _ensure_built(content_dir, dist_dir, base_url or local_url(host, port), state_dir / "cache")
    _run(host, port, server, settings, workers, metrics_host)


@cli.command()
@_server_options
def dev(host: str, port: int, dist_dir: Path, content_dir: Path, base_url: str | None, state_dir: Path,
        rate_limit: int, trusted_proxies: tuple[str, ...], allowed_origins: tuple[str, ...], redis_url: str | None,
        server: str, workers: int, metrics_host: str, limits: dict[str, object]) -> None:
    """Build, serve, and rebuild on every content change; the server reloads the new dist in place."""
    from watchfiles import watch

    from petgen.build.pipeline import build as run_build
    from runtime.app import create_app

    url = base_url or local_url(host, port)
    settings = _settings(dist_dir, state_dir, rate_limit, trusted_proxies, allowed_origins, content_dir,  # bad options:
                         redis_url, limits)  # no build
    if workers != 1:
        raise click.BadParameter("petgen dev runs one process (it reloads the dist in place)", param_hint="--workers")
    _ensure_built(content_dir, dist_dir, url, state_dir / "cache")
    _start_metrics(settings, metrics_host)
    app = create_app(settings)
    stop = threading.Event()

    def rebuild_on_change() -> None:
        for changes in watch(content_dir, stop_event=stop, debounce=300):
            click.echo(f"{len(changes)} change(s) in {content_dir}; rebuilding …")
            try:
                result = run_build(content_dir, dist_dir, base_url=url, cache_dir=state_dir / "cache")
                app.runtime.reload()
            except ContentError as exc:
                _print_problems(exc)
                click.echo(f"Error: {exc.message} Still serving the previous build.", err=True)
                continue
            except Exception as exc:  # noqa: BLE001 - any failure (a bug, an OSError) must not end this
                # thread: dev would go on serving but never rebuild again, silently.
                click.echo(f"Error: the rebuild failed ({type(exc).__name__}: {exc}). Still serving the previous "
                           "build; watching for the next change.", err=True)
                continue
            click.echo(result.summary())

    watcher = threading.Thread(target=rebuild_on_change, name="petgen-watch", daemon=True)
    watcher.start()
    try:
        _run(host, port, "uvicorn", settings, app=app)
    finally:
        stop.set()


@cli.command()
@CONTENT
@click.option("--oldest", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many of the least recently reviewed entries to list.")
def stats(content_dir: Path, oldest: int) -> None:
    """Show entries per category, mood and facet, field completeness, words per field, oldest reviews and the
    most repeated phrases."""
    from petgen.content.kb import load_knowledge_base
    from petgen.content.stats import render_stats

    try:
        kb = load_knowledge_base(content_dir)
    except ContentError as exc:
        _print_problems(exc)
        raise
    click.echo(render_stats(kb, oldest))


@cli.command()
@click.argument("title")
@CONTENT
def new(title: str, content_dir: Path) -> None:
    """Create names/<slug>.md for TITLE with every field to fill in (check fails until no TODO is left)."""
    from petgen.content.scaffold import new_entry

    path = new_entry(content_dir, title)
    click.echo(f"Created {path}")


@cli.group()
def bots() -> None:
    """Register signed bots (Web Bot Auth): their keys and quotas in content/bots.yml."""


@bots.command("add")
@click.argument("name")
@click.option("--jwk", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The bot's Ed25519 public key: a JWK (or a JWKS) file.")
@click.option("--contact", required=True, help="How to reach the bot's operator: a URL or an e-mail address.")
@click.option("--use-case", required=True, help="What the bot does with the API, in a sentence.")
@click.option("--quota", type=click.IntRange(min=1), help="Requests per minute for this bot.  [default: 600]")
@CONTENT
def bots_add(name: str, jwk: Path, contact: str, use_case: str, quota: int | None, content_dir: Path) -> None:
    """Register bot NAME with its public key; the next build publishes the key and the runtime grants the quota."""
    from petgen.cli.bots import add_bot

    try:
        bot = add_bot(content_dir, name, jwk, contact, use_case, quota)
    except ContentError as exc:
        _print_problems(exc)
        raise
    click.echo(f"Registered {bot.name} (quota {bot.quota}/min, key {', '.join(bot.kids)}) in {bot.path}; "
               "run `petgen build` to publish it.")


@bots.command("keygen")
@click.argument("prefix", type=click.Path(path_type=Path), default=Path("bot"))
def bots_keygen(prefix: Path) -> None:
    """Make an Ed25519 key pair for testing: PREFIX.private.jwk (secret) and PREFIX.public.jwk (to register)."""
    from petgen.cli.bots import generate_key_pair

    private, public, kid = generate_key_pair(prefix)
    click.echo(f"Wrote {private} (the private key: keep it secret, sign with it) and {public} (the public key: "
               f"petgen bots add NAME --jwk {public} …).\nkeyid: {kid}")


from petgen.cli.webhooks import webhooks  # at the end: the group is a module of its own, registered here

cli.add_command(webhooks)


def main() -> None:
    """The `petgen` command. After a build, the process ends without freeing the loaded build object by object
    (tens of milliseconds at 10,000 entries, and nothing left to clean up: every file is written and closed)."""
    global _process
    _process = True
    try:
        cli(prog_name="petgen")
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
        if _finished and isinstance(code, int):
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        raise

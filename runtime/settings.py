"""Runtime settings: from `petgen serve` options or, for a bare ASGI server, from the environment."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from petgen.contract.security import SIGNING_SECRET_ENV, parse_signing_secret
from runtime.http.cors import normalise_origin
from runtime.http.logchoices import LOG_FORMATS, LOG_LEVELS

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(values: str | list[str] | tuple[str, ...]) -> tuple[Network, ...]:
    """Parse CIDRs (`10.0.0.0/8`, `127.0.0.1`); raise ValueError naming the bad one."""
    if isinstance(values, str):
        values = [v for v in values.replace(",", " ").split() if v]
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(f"'{value}' is not an IP address or CIDR network (e.g. 10.0.0.0/8)") from None
    return tuple(networks)


def parse_origins(values: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Parse origins (`https://app.example`, `http://localhost:5173`), comma- or space-separated or a list;
    raise ValueError naming the bad one. `*` (or nothing) means any origin: the empty tuple."""
    if isinstance(values, str):
        values = [values]
    origins = []
    for value in (v for item in values for v in item.replace(",", " ").split()):
        origin = normalise_origin(value)
        if origin == "*":
            return ()
        parts = urlsplit(origin)
        try:
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
            valid = parts.scheme in ("http", "https") and parts.hostname and not (
                parts.username or parts.password or parts.path or parts.query or parts.fragment)
        except ValueError:
            valid = False
        if not valid:
            raise ValueError(f"'{value}' is not an origin: write scheme://host[:port], e.g. https://app.example")
        origins.append(origin)
    return tuple(origins)


def parse_hosts(values: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Parse public host names (`api.example`, `api.example:8443`, `[::1]:8000`), comma- or space-separated
    or a list; lowercased; raise ValueError naming the bad one."""
    if isinstance(values, str):
        values = [values]
    hosts = []
    for value in (v for item in values for v in item.replace(",", " ").split()):
        parts = urlsplit(f"//{value}")
        try:
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
            valid = bool(parts.hostname) and not (parts.username or parts.password or parts.path or parts.query
                                                  or parts.fragment)
        except ValueError:
            valid = False
        if not valid:
            raise ValueError(f"'{value}' is not a host: write host or host:port, e.g. api.example.org")
        hosts.append(value.lower())
    return tuple(hosts)


def parse_redis_url(value: str | None) -> str | None:
    """`redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS) or `unix:///path`; empty: none."""
    if not value or not value.strip():
        return None
    value = value.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("redis", "rediss", "unix") or not (parts.hostname or parts.path):
        raise ValueError(f"'{value}' is not a Redis URL (e.g. redis://127.0.0.1:6379/0)")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ValueError(f"'{value}' has an invalid port") from None
    return value


@dataclass(frozen=True)
class Settings:
    dist: Path = Path("dist")
    content: Path | None = None  # when set, /api/status reports a dist older than this content as degraded
    state_dir: Path = Path(".petgen")
    rate_limit: int = 60  # requests per rolling window per client IP; 0 turns the limiter off
    rate_window: int = 60  # seconds
    trusted_proxies: tuple[Network, ...] = field(default_factory=tuple)
    max_body: int = 64 * 1024  # bytes
    allowed_origins: tuple[str, ...] = ()  # origins a browser may call from; empty: any (CORS `*`)
    allowed_hosts: tuple[str, ...] = ()  # Host headers /mcp answers besides the base URL's and the runtime origin's
    redis_url: str | None = None  # the shared store of several replicas (rate limits, bot nonces, webhooks)
    # The secret Netlify signs proxied requests with (PETGEN_NETLIFY_SIGNING_SECRET; runtime/clients/netlify.py): with it, a
    # signed request is keyed by the client address Netlify sends. Kept out of repr, so it is never logged.
    netlify_signing_secret: str | None = field(default=None, repr=False)
    # Slow and idle clients, and logging (docs/operations.md; env: PETGEN_HEADER_TIMEOUT, PETGEN_BODY_TIMEOUT,
    # PETGEN_KEEPALIVE_TIMEOUT, PETGEN_MAX_CONNECTIONS, PETGEN_LOG_LEVEL). Timeouts in seconds; connections per process.
    header_timeout: float = 10.0  # from connect (or a keep-alive request's first byte) to the end of the headers
    body_timeout: float = 10.0  # from the end of the headers to the end of the body
    keepalive_timeout: float = 5.0  # an idle keep-alive connection is closed after this
    max_connections: int = 1000  # more get a fast 503; 0 turns the cap off
    log_level: str = "info"
    log_format: str = "text"  # or "json": one object per line
    access_log: bool = True  # one line per request (runtime/http/observe.py)
    metrics_port: int = 0  # the Prometheus listener's port (petgen serve runs it); 0: no metrics
    graceful_timeout: float = 30.0  # seconds in-flight requests get to finish after SIGTERM
    redis_timeout: float = 0.01  # seconds Redis may take to answer before the runtime counts in its own process
    dist_poll: float = 2.0  # seconds between looks at dist/_manifest.json for a new build; 0: SIGHUP only
    static_cache: int = 16 * 1024 * 1024  # bytes of small static files kept in memory (runtime/builds/files.py)
    webhook_retry_scale: float = 1.0  # multiplies the webhook retry delays (0.001 for tests and staging)
    webhook_allow_loopback: bool = False  # development only: deliveries to loopback, plain http allowed

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Read every PETGEN_* variable of docs/operations.md#settings (those of `environment_only` included);
        `to_env` writes them back."""
        env = os.environ if environ is None else environ
        defaults = cls()
        return cls(
            dist=Path(env.get("PETGEN_DIST", defaults.dist)),
            content=Path(env["PETGEN_CONTENT"]) if env.get("PETGEN_CONTENT") else None,
            state_dir=Path(env.get("PETGEN_STATE_DIR", defaults.state_dir)),
            rate_limit=_int(env, "PETGEN_RATE_LIMIT", defaults.rate_limit),
            trusted_proxies=parse_networks(env.get("PETGEN_TRUSTED_PROXIES", "")),
            max_body=_int(env, "PETGEN_MAX_BODY", defaults.max_body),
            allowed_origins=parse_origins(env.get("PETGEN_ALLOWED_ORIGINS", "")),
            redis_url=parse_redis_url(env.get("PETGEN_REDIS_URL", "")),
            netlify_signing_secret=parse_signing_secret(env.get(SIGNING_SECRET_ENV)),
            header_timeout=_seconds(env, "PETGEN_HEADER_TIMEOUT", defaults.header_timeout),
            body_timeout=_seconds(env, "PETGEN_BODY_TIMEOUT", defaults.body_timeout),
            keepalive_timeout=_seconds(env, "PETGEN_KEEPALIVE_TIMEOUT", defaults.keepalive_timeout),
            max_connections=_int(env, "PETGEN_MAX_CONNECTIONS", defaults.max_connections),
            log_level=_choice(env, "PETGEN_LOG_LEVEL", LOG_LEVELS, defaults.log_level),
            allowed_hosts=parse_hosts(env.get("PETGEN_ALLOWED_HOSTS", "")),
            log_format=_choice(env, "PETGEN_LOG_FORMAT", LOG_FORMATS, defaults.log_format),
            access_log=_flag(env, "PETGEN_ACCESS_LOG", defaults.access_log),
            metrics_port=_int(env, "PETGEN_METRICS_PORT", defaults.metrics_port),
            graceful_timeout=_seconds(env, "PETGEN_GRACEFUL_TIMEOUT", defaults.graceful_timeout),
            **environment_only(env),
        )

    def to_env(self) -> dict[str, str]:
        """The environment `from_env` reads back as these settings: what `petgen serve` hands its worker
        processes."""
        return {
            "PETGEN_DIST": str(self.dist), "PETGEN_CONTENT": str(self.content or ""),
            "PETGEN_STATE_DIR": str(self.state_dir), "PETGEN_RATE_LIMIT": str(self.rate_limit),
            "PETGEN_TRUSTED_PROXIES": ",".join(str(n) for n in self.trusted_proxies),
            "PETGEN_MAX_BODY": str(self.max_body), "PETGEN_ALLOWED_ORIGINS": ",".join(self.allowed_origins) or "*",
            "PETGEN_ALLOWED_HOSTS": ",".join(self.allowed_hosts), "PETGEN_REDIS_URL": self.redis_url or "",
            "PETGEN_HEADER_TIMEOUT": repr(self.header_timeout), "PETGEN_BODY_TIMEOUT": repr(self.body_timeout),
            "PETGEN_KEEPALIVE_TIMEOUT": repr(self.keepalive_timeout),
            "PETGEN_MAX_CONNECTIONS": str(self.max_connections), "PETGEN_LOG_LEVEL": self.log_level,
            "PETGEN_LOG_FORMAT": self.log_format, "PETGEN_ACCESS_LOG": "1" if self.access_log else "0",
            "PETGEN_METRICS_PORT": str(self.metrics_port), "PETGEN_GRACEFUL_TIMEOUT": repr(self.graceful_timeout),
            "PETGEN_DIST_POLL": repr(self.dist_poll), "PETGEN_WEBHOOK_RETRY_SCALE": repr(self.webhook_retry_scale),
            "PETGEN_WEBHOOK_ALLOW_LOOPBACK": "1" if self.webhook_allow_loopback else "0",
            "PETGEN_REDIS_TIMEOUT_MS": str(round(self.redis_timeout * 1000)),
            "PETGEN_STATIC_CACHE_MB": repr(self.static_cache / (1024 * 1024)),
            "PETGEN_NETLIFY_SIGNING_SECRET": self.netlify_signing_secret or "",
        }


def environment_only(environ: os._Environ[str] | dict[str, str] | None = None) -> dict[str, Any]:
    """Settings read from the environment only, under `petgen serve` too: PETGEN_DIST_POLL,
    PETGEN_WEBHOOK_RETRY_SCALE, PETGEN_WEBHOOK_ALLOW_LOOPBACK, PETGEN_REDIS_TIMEOUT_MS, PETGEN_STATIC_CACHE_MB."""
    env = os.environ if environ is None else environ
    scale = _float(env, "PETGEN_WEBHOOK_RETRY_SCALE", 1.0)
    if scale <= 0:
        raise ValueError("PETGEN_WEBHOOK_RETRY_SCALE must be greater than 0 (1 is the real schedule)")
    return {"dist_poll": _float(env, "PETGEN_DIST_POLL", 2.0), "webhook_retry_scale": scale,
            "webhook_allow_loopback": _flag(env, "PETGEN_WEBHOOK_ALLOW_LOOPBACK", False),
            "redis_timeout": _milliseconds(env, "PETGEN_REDIS_TIMEOUT_MS", Settings.redis_timeout),
            "static_cache": round(_float(env, "PETGEN_STATIC_CACHE_MB", Settings.static_cache / (1024 * 1024))
                                  * 1024 * 1024)}


def _float(env: os._Environ[str] | dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, not '{raw}'") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{name} must be a finite number, not negative")
    return value


def _int(env: os._Environ[str] | dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not '{raw}'") from None
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


def _seconds(env: os._Environ[str] | dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, not '{raw}'") from None
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be more than 0 seconds")
    return value


def _choice(env: os._Environ[str] | dict[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    value = (env.get(name) or default).strip().lower()
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not '{value}'")
    return value


def _flag(env: os._Environ[str] | dict[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if value == "":
        return default
    if value not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
        raise ValueError(f"{name} must be 1 or 0, not '{value}'")
    return value in ("1", "true", "yes", "on")


def _milliseconds(env: os._Environ[str] | dict[str, str], name: str, default: float) -> float:
    """A duration given in whole milliseconds (at least 1), as seconds."""
    value = _int(env, name, round(default * 1000))
    if value < 1:
        raise ValueError(f"{name} must be at least 1 (milliseconds)")
    return value / 1000

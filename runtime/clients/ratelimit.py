"""Per-client rate limiting as pure ASGI middleware: a sliding-window counter, O(1) per request and per key.

Each client key holds three integers: the number of the current fixed window (`floor(time / window)`)
and its request count, and the previous window's count. A request is allowed while
`floor(previous × (1 − elapsed / window)) + current < limit`: the previous window's requests count
in proportion to how much of it still lies within the last `window` seconds (the method Cloudflare
and the `limits` library use). Windows are aligned to the wall clock, so every replica agrees on
them; the key count is bounded (the least recently renewed key is forgotten first).

Every response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (seconds
until the current window resets, 0..window) and the IETF `RateLimit-Policy` / `RateLimit` fields
(draft-ietf-httpapi-ratelimit-headers, `t` = the same seconds); over budget, 429 `rate_limited`
with `Retry-After` (seconds until a request will be allowed again).

Budgets: anonymous clients by IP (`"per-ip"`, the `limit` setting; behind Netlify, the client address of a
request Netlify signed, runtime/clients/netlify.py); a bot whose Web Bot Auth signature
verifies (runtime/clients/botauth.py) by its name, with its registered quota (`"bot"`). The counts live in this
process (`WindowCounter`) or, with a Redis URL, in Redis (runtime/clients/sharedcounter.py), where every replica
counts the same budget, with this process's counter as the fallback while Redis is away.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from runtime.http.errors import send_error
from runtime.settings import Network

POLICY = "per-ip"
BOT_POLICY = "bot"
BOT_HEADER = b"x-petname-bot"  # why a signature did (`verified`) or did not count; see runtime/clients/botauth.py
MAX_KEYS = 100_000  # ≈ 25 MB of counters at most


class Decision(NamedTuple):  # a tuple: made for every request, at a third of a frozen dataclass' cost
    allowed: bool
    remaining: int
    reset: int  # seconds until the current window resets
    retry_after: int  # seconds until a request is allowed again (0 when allowed)


def decide(limit: int, window: int, previous: int, current: int, elapsed: float, allowed: bool) -> Decision:
    """The decision for a request, from the counts after it (`current` includes it when allowed) and the
    seconds `elapsed` in the current window. Shared by the in-process and the Redis counter."""
    used = int(previous * (1 - elapsed / window)) + current
    reset = math.ceil(window - elapsed)
    retry = 0 if allowed else _retry_after(limit, window, previous, current, elapsed)
    return Decision(allowed, max(0, limit - used), reset, retry)


def _retry_after(limit: int, window: int, previous: int, current: int, elapsed: float) -> int:
    """Whole seconds after which `floor(previous × weight) + current < limit` holds again (strictly)."""
    if current >= limit:  # not before the next window, when `current` becomes `previous`
        wait = window - elapsed + window * (1 - limit / current)
    else:  # when enough of the previous window has slid out
        wait = window * (1 - (limit - current) / previous) - elapsed
    return max(1, math.floor(wait) + 1)


class WindowCounter:
    """In-process store (one process; replicas need a shared store)."""

    def __init__(self, limit: int, window: int, clock: Callable[[], float] = time.time,
                 max_keys: int = MAX_KEYS) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.max_keys = max_keys
        self.counts: dict[str, tuple[int, int, int]] = {}  # key -> (window number, previous count, current count)

    def hit(self, key: str, limit: int | None = None) -> Decision:
        """Count a request for `key` if it is allowed (`limit`: this key's budget, by default the counter's)."""
        return Decision(*self.count(key, self.limit if limit is None else limit))

    def count(self, key: str, limit: int, take: bool = True) -> tuple[bool, int, int, int]:
        """`hit` as a plain tuple (allowed, remaining, reset, retry_after): what the middleware calls. With `take`
        off, what a request would be told, without counting it (a CORS preflight)."""
        now = self.clock()
        number = int(now // self.window)
        elapsed = now - number * self.window
        entry = self.counts.get(key)
        if entry is None or entry[0] < number - 1:
            previous, current = 0, 0
        elif entry[0] == number - 1:
            previous, current = entry[2], 0
        else:
            previous, current = entry[1], entry[2]
        used = int(previous * (1 - elapsed / self.window)) + current
        allowed = used < limit
        if not take:
            return decide(limit, self.window, previous, current, elapsed, allowed)
        if allowed:
            current += 1
        if entry is None or entry[0] != number:
            # (Re)insert at the end, so the dict's order is the order keys were last renewed in.
            self.counts.pop(key, None)
            if len(self.counts) >= self.max_keys:
                del self.counts[next(iter(self.counts))]
        self.counts[key] = (number, previous, current)
        if allowed:  # the common case, inline (this runs for every request): what `decide` would say
            return True, limit - used - 1, math.ceil(self.window - elapsed), 0
        return decide(limit, self.window, previous, current, elapsed, False)


def client_ip(scope: dict[str, Any], trusted: tuple[Network, ...]) -> str:
    """The client's rate-limit key: the socket peer or, when the peer is a trusted proxy, the nearest
    untrusted `X-Forwarded-For` hop. Only a syntactically valid IP counts; anything else in the header
    falls back to the peer. IPv6 clients are keyed by their /64, the block one subscriber gets."""
    client = scope.get("client")
    peer = client[0] if client else "unknown"
    if trusted and is_trusted(peer, trusted):
        forwarded = b",".join(v for k, v in scope["headers"] if k == b"x-forwarded-for").decode("latin-1")
        for hop in reversed(forwarded.split(",")):
            try:
                ip = ipaddress.ip_address(hop.strip())
            except ValueError:
                break  # junk from here on: believe no further hop
            if not any(ip in net for net in trusted):
                return _key(ip)
    if ":" in peer:
        try:
            return _key(ipaddress.ip_address(peer))
        except ValueError:
            pass
    return peer


def _key(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if ip.version == 6:
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def is_trusted(address: str, trusted: tuple[Network, ...]) -> bool:
    """Whether the peer `address` is in a --trusted-proxy network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in trusted)


RATE_KEY = "petgen.rate_key"  # the scope entry naming the budget a request counted against


class CountStore(Protocol):
    async def hit(self, key: str, limit: int, take: bool = True) -> Decision: ...  # runtime/clients/sharedcounter.py


class BotIdentity(Protocol):
    """What the limiter needs from bot verification (runtime/clients/botauth.py)."""

    def signed(self, scope: dict[str, Any]) -> bool: ...

    async def verify(self, scope: dict[str, Any]) -> tuple[Bot | None, bytes]: ...


class ProxySignature(Protocol):
    """What the limiter needs from a CDN's signed proxy (runtime/clients/netlify.py)."""

    def client_address(self, scope: dict[str, Any]) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None: ...


@dataclass(frozen=True)
class Bot:
    name: str
    quota: int  # requests per window


class RateLimitMiddleware:
    def __init__(self, app: Callable[..., Any], *, limit: int, window: int = 60,
                 trusted_proxies: tuple[Network, ...] = (), clock: Callable[[], float] = time.time,
                 max_keys: int = MAX_KEYS, shared: CountStore | None = None, bots: BotIdentity | None = None,
                 signed_proxy: ProxySignature | None = None) -> None:
        self.app = app
        self.limit = limit
        self.window = window
        self.trusted = trusted_proxies
        self.store = WindowCounter(limit, window, clock, max_keys)
        self.shared = shared  # the Redis counter, which falls back to `store`
        self.bots = bots
        self.signed_proxy = signed_proxy
        self._policies: dict[tuple[str, int], tuple[bytes, bytes, bytes]] = {}
        self.ip_policy = self._policy(POLICY, limit)

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def _policy(self, name: str, limit: int) -> tuple[bytes, bytes, bytes]:
        """(X-RateLimit-Limit, RateLimit-Policy, the RateLimit prefix) of a budget, encoded once."""
        found = self._policies.get((name, limit))
        if found is None:
            if len(self._policies) > 1000:  # bounded: quotas come from the registry, which is small
                self._policies.clear()
            found = self._policies[name, limit] = (str(limit).encode(), f'"{name}";q={limit};w={self.window}'.encode(),
                                                   f'"{name}";r='.encode())
        return found

    async def evaluate(self, scope: dict[str, Any], take: bool = True) -> tuple[bool, list[tuple[bytes, bytes]]]:
        """Count this request against its budget; return (allowed, the rate-limit headers for its response).
        With `take` off, the headers of the client's budget as it stands, without counting (`preflight_headers`).

        A verified bot counts against its own quota; anyone else, a bot whose signature fails included,
        against the per-IP budget (`X-Petname-Bot` then says why the signature did not count)."""
        bot: Bot | None = None
        status = b""
        if take and self.bots is not None and self.bots.signed(scope):
            bot, status = await self.bots.verify(scope)
        if bot is not None:
            key, limit, policy = f"bot:{bot.name}", bot.quota, self._policy(BOT_POLICY, bot.quota)
        else:
            key, limit, policy = self.client_key(scope), self.limit, self.ip_policy
        scope[RATE_KEY] = key  # for the access log (runtime/http/observe.py)
        if self.shared is None:
            allowed, left, resets, retry = self.store.count(key, limit, take)
        else:
            allowed, left, resets, retry = await self.shared.hit(key, limit, take)
        remaining, reset = str(left).encode(), str(resets).encode()
        headers = [
            (b"x-ratelimit-limit", policy[0]),
            (b"x-ratelimit-remaining", remaining),
            (b"x-ratelimit-reset", reset),
            (b"ratelimit-policy", policy[1]),
            (b"ratelimit", policy[2] + remaining + b";t=" + reset),
        ]
        if not allowed:
            headers.append((b"retry-after", str(retry).encode()))
        if status:
            headers.append((BOT_HEADER, status))
        return allowed, headers

    async def preflight_headers(self, scope: dict[str, Any]) -> list[tuple[bytes, bytes]]:
        """The rate-limit headers of a CORS preflight: the client's budget, which a preflight does not use."""
        if self.limit <= 0:
            return []
        _, headers = await self.evaluate(scope, take=False)
        return headers

    def client_key(self, scope: dict[str, Any]) -> str:
        """The per-IP budget's key: the client a signed proxy vouches for, else `client_ip`."""
        if self.signed_proxy is not None:
            address = self.signed_proxy.client_address(scope)
            if address is not None:
                return _key(address)
        return client_ip(scope, self.trusted)

    async def reject(self, send: Callable[..., Any], headers: list[tuple[bytes, bytes]]) -> None:
        """Answer 429 with the headers from `evaluate`."""
        found = dict(headers)
        retry, limit = found[b"retry-after"].decode(), found[b"x-ratelimit-limit"].decode()
        whose = "for this bot" if found[b"ratelimit-policy"].startswith(f'"{BOT_POLICY}"'.encode()) else "per client"
        await send_error(send, 429, f"Too many requests: the limit is {limit} per {self.window} seconds {whose}.",
                         f"retry after {retry} seconds", headers)

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or self.limit <= 0:
            await self.app(scope, receive, send)
            return
        allowed, headers = await self.evaluate(scope)
        if not allowed:
            await self.reject(send, headers)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], *headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)

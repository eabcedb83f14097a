"""Where deliveries may go: the SSRF guard, at subscribe time and on every connection.

A subscriber chooses the URL, so without a guard a subscription could make the runtime POST into its
own network (a database on 10.0.0.5, the cloud metadata service on 169.254.169.254, an admin port on
127.0.0.1). The rules:

- The published form (`SUBSCRIBER_URL` in petgen/contract/events.py, the pattern in the OpenAPI document):
  `https://`, a host name (no IP address), an optional port, no credentials, no fragment. The
  development setting (`PETGEN_WEBHOOK_ALLOW_LOOPBACK=1`) adds `http://` and `https://` to
  `localhost` and loopback addresses, and nothing else.
- Every address the host name resolves to must be public: loopback (unless the development setting is
  on), private, link-local, multicast, unspecified, shared (100.64.0.0/10), reserved and cloud
  metadata addresses are refused, including IPv4 addresses wrapped in IPv6 (`::ffff:10.0.0.1`,
  NAT64 `64:ff9b::…`, 6to4 `2002:…`).
- The check and the connection use the same resolution: `GuardedBackend` resolves the name, checks
  every address and connects to a checked address, so a DNS answer that changes between a check and
  a connect (DNS rebinding) has nothing to slip through. TLS still verifies the certificate against the
  host name. Redirects are never followed (httpcore does not follow them; a 3xx is a failed attempt).
"""

from __future__ import annotations

import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

import anyio
import httpcore

from petgen.contract.events import MAX_URL, SUBSCRIBER_URL

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]

METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean …
    "169.254.170.2",  # AWS ECS task metadata
    "100.100.100.200",  # Alibaba Cloud
    "fd00:ec2::254",  # AWS over IPv6
))
NAT64 = ipaddress.ip_network("64:ff9b::/96")
SHARED = ipaddress.ip_network("100.64.0.0/10")


class Refused(Exception):
    """A destination deliveries may not go to; the message says why, for the subscriber or the operator."""


class Unresolved(Exception):
    """The host name does not resolve (now): a failed attempt that is retried, not a refusal."""


@dataclass(frozen=True)
class Policy:
    allow_loopback: bool = False  # development only: loopback addresses, and plain http to them


def check_url(url: str, policy: Policy) -> SplitResult:
    """The URL's parts if its form is acceptable; Refused (saying what to change) if not.

    The form is the published pattern (petgen/contract/events.py, also in the OpenAPI document): https and a
    host name. The development setting adds loopback: http or https to `localhost` or a loopback address.
    """
    if len(url) > MAX_URL:
        raise Refused(f"the URL is longer than {MAX_URL} characters")
    if re.fullmatch(SUBSCRIBER_URL, url):
        return urlsplit(url)
    parts = _loopback_url(url) if policy.allow_loopback else None
    if parts is not None:
        return parts
    raise Refused(_what_is_wrong(url))


def _loopback_url(url: str) -> SplitResult | None:
    """The parts of a development URL (http(s)://localhost or a loopback address, a port, a path), else None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number or out of range
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    literal = _literal(host)
    loopback = host == "localhost" or (literal is not None and _unwrapped(literal).is_loopback)
    if parts.scheme in ("http", "https") and loopback and parts.username is None and not parts.fragment and \
            all(32 < ord(c) < 127 for c in url):
        return parts
    return None


def _what_is_wrong(url: str) -> str:
    """Why `url` does not have the published form, as precisely as can be said."""
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return "the URL contains spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "the URL's port is not a number from 1 to 65535"
    if parts.scheme.lower() == "http":
        return "the URL must use https:// (plain http is not accepted)"
    if parts.scheme != "https":
        return "the URL must start with https://"
    if parts.username is not None or parts.password is not None:
        return "the URL must not contain credentials (user:password@); deliveries are signed instead"
    if parts.fragment or "#" in url:
        return "the URL must not have a #fragment"
    if port == 0:
        return "the URL's port is not a number from 1 to 65535"
    host = parts.hostname or ""
    literal = _literal(host)
    if literal is not None:
        problem = address_problem(literal, Policy())
        return f"{host} is {problem}; deliveries go to public addresses only" if problem else \
            "the URL needs a host name, not an IP address"
    if not host or not all(ord(c) < 128 for c in host):
        return "the URL needs a host name in ASCII (an internationalised name in its xn-- form)"
    if "." not in host.rstrip("."):
        return f"{host} is not a public host name (it has no domain)"
    return "the URL must be https://host[:port][/path][?query] with URL characters only (percent-encode others)"


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _unwrapped(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), so it is judged as that address."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if ip.sixtofour is not None:
            return ip.sixtofour
    return ip


def address_problem(address: IPAddress, policy: Policy, *, plain_http: bool = False) -> str | None:
    """Why deliveries may not go to this address (`a private address`), or None if they may."""
    ip = _unwrapped(address)
    if ip.is_loopback:
        return None if policy.allow_loopback else "a loopback address"
    if plain_http:
        return "not a loopback address (plain http is for loopback only)"
    if ip in METADATA or address in METADATA:
        return "a cloud metadata address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_private:
        return "a private address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in SHARED:
        return "a shared (carrier-grade NAT) address"
    if ip.is_reserved or not ip.is_global:
        return "not a publicly routable address"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of `host` from the system resolver, in its order, each once."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def checked_addresses(host: str, port: int, policy: Policy, *, plain_http: bool,
                            resolver: Resolver = system_resolver) -> list[str]:
    """Resolve `host` and return its addresses if every one may receive deliveries; Refused if any may not.

    Every address is checked, not just the first: a name that resolves to a public and a private
    address is refused, since a connection could go to either."""
    try:
        addresses = await resolver(host, port)
    except (OSError, UnicodeError) as exc:
        raise Unresolved(f"{host} could not be resolved ({exc})") from None
    if not addresses:
        raise Unresolved(f"{host} has no addresses")
    for text in addresses:
        problem = address_problem(ipaddress.ip_address(text.split("%")[0]), policy, plain_http=plain_http)
        if problem:
            raise Refused(f"{host} resolves to {text}, {problem}; deliveries go to public addresses only")
    return addresses


async def check_destination(url: str, policy: Policy, *, resolver: Resolver = system_resolver,
                            timeout: float = 3.0) -> None:
    """Refused unless `url` may receive deliveries, checked when a subscription is made.

    A name that does not resolve (yet) is accepted: its deliveries fail and are retried until it does,
    and every connection is checked again anyway."""
    parts = check_url(url, policy)
    host = parts.hostname or ""
    if _literal(host) is not None:
        return
    plain_http = parts.scheme.lower() == "http"
    with anyio.move_on_after(timeout):
        try:
            await checked_addresses(host, parts.port or (80 if plain_http else 443), policy, plain_http=plain_http,
                                    resolver=resolver)
        except Unresolved:
            pass


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the guard in `connect_tcp`: resolve, check, connect to what was checked."""

    def __init__(self, policy: Policy, *, plain_http: bool, resolver: Resolver = system_resolver) -> None:
        self.policy = policy
        self.plain_http = plain_http
        self.resolver = resolver
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        addresses = await checked_addresses(host, port, self.policy, plain_http=self.plain_http,
                                            resolver=self.resolver)
        failure: Exception | None = None
        for address in addresses:  # the first that answers, as a browser would
            try:
                return await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                    socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise Refused("deliveries go over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def connection_pool(policy: Policy, *, plain_http: bool, resolver: Resolver = system_resolver,
                    max_connections: int = 64) -> httpcore.AsyncConnectionPool:
    """A pool whose every new connection passes the guard. Pooled connections stay with the address they
    were checked for; `retries=0`: a failed attempt is the schedule's business."""
    return httpcore.AsyncConnectionPool(
        ssl_context=ssl.create_default_context(), max_connections=max_connections, keepalive_expiry=30.0,
        retries=0, network_backend=GuardedBackend(policy, plain_http=plain_http, resolver=resolver))

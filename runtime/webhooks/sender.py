"""One delivery attempt: a signed POST through the guarded connection pool, within 10 seconds.

Any 2xx is delivered. Everything else is a failed attempt with a reason for the operator: another
status (a 3xx too: redirects are not followed), no connection, a refused destination, or no answer
within the timeout, which covers everything from resolving the name to the end of the response. At
most `max_response` bytes of the answer are read; the rest is not waited for.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

import anyio
import httpcore

from runtime.webhooks.destinations import (
    Policy,
    Refused,
    Resolver,
    Unresolved,
    check_url,
    connection_pool,
    system_resolver,
)
from runtime.webhooks.model import Attempt, Event
from runtime.webhooks.signing import signature_headers

TIMEOUT = 10.0  # seconds per attempt
MAX_RESPONSE = 64 * 1024  # bytes of a subscriber's answer that are read


def user_agent(service: str, version: str, base_url: str) -> str:
    """`Kosenamen-API-Webhooks/1.0.0 (+https://…)`: names the service, as subscribers' logs show it."""
    product = re.sub(r"[^A-Za-z0-9]+", "-", service).strip("-") or "petgen"
    return f"{product}-Webhooks/{version}" + (f" (+{base_url})" if base_url else "")


class Sender:
    """Delivers events; keeps a connection pool per scheme for the life of the worker (use `async with`)."""

    def __init__(self, policy: Policy, *, agent: str = "petgen-Webhooks", timeout: float = TIMEOUT,
                 max_response: int = MAX_RESPONSE, resolver: Resolver = system_resolver,
                 clock: Callable[[], float] = time.time) -> None:
        self.policy = policy
        self.agent = agent
        self.timeout = timeout
        self.max_response = max_response
        self.clock = clock
        self.pools = {"https": connection_pool(policy, plain_http=False, resolver=resolver)}
        if policy.allow_loopback:
            self.pools["http"] = connection_pool(policy, plain_http=True, resolver=resolver)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        for pool in self.pools.values():
            await pool.aclose()

    async def send(self, url: str, event: Event, secrets: list[str], attempt: int) -> Attempt:
        """POST the event to `url`, signed with `secrets`, as attempt number `attempt` (1, 2, …)."""
        started = time.perf_counter()
        try:
            parts = check_url(url, self.policy)  # the rules may have changed since the subscription was made
        except Refused as exc:
            return Attempt(False, error=f"refused: {exc}")
        timestamp = int(self.clock())
        headers = [(b"Host", parts.netloc.encode("ascii")), (b"Content-Type", b"application/json"),
                   (b"Content-Length", str(len(event.body)).encode()), (b"User-Agent", self.agent.encode()),
                   (b"X-Petname-Event-Id", event.id.encode()), (b"X-Petname-Event-Type", event.type.encode()),
                   (b"X-Petname-Attempt", str(attempt).encode()),
                   *((name.encode(), value.encode()) for name, value in
                     signature_headers(event.id, event.body, secrets, timestamp).items())]
        try:
            with anyio.fail_after(self.timeout):
                status, location = await self._post(self.pools[parts.scheme.lower()], url, headers, event.body)
        except TimeoutError:
            return Attempt(False, error=f"no answer within {self.timeout:g} s", ms=_ms(started))
        except Refused as exc:
            return Attempt(False, error=f"refused: {exc}", ms=_ms(started))
        except Unresolved as exc:
            return Attempt(False, error=str(exc), ms=_ms(started))
        except httpcore.ConnectError as exc:
            return Attempt(False, error=f"could not connect: {exc or 'connection refused'}", ms=_ms(started))
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException) as exc:
            return Attempt(False, error=f"{type(exc).__name__}: {exc}", ms=_ms(started))
        ms = _ms(started)
        if 200 <= status < 300:
            return Attempt(True, status, ms=ms)
        if 300 <= status < 400:
            return Attempt(False, status, f"redirects are not followed (Location: {location[:200]})", ms)
        return Attempt(False, status, None, ms)

    async def _post(self, pool: httpcore.AsyncConnectionPool, url: str, headers: list[tuple[bytes, bytes]],
                    body: bytes) -> tuple[int, str]:
        async with pool.stream("POST", url, headers=headers, content=body) as response:
            received = 0
            async for chunk in response.aiter_stream():
                received += len(chunk)
                if received >= self.max_response:
                    break  # the rest is not read; the connection is closed instead of reused
            location = next((v.decode("latin-1") for k, v in response.headers if k.lower() == b"location"), "")
            return response.status, location


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


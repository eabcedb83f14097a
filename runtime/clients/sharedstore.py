"""The store that several runtime replicas share (Redis), for rate limits and bot nonces: fast, or not at all.

Every call has a deadline of a few milliseconds. When Redis refuses, errs or misses the deadline, the
caller gets `StoreUnavailable` and counts in its own process instead; the store logs that once, fails the
`limits` check of /api/status (`degraded`), and does not call Redis again for `retry_every` seconds, so a
dead Redis costs requests nothing. After that one request at a time probes it; the first success
recovers the check and logs that Redis is back. No request ever fails because of the store.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from runtime.health import Health

if TYPE_CHECKING:
    import redis.asyncio as redis

log = logging.getLogger("petgen.runtime")

T = TypeVar("T")
CHECK = "limits"  # the /api/status check this store reports into
MAX_CONNECTIONS = 64  # per process; a round trip holds one for about 0.1 ms


class StoreUnavailable(Exception):
    """Redis did not answer in time (or at all): use the per-process fallback."""


def where(url: str) -> str:
    """The URL without credentials, for logs."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


class SharedStore:
    def __init__(self, url: str, *, health: Health, timeout: float = 0.01, retry_every: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self.health = health
        self.timeout = timeout
        self.retry_every = retry_every
        self.clock = clock
        # redis is imported by the first store made, not with this module: a runtime without a Redis URL
        # never loads it (it is about 0.1 s of the runtime's start).
        from redis.exceptions import RedisError

        self._errors = (RedisError, OSError, TimeoutError)
        self._client: redis.Redis | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._down: str | None = None  # why Redis is not used right now
        self._next_try = 0.0
        self._probing = False
        # Listed as `ok` while Redis answers; `fail`/`recover` below override it at once (a probe's result
        # would be cached for the health's interval).
        health.add_probe(CHECK, lambda: None)

    @property
    def available(self) -> bool:
        return self._down is None

    def _redis(self) -> redis.Redis:
        """The client of the running event loop (a client's connections belong to the loop that opened them)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            import redis.asyncio as redis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            # No retries: a second attempt would only spend the deadline again; the fallback is the retry.
            # A request waits for a free connection (within its deadline) rather than fail when all are busy.
            pool = redis.BlockingConnectionPool.from_url(
                self.url, max_connections=MAX_CONNECTIONS, timeout=None, socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout, retry=Retry(NoBackoff(), 0), health_check_interval=0)
            self._client = redis.Redis.from_pool(pool)
            self._loop = loop
        return self._client

    async def run(self, operation: Callable[[redis.Redis], Awaitable[T]]) -> T:
        """`operation(client)` within the deadline, or StoreUnavailable."""
        if self._down is not None:
            if self._probing or self.clock() < self._next_try:
                raise StoreUnavailable(self._down)
            self._probing = True  # this request probes; the others keep to the fallback meanwhile
        try:
            async with asyncio.timeout(self.timeout):
                result = await operation(self._redis())
        except self._errors as exc:
            self._failed(exc)
            raise StoreUnavailable(self._down) from exc
        finally:
            self._probing = False
        if self._down is not None:
            self._down = None
            self.health.recover(CHECK)
            log.warning("Redis at %s answers again: rate limits and bot nonces are shared again", where(self.url))
        return result

    def _failed(self, exc: BaseException) -> None:
        self._next_try = self.clock() + self.retry_every
        if self._down is not None:
            return  # logged when it went down
        self._down = (f"the shared store (Redis) failed or did not answer within {self.timeout * 1000:g} ms "
                      f"({type(exc).__name__}); "
                      "rate limits and bot nonces are counted per process until it does")
        self.health.fail(CHECK, self._down)
        log.warning("Redis at %s failed (%s: %s); counting rate limits and bot nonces per process until it "
                    "answers again (retrying every %g s)", where(self.url), type(exc).__name__, exc, self.retry_every)

    async def close(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = self._loop = None

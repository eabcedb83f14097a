"""The nonces of verified bot signatures, each remembered until its signature expires: a replay is caught.

With a Redis URL the nonces live in Redis (`SET … NX PX`), so a signature replayed to another replica
is caught too; without one, or while Redis is away, in this process: at most `max_nonces` of them,
the oldest forgotten first (a bot would have to send that many signed requests within one validity
window for a forgotten nonce to be accepted twice).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from runtime.clients.sharedstore import SharedStore, StoreUnavailable

PREFIX = "petgen:nonce"
MAX_NONCES = 100_000


class NonceCache:
    def __init__(self, shared: SharedStore | None = None, *, max_nonces: int = MAX_NONCES,
                 clock: Callable[[], float] = time.time) -> None:
        self.shared = shared
        self.max_nonces = max_nonces
        self.clock = clock
        self.seen: dict[str, float] = {}  # key -> when it may be forgotten, in insertion order

    async def first_use(self, key: str, until: float) -> bool:
        """Remember `key` until the time `until`; False when it was already seen (a replay)."""
        if self.shared is not None:
            ttl_ms = max(1, int((until - self.clock()) * 1000))
            try:
                stored = await self.shared.run(lambda client: client.set(f"{PREFIX}:{key}", b"1", nx=True, px=ttl_ms))
            except StoreUnavailable:
                return self._first_use_here(key, until)
            return bool(stored)
        return self._first_use_here(key, until)

    def _first_use_here(self, key: str, until: float) -> bool:
        now = self.clock()
        known = self.seen.get(key)
        if known is not None and known > now:
            return False
        # Forget what has expired at the front (mostly the oldest), then make room; O(1) amortised.
        while self.seen:
            oldest = next(iter(self.seen))
            if self.seen[oldest] > now and len(self.seen) < self.max_nonces:
                break
            del self.seen[oldest]
        self.seen.pop(key, None)
        self.seen[key] = until
        return True

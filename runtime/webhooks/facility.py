"""The webhook facility of one runtime: its store, events derived on every dist load, the worker, health.

`PetgenApp` makes one, registers `dist_loaded` with the runtime (which calls it at once for the dist
loaded at start: the first start records the baseline), adds its routes, and runs `run` in the
lifespan's task group. The dist loaded at start is derived once the server has answered its first
request (`hold_first`, `release`; at 50,000 entries a baseline takes seconds, and the server would
not answer meanwhile), in a worker thread; a newer build loaded before that derives the held one
first, so the snapshot goes from build to build as before and no change is skipped. A derivation that fails (the store is down) is kept and retried by `run`
every few seconds, so a change is never skipped: the snapshot still holds the previous dist.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from starlette.routing import Route

from petgen.contract.resources import license_of
from runtime.builds.dist import Dist
from runtime.settings import Settings
from runtime.webhooks.derive import Item, Plan, Record, dist_items, plan_events
from runtime.webhooks.destinations import Policy
from runtime.webhooks.routes import webhook_routes
from runtime.webhooks.schedule import Schedule
from runtime.webhooks.sender import Sender, user_agent
from runtime.webhooks.store import Store, StoreUnavailable, open_store
from runtime.webhooks.worker import DeliveryWorker

log = logging.getLogger("petgen.webhooks")

STUCK_AFTER = 60.0  # seconds a due delivery may wait before /api/status says deliveries are stuck
RETRY_DERIVE = 5.0  # seconds between attempts to derive a dist while the store fails
RETENTION = 30 * 86400.0  # finished deliveries and their events are kept this long for the operator
PRUNE_EVERY = 3600.0


class Webhooks:
    def __init__(self, *, state_dir: Path, redis_url: str | None, retry_scale: float = 1.0,
                 allow_loopback: bool = False) -> None:
        self.policy = Policy(allow_loopback=allow_loopback)
        self.schedule = Schedule(scale=retry_scale)
        self.store: Store | None = None
        self.problem: str | None = None  # what keeps the store or the derivation from working, if anything
        self.site: Any = None
        self._pending: Dist | None = None  # a loaded dist whose events are not derived yet
        self._current: Dist | None = None  # the dist loaded last
        self._confirmed: int | None = None  # the store's generation when it last held the current dist
        self._sender: Sender | None = None  # the running worker's
        self._lock = threading.Lock()  # one derivation at a time in this process
        self._holding = False  # the dist loaded at start waits for `release`
        # While the store has no baseline and is away: the source hash and snapshot records of the build
        # this process derived first (the baseline when the store is back).
        self._baseline: tuple[str, dict[str, Record]] | None = None
        self._derived = False  # a derivation succeeded in this process
        try:
            self.store = open_store(state_dir, redis_url)
        except StoreUnavailable as exc:
            self.problem = str(exc)
            log.warning("webhooks unavailable: %s", exc)

    @classmethod
    def from_settings(cls, settings: Settings) -> Webhooks:
        return cls(state_dir=settings.state_dir, redis_url=settings.redis_url,
                   retry_scale=settings.webhook_retry_scale, allow_loopback=settings.webhook_allow_loopback)

    # the runtime's side

    def hold_first(self) -> None:
        """Derive the next dist loaded only at `release` (or when a newer one is loaded, or at the
        housekeeping's next round): the runtime serves meanwhile."""
        self._holding = True

    def release(self) -> None:
        """Derive the dist held back by `hold_first`, if any (blocking: run it in a worker thread)."""
        self._holding = False
        self.derive_pending()

    def dist_loaded(self, dist: Dist) -> None:
        """Derive the events of a newly loaded dist (called by the runtime on every load)."""
        self.site = dist.site
        if self._sender is not None:  # the User-Agent names the service as the new build does
            self._sender.agent = self._agent()
        if self._holding:
            if self._pending is None:  # the dist loaded at start: derived by `release`
                self._pending = self._current = dist
                self._confirmed = None
                return
            self.release()  # a newer build came first: the held one is derived before it
        self._pending = self._current = dist
        self._confirmed = None
        self.derive_pending()

    def check_store_went_back(self) -> None:
        """Derive again if the store went back to an earlier generation than the one that held the current
        dist: it lost its latest writes (a Redis that crashed between fsyncs, a restored backup), and with
        them the derivation. A store that moved on (a higher generation: another replica derived its build)
        is left alone, so replicas serving different builds for a while do not undo each other's events."""
        if self.store is None or self._current is None or self._pending is not None or self._confirmed is None:
            return
        source, generation = self.store.seen()
        if generation < self._confirmed:
            log.warning("webhooks: the store went back (generation %d, was %d); deriving the loaded build again",
                        generation, self._confirmed)
            self._pending = self._current
            self.derive_pending()
        elif source != self._current.source_hash and generation > self._confirmed:
            self._confirmed = generation  # say it once per change
            log.warning("webhooks: another replica derived a different build (%s); this one serves %s",
                        source, self._current.source_hash)

    def derive_pending(self) -> bool:
        """Derive the events of the loaded dist if not done yet; False while the store fails."""
        if self.store is None:
            return False
        store = self.store
        with self._lock:  # the pending dist is read under the lock: a later load's is never derived before it
            dist = self._pending
            if dist is None:
                return True
            source: str | None = ""
            items: list[Item] | None = None
            try:
                source, generation = store.seen()
                if source is None and self._baseline is not None and self._baseline[0] != dist.source_hash:
                    # The store had no baseline when this process derived its first build, and a newer build
                    # came before it was back: that first build is the baseline, so its changes are events.
                    first, records = self._baseline
                    store.derive(first, lambda previous, baseline: Plan(records) if baseline else Plan(), time.time())
                    source = first
                if source != dist.source_hash:
                    items = dist_items(dist)
                    self._derive(store, dist, items)
                source, generation = store.seen()
                self._baseline, self._derived = None, True
            except StoreUnavailable as exc:
                if source in (None, "") and not self._derived and self._baseline is None:
                    # Perhaps there is no baseline yet: this process's first build is kept as one (its snapshot
                    # records only) in case a newer build replaces it, whose files are gone, before the store is back.
                    try:
                        self._baseline = (dist.source_hash, plan_events({}, items or dist_items(dist),
                                                                        base_url=dist.site.base_url, now=0,
                                                                        baseline=True).records)
                    except OSError:  # its files are gone already: a newer build is being loaded
                        pass
                self.problem = f"the events of the loaded build are not derived yet: {exc}"
                log.warning("webhooks: %s", self.problem)
                return False
            except Exception as exc:  # a bug must not stop the runtime from serving; said once, in the status
                self.problem = f"deriving the events of the loaded build failed: {type(exc).__name__}: {exc}"
                log.exception("webhooks: deriving events failed")
                if self._pending is dist:
                    self._pending = None  # the same dist would fail the same way: the next build tries again
                return False
        if self._pending is dist:
            self._pending = None
            self._confirmed = generation if source == dist.source_hash else None
        self.problem = None
        return True

    @staticmethod
    def _derive(store: Store, dist: Dist, items: list[Item]) -> None:
        started = time.perf_counter()
        now = time.time()
        events = store.derive(dist.source_hash, lambda previous, baseline: plan_events(
            previous, items, base_url=dist.site.base_url, now=now, baseline=baseline), now)
        log.info("webhooks: %d events derived from %s in %.2f s", len(events), dist.root, time.perf_counter() - started)

    def report(self) -> dict[str, str] | None:
        """The `webhooks` check of /api/status; left out while webhooks are not used at all."""
        if self.store is None or self.problem:
            return {"status": "fail", "detail": self.problem or "no webhook store"}
        now = time.time()
        try:
            s = self.store.stats(now)
        except StoreUnavailable as exc:
            return {"status": "fail", "detail": str(exc)}
        if not (s.subscriptions or s.pending or s.failed_recently):
            return None
        detail = (f"{_count(s.subscriptions, 'subscription')} ({s.failing} failing, {s.disabled} disabled), "
                  f"{_count(s.pending, 'delivery', 'deliveries')} pending, {s.failed_recently} failed in the last 24 h")
        if s.oldest_due is not None and now - s.oldest_due > STUCK_AFTER:
            return {"status": "fail", "detail": f"{detail}; deliveries are stuck: one has been due for "
                                                f"{now - s.oldest_due:.0f} s"}
        return {"status": "ok", "detail": detail}

    def routes(self) -> list[Route]:
        return webhook_routes(self)

    def license(self) -> dict[str, str]:
        return license_of(self.site) if self.site is not None else {}

    def base_url(self) -> str:
        return self.site.base_url if self.site is not None else ""

    def _agent(self) -> str:
        site = self.site
        return user_agent(site.name, site.api_version, site.base_url) if site else "petgen-Webhooks"

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Deliver, retry pending derivations, prune old history; until cancelled."""
        if self.store is None:
            task_status.started()
            return
        async with Sender(self.policy, agent=self._agent()) as sender, anyio.create_task_group() as tasks:
            self._sender = sender
            worker = DeliveryWorker(self.store, sender, self.schedule)
            await tasks.start(worker.run)
            tasks.start_soon(self._housekeeping)
            task_status.started()

    async def _housekeeping(self) -> None:
        assert self.store is not None
        pruned_at = 0.0
        while True:
            await anyio.sleep(RETRY_DERIVE)
            try:
                await anyio.to_thread.run_sync(self.check_store_went_back)
            except StoreUnavailable:
                pass  # reported by /api/status; the next round looks again
            if self._pending is not None:
                await anyio.to_thread.run_sync(self.derive_pending)
            if time.monotonic() - pruned_at > PRUNE_EVERY:
                try:
                    await anyio.to_thread.run_sync(self.store.prune, time.time() - RETENTION)
                    pruned_at = time.monotonic()
                except StoreUnavailable:
                    pass  # the next round tries again


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"

"""The delivery worker: lanes that claim a subscription, deliver its due events in order, and record each attempt.

Each lane leases one subscription at a time (see store.py), so deliveries to one subscriber go out one
after another in event order, while lanes serve different subscribers side by side. A lane that finds
nothing due sleeps `poll` seconds. The store's clock is the worker's `clock` (tests pass a fake one to
walk through the retry schedule without waiting).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable

import anyio
import anyio.abc
import anyio.to_thread

from runtime.webhooks.model import Claim
from runtime.webhooks.schedule import Schedule
from runtime.webhooks.sender import Sender
from runtime.webhooks.store import Store, StoreUnavailable

log = logging.getLogger("petgen.webhooks")

LANES = 8  # subscriptions served at once per process
POLL = 0.25  # seconds a lane sleeps when nothing is due
BACKOFF = 2.0  # seconds a lane waits after the store failed


def worker_name() -> str:
    """Who holds a lease: host, process and a random part (a restarted process is another worker)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class DeliveryWorker:
    def __init__(self, store: Store, sender: Sender, schedule: Schedule, *, lanes: int = LANES, poll: float = POLL,
                 clock: Callable[[], float] = time.time, owner: str | None = None) -> None:
        self.store = store
        self.sender = sender
        self.schedule = schedule
        self.lanes = lanes
        self.poll = poll
        self.clock = clock
        self.owner = owner or worker_name()
        self.paused = False  # the store failed; said once, not by every lane every round
        # While nothing is due, only the first lane polls the store; the others wait until a claim finds work
        # (8 lanes polling 4 times a second each cost an idle replica ~3 % of a core in store transactions).
        self.busy = anyio.Event()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the lanes until cancelled."""
        async with anyio.create_task_group() as tasks:
            for n in range(self.lanes):
                tasks.start_soon(self._lane, n == 0)
            task_status.started()

    async def _lane(self, polls: bool) -> None:
        while True:
            if not polls:
                await self.busy.wait()
            try:
                worked = await self.step()
            except StoreUnavailable as exc:  # /api/status reports it (facility.report)
                if not self.paused:
                    log.warning("webhook deliveries paused: %s", exc)
                self.paused = True
                await anyio.sleep(BACKOFF)
                continue
            if self.paused:
                log.warning("webhook deliveries resumed: the store answers again")
                self.paused = False
            if worked:
                self.busy.set()  # there is work: every lane claims
            else:
                if polls and self.busy.is_set():
                    self.busy = anyio.Event()  # nothing due: the other lanes wait for the next work found
                await anyio.sleep(self.poll)

    async def step(self) -> bool:
        """Claim one subscription with due deliveries and make them; False if nothing was due."""
        claim = await anyio.to_thread.run_sync(lambda: self.store.claim(self.owner, self.clock()))
        if claim is None:
            return False
        try:
            await self._deliver(claim)
        finally:
            with anyio.CancelScope(shield=True):  # give the lease back even when shutting down
                await anyio.to_thread.run_sync(self.store.release, claim)
        return True

    async def _deliver(self, claim: Claim) -> None:
        subscription = claim.subscription
        for due in claim.deliveries:
            number = due.attempts + 1
            attempt = await self.sender.send(subscription.url, due.event, subscription.signing_secrets(self.clock()),
                                             number)
            now = self.clock()
            next_at = None if attempt.delivered or attempt.gone else self.schedule.next_attempt(number, now)
            kept = await anyio.to_thread.run_sync(self.store.record, claim, due, attempt, next_at, now)
            if attempt.delivered:
                log.debug("delivered %s to %s: %s", due.event.id, subscription.id, attempt.summary())
            else:
                log.info("delivery of %s to %s failed (attempt %d): %s; %s", due.event.id, subscription.id, number,
                         attempt.summary(), "disabled (410 Gone)" if attempt.gone else
                         "no retry left" if next_at is None else f"next attempt in {next_at - now:.0f} s")
            if not kept:
                log.warning("lost the lease on %s; another worker delivers it", subscription.id)
                return
            if attempt.gone:
                return

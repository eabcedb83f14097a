"""The retry schedule, walked through with a fake clock by the real worker against a real receiver."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from runtime.webhooks.derive import Draft, Plan
from runtime.webhooks.destinations import Policy
from runtime.webhooks.model import Subscription, new_secret
from runtime.webhooks.schedule import DELAYS, Schedule
from runtime.webhooks.sender import Sender
from runtime.webhooks.sqlite_store import SQLiteStore
from runtime.webhooks.worker import DeliveryWorker
from tests.runtime.webhooks.support import Receiver

START = 1_800_000_000.0


def test_the_standard_webhooks_schedule() -> None:
    exact = Schedule(random=lambda: 0.5)  # the middle of the jitter: no change
    assert [exact.next_attempt(n, 0) for n in range(1, 9)] == [5, 300, 1800, 7200, 18000, 36000, 36000, None]
    assert exact.attempts == 8 and sum(DELAYS) / 3600 == pytest.approx(27.58, abs=0.01)
    assert Schedule(random=lambda: 0.0).next_attempt(2, 100) == pytest.approx(100 + 270)  # -10 %
    assert Schedule(random=lambda: 1.0).next_attempt(2, 100) == pytest.approx(100 + 330)  # +10 %
    assert Schedule(scale=0.001, random=lambda: 0.5).next_attempt(1, 0) == pytest.approx(0.005)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def run_worker(tmp_path: Path, receiver: Receiver, *, until_settled: int) -> tuple[SQLiteStore, list[float]]:
    """Queue one event for the receiver, then step the worker at each due time until it is settled; return the
    store and the (fake) times of the attempts."""
    store = SQLiteStore(tmp_path / "webhooks.sqlite3")
    store.add_subscription(Subscription("wh_aaaaaaaaaaaaaaaa", receiver.url, ("entry.updated",), "", "operator",
                                        START, new_secret()), limit=None)
    store.derive("build-1", lambda previous, baseline: Plan(), START)
    store.derive("build-2", lambda previous, baseline: Plan({}, [Draft("evt_1", "entry.updated", b'{"id":"evt_1"}')]),
                 START)
    clock, times = Clock(), []

    async def walk() -> None:
        async with Sender(Policy(allow_loopback=True)) as sender:
            worker = DeliveryWorker(store, sender, Schedule(random=lambda: 0.5), clock=clock)
            for _ in range(until_settled):
                times.append(clock.now)
                assert await worker.step()
                [view] = store.deliveries()
                if view.status != "pending":
                    return
                assert not await worker.step()  # nothing is due before the next attempt's time
                assert view.next_at is not None
                clock.now = view.next_at

    anyio.run(walk)
    return store, [t - START for t in times]


def test_eight_attempts_on_the_schedule_then_failed(tmp_path: Path, receiver: Receiver) -> None:
    receiver.answers = [500] * 8
    store, times = run_worker(tmp_path, receiver, until_settled=8)
    assert times == [0, 5, 305, 2105, 9305, 27305, 63305, 99305]
    [view] = store.deliveries()
    assert (view.status, view.attempts, view.last_status) == ("failed", 8, 500)
    assert [r.headers["X-Petname-Attempt"] for r in receiver.received] == [str(n) for n in range(1, 9)]
    assert {r.body for r in receiver.received} == {b'{"id":"evt_1"}'}  # the same bytes every time
    assert {r.headers["X-Petname-Event-Id"] for r in receiver.received} == {"evt_1"}


def test_fails_twice_then_delivered(tmp_path: Path, receiver: Receiver) -> None:
    receiver.answers = [500, 503]
    store, times = run_worker(tmp_path, receiver, until_settled=8)
    assert times == [0, 5, 305]
    [view] = store.deliveries()
    assert (view.status, view.attempts, view.last_status) == ("delivered", 3, 200)


class CountingStore(SQLiteStore):
    """The real store, counting the claims made on it."""

    claims = 0

    def claim(self, owner: str, now: float):  # type: ignore[no-untyped-def]
        self.claims += 1
        return super().claim(owner, now)


def test_an_idle_worker_polls_with_one_lane(tmp_path: Path) -> None:
    """With nothing due, one lane of eight polls the store (not all eight); a due delivery still goes out."""
    store = CountingStore(tmp_path / "webhooks.sqlite3")

    async def idle() -> None:
        async with Sender(Policy(allow_loopback=True)) as sender:
            worker = DeliveryWorker(store, sender, Schedule(random=lambda: 0.5), lanes=8, poll=0.05)
            with anyio.move_on_after(1.0):
                await worker.run()

    anyio.run(idle)
    assert 5 <= store.claims <= 30  # one lane: ~20 claims in a second; eight lanes polling made ~160

"""kill -9 loses no event: a runtime in a child process, killed mid-delivery or mid-derivation, then restarted.

The child reloads on SIGHUP (PETGEN_DIST_POLL=0: no watcher), so these tests also prove the signal path.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from runtime.builds.dist import Dist
from runtime.webhooks.derive import Item, Record, dist_items, plan_events
from runtime.webhooks.sqlite_store import SQLiteStore
from runtime.webhooks.store import SQLITE_FILE
from tests.conftest import REPO
from tests.runtime.test_server import free_port
from tests.runtime.webhooks.support import Receiver, Site, issue_token, wait_for

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def runtime_process(site: Site, state: Path, log: Path, *,
                    retry_scale: float = 0.001) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`uvicorn --factory runtime.app:create_app` with PETGEN_* settings, as an operator would start it."""
    port = free_port()
    env = {**os.environ, "PETGEN_DIST": str(site.dist), "PETGEN_STATE_DIR": str(state), "PETGEN_RATE_LIMIT": "0",
           "PETGEN_DIST_POLL": "0", "PETGEN_WEBHOOK_ALLOW_LOOPBACK": "1",
           "PETGEN_WEBHOOK_RETRY_SCALE": str(retry_scale)}
    with log.open("ab") as sink:
        process = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "runtime.app:create_app",
                                    "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                                   env=env, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        assert process.poll() is None, log.read_text()
        try:
            return httpx.get(f"{base}/api/status", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(answers, "the runtime to answer")
        yield process, base
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def subscribe(base: str, state: Path, url: str) -> dict[str, str]:
    response = httpx.post(f"{base}/webhooks", json={"url": url},
                          headers={"Authorization": f"Bearer {issue_token(state)}"}, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()


def test_killed_mid_delivery_the_event_arrives_again_with_the_same_id(tmp_path: Path, receiver: Receiver) -> None:
    site, state, log = Site(tmp_path), tmp_path / "state", tmp_path / "runtime.log"
    receiver.hold = threading.Event()  # the first request waits: the runtime is killed while it is in flight
    with runtime_process(site, state, log) as (process, base):
        subscribe(base, state, receiver.url)
        site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
        site.build()
        process.send_signal(signal.SIGHUP)  # reload the new build
        receiver.wait_for(1)
        process.kill()
        process.wait(timeout=10)
    receiver.hold.set()
    receiver.hold = None
    with runtime_process(site, state, log):  # the same state; its lease runs out, and the delivery resumes
        received = receiver.wait_for(2)
        store = SQLiteStore(state / SQLITE_FILE)
        wait_for(lambda: [d.status for d in store.deliveries()] == ["delivered"], "the delivery to be recorded")
    assert len(received) == 2 and received[0].body == received[1].body
    assert received[0].event["type"] == "entry.updated" and received[0].event["data"]["changes"] == ["meaning"]
    assert [r.headers["X-Petname-Attempt"] for r in received] == ["1", "1"]  # the first attempt never counted


def test_killed_between_attempts_the_retry_comes_from_the_next_process(tmp_path: Path, receiver: Receiver) -> None:
    site, state, log = Site(tmp_path), tmp_path / "state", tmp_path / "runtime.log"
    receiver.answers = [503]
    store = SQLiteStore(state / SQLITE_FILE)
    with runtime_process(site, state, log, retry_scale=0.4) as (process, base):  # the first retry after ≈ 2 s
        subscribe(base, state, receiver.url)
        site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
        site.build()
        process.send_signal(signal.SIGHUP)
        wait_for(lambda: [(d.status, d.attempts) for d in store.deliveries()] == [("pending", 1)],
                 "the failed first attempt to be recorded")
        process.kill()
        process.wait(timeout=10)
    with runtime_process(site, state, log, retry_scale=0.4):
        received = receiver.wait_for(2)
        wait_for(lambda: [d.status for d in store.deliveries()] == ["delivered"], "the retry to be recorded")
    assert [r.headers["X-Petname-Attempt"] for r in received] == ["1", "2"]
    assert received[0].body == received[1].body


def expected_ids(site: Site, before: list[Item], after: Dist) -> set[str]:
    """The ids derivation must reach, computed here in memory from the two builds (the first one's items
    read before the second build replaced its files)."""
    records: dict[str, Record] = {}
    records.update(plan_events({}, before, base_url="", now=0, baseline=True).records)
    return {d.id for d in plan_events(records, dist_items(after), base_url="", now=0, baseline=False).events}


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.35, 0.5])
def test_killed_at_any_moment_after_a_new_build_every_event_arrives(tmp_path: Path, receiver: Receiver,
                                                                   delay: float) -> None:
    """Killed `delay` seconds after the reload signal: while loading, after the derivation, amid the deliveries
    (where these moments fall depends on the machine; every one must lose nothing)."""
    site, state, log = Site(tmp_path), tmp_path / "state", tmp_path / "runtime.log"
    before = dist_items(Dist.load(site.dist))
    with runtime_process(site, state, log) as (process, base):
        subscribe(base, state, receiver.url)
        for n in range(40):
            site.add(f"Neuling{n}", categories="tiere, lustig")
        site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
        site.build()
        process.send_signal(signal.SIGHUP)
        time.sleep(delay)  # not an assertion on time: any moment must do
        process.kill()
        process.wait(timeout=10)
    expected = expected_ids(site, before, Dist.load(site.dist))
    assert len(expected) == 44  # 40 published, 1 updated, 3 categories (tiere, lustig and neutral: gender alle)
    with runtime_process(site, state, log):
        wait_for(lambda: {r.event["id"] for r in receiver.received} >= expected, "every event to arrive", 60)
    assert {r.event["id"] for r in receiver.received} == expected  # nothing else, nothing lost
    assert orjson.loads(receiver.received[0].body)["type"] in ("entry.published", "entry.updated")


def test_a_store_that_goes_back_is_derived_again(tmp_path: Path, receiver: Receiver) -> None:
    """The store loses its latest writes (here: a backup from before the change is restored; on Redis, a crash
    between fsyncs): the running runtime notices that its snapshot is of the build before, and derives again."""
    import sqlite3

    site, state, log = Site(tmp_path), tmp_path / "state", tmp_path / "runtime.log"
    with runtime_process(site, state, log) as (process, base):
        subscribe(base, state, receiver.url)
        backup = sqlite3.connect(tmp_path / "backup.sqlite3")
        with contextlib.closing(sqlite3.connect(state / SQLITE_FILE)) as live:
            live.backup(backup)
        site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
        site.build()
        process.send_signal(signal.SIGHUP)
        [first] = receiver.wait_for(1)
        with contextlib.closing(sqlite3.connect(state / SQLITE_FILE)) as live:
            backup.backup(live)  # the snapshot, the outbox and the events as they were before the change
        backup.close()
        second = receiver.wait_for(2)[1]
    assert second.event["id"] == first.event["id"] and second.event["data"] == first.event["data"]

"""The build loaded at start is derived after the server answered, and no change is lost meanwhile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import orjson

from petgen.build.pipeline import build
from runtime.builds.dist import Dist
from runtime.webhooks.facility import Webhooks
from runtime.webhooks.sqlite_store import SQLiteStore
from runtime.webhooks.store import SQLITE_FILE
from tests.runtime.test_server import running_server
from tests.runtime.webhooks.support import Site, wait_for


def events_in(state: Path) -> list[dict]:
    with sqlite3.connect(state / SQLITE_FILE) as db:
        return [orjson.loads(body) for (body,) in db.execute("SELECT body FROM events ORDER BY seq")]


def seen(state: Path) -> str | None:
    return SQLiteStore(state / SQLITE_FILE).seen()[0]


def test_the_build_loaded_at_start_waits_for_release(tmp_path: Path) -> None:
    site, state = Site(tmp_path), tmp_path / "state"
    webhooks = Webhooks(state_dir=state, redis_url=None)
    webhooks.hold_first()
    dist = Dist.load(site.dist)
    webhooks.dist_loaded(dist)
    assert seen(state) is None  # held: nothing derived while the server starts
    webhooks.release()
    assert seen(state) == dist.source_hash and events_in(state) == []  # the baseline, without events


def test_a_newer_build_before_the_release_derives_the_held_one_first(tmp_path: Path) -> None:
    site, state = Site(tmp_path), tmp_path / "state"
    cache = tmp_path / "cache"
    build(site.content, site.dist, base_url=site.base_url, cache_dir=cache)  # keeps the old tree as the spare
    webhooks = Webhooks(state_dir=state, redis_url=None)
    webhooks.hold_first()
    webhooks.dist_loaded(Dist.load(site.dist))
    site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
    build(site.content, site.dist, base_url=site.base_url, cache_dir=cache)
    newer = Dist.load(site.dist)
    webhooks.dist_loaded(newer)  # the held build becomes the baseline, the edit an event
    assert seen(state) == newer.source_hash
    [event] = events_in(state)
    assert event["type"] == "entry.updated" and event["data"]["changes"] == ["meaning"]
    webhooks.release()  # nothing left to derive
    assert len(events_in(state)) == 1


def test_a_server_on_a_fresh_state_answers_then_records_the_baseline(tmp_path: Path) -> None:
    site, state = Site(tmp_path), tmp_path / "state"
    source = Dist.load(site.dist).source_hash
    with running_server(site.dist, state_dir=state) as base, httpx.Client(base_url=base, timeout=10) as client:
        assert client.get("/api/names/apfel").status_code == 200
        wait_for(lambda: seen(state) == source, "the baseline of the build loaded at start")
    assert events_in(state) == []

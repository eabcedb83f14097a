"""Several replicas on the shared Redis store: one set of subscriptions, each event delivered once; a Redis
outage degrades the service and loses nothing (with the append-only file Redis should run with)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from runtime.webhooks.operator import invite
from runtime.webhooks.redis_store import RedisStore
from tests.redis_server import RedisServer
from tests.runtime.test_server import running_server
from tests.runtime.webhooks.support import Receiver, Site, wait_for

pytestmark = pytest.mark.slow
SETTINGS = {"dist_poll": 0.05, "webhook_allow_loopback": True, "webhook_retry_scale": 0.001}


def token_in(redis_url: str) -> dict[str, str]:
    store = RedisStore(redis_url)
    try:
        return {"Authorization": f"Bearer {invite(store, 'replicas@example.com', time.time()).splitlines()[1]}"}
    finally:
        store.close()


def test_two_replicas_share_subscriptions_and_deliver_each_event_once(tmp_path: Path, receiver: Receiver,
                                                                      redis_url: str) -> None:
    site = Site(tmp_path)
    token = token_in(redis_url)
    with running_server(site.dist, state_dir=tmp_path / "a", redis_url=redis_url, **SETTINGS) as a, \
            running_server(site.dist, state_dir=tmp_path / "b", redis_url=redis_url, **SETTINGS) as b:
        made = httpx.post(f"{a}/webhooks", json={"url": receiver.url}, headers=token)
        assert made.status_code == 201
        seen = httpx.get(f"{b}/webhooks/{made.json()['id']}", headers=token)  # made on one, seen by the other
        assert seen.status_code == 200 and seen.json()["url"] == receiver.url
        for n in range(30):
            site.add(f"Neuling{n}", categories="tiere, lustig")
        site.build()  # both replicas notice the new build and derive it; the store keeps one derivation
        received = receiver.wait_for(32)
        store = RedisStore(redis_url)
        wait_for(lambda: {d.status for d in store.deliveries(limit=100)} == {"delivered"}, "every delivery recorded")
        store.close()
    ids = [r.event["id"] for r in received]
    assert len(ids) == len(set(ids)) == 33  # 30 published; tiere, lustig and neutral (gender alle) updated: each once
    assert sorted(r.event["type"] for r in received).count("entry.published") == 30


def test_a_redis_outage_degrades_and_loses_nothing(tmp_path: Path, receiver: Receiver) -> None:
    redis = RedisServer(tmp_path / "redis", appendonly=True).start()
    site = Site(tmp_path)
    try:
        token = token_in(redis.url)
        with running_server(site.dist, state_dir=tmp_path / "state", redis_url=redis.url, **SETTINGS) as base, \
                httpx.Client(base_url=base, headers=token, timeout=10) as client:
            assert client.post("/webhooks", json={"url": receiver.url}).status_code == 201
            redis.kill()  # no shutdown: only the append-only file survives

            refused = client.post("/webhooks", json={"url": "https://other.petnames.example/in"})
            assert refused.status_code == 503 and refused.json()["error"]["code"] == "service_unavailable"
            assert refused.headers["retry-after"] == "30"
            assert client.get("/api/names/apfel").status_code == 200  # the rest of the service is unaffected

            site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
            site.build()  # loaded while the store is away: its events cannot be derived yet

            def degraded() -> bool:
                check = client.get("/api/status").json()["checks"].get("webhooks", {})
                return check.get("status") == "fail" and "not derived yet" in check.get("detail", "")

            wait_for(degraded, "/api/status to say the webhook store fails")
            assert client.get("/api/status").json()["status"] == "degraded"
            redis.start()  # the same port, the append-only file: the subscription and the old snapshot are back
            [delivery] = receiver.wait_for(1)
            assert delivery.event["type"] == "entry.updated" and delivery.event["data"]["changes"] == ["meaning"]
    finally:
        redis.stop()

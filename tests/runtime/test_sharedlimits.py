"""Rate limits and bot nonces that hold across replicas: two real runtimes on one real redis-server, and
what happens when Redis stops, stalls and comes back (the runtime answers throughout; status degrades
and recovers by itself)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from runtime.clients.sharedstore import MAX_CONNECTIONS, SharedStore, StoreUnavailable
from runtime.health import Health
from tests.redis_server import RedisServer, free_port
from tests.runtime.test_server import running_server
from tests.signing import SignedBot, fresh_window, site_with_bot

pytestmark = pytest.mark.slow

HOST = "kosenamen.test"  # the host the replicas serve behind their load balancer, which the bot signs


@contextlib.contextmanager
def replicas(dist: Path, redis_url: str, count: int = 2, **settings: object) -> Iterator[list[httpx.Client]]:
    """`count` runtimes sharing `redis_url`, each with a client that sends `Host: kosenamen.test`.

    Redis gets a second to answer, not the default 10 ms: on a busy test machine a round trip can miss
    10 ms now and then, and a request counted in a process of its own would spoil an exact count. The
    tests of the fallback set their own deadline."""
    with contextlib.ExitStack() as stack:
        clients = []
        for _ in range(count):
            options: dict[str, Any] = {"rate_limit": 60, "redis_timeout": 1.0, **settings}
            base = stack.enter_context(running_server(dist, redis_url=redis_url, **options))
            clients.append(stack.enter_context(httpx.Client(base_url=base, headers={"Host": HOST})))
        yield clients


def signed(bot: SignedBot, path: str) -> dict[str, str]:
    return bot.headers(f"http://{HOST}{path}")


def test_the_61st_request_across_two_replicas_is_refused(tmp_path: Path, redis_url: str) -> None:
    dist, _ = site_with_bot(tmp_path)
    with replicas(dist, redis_url) as (a, b):
        fresh_window(60)
        for i in range(60):
            response = (a, b)[i % 2].get("/api/names/apfel")
            assert response.status_code == 200, i
            assert response.headers["x-ratelimit-remaining"] == str(59 - i)  # both count down together
            assert response.headers["ratelimit"].startswith(f'"per-ip";r={59 - i};t=')
        for client in (a, b):
            refused = client.get("/api/names/apfel")
            assert refused.status_code == 429
            assert refused.json()["error"]["code"] == "rate_limited"
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            assert refused.headers["x-ratelimit-remaining"] == "0"


def test_a_preflight_reads_the_shared_budget_without_using_it(tmp_path: Path, redis_url: str) -> None:
    dist, _ = site_with_bot(tmp_path)
    ask = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
    with replicas(dist, redis_url) as (a, b):
        fresh_window(60)
        assert a.get("/api/names/apfel").headers["x-ratelimit-remaining"] == "59"
        for client in (a, b, a):
            preflight = client.options("/ask", headers=ask)
            assert preflight.status_code == 204 and preflight.headers["x-ratelimit-remaining"] == "59", \
                preflight.headers
        assert b.get("/api/names/apfel").headers["x-ratelimit-remaining"] == "58"


def test_a_bots_budget_is_shared_across_replicas(tmp_path: Path, redis_url: str) -> None:
    dist, bot = site_with_bot(tmp_path, quota=70)
    with replicas(dist, redis_url) as (a, b):
        fresh_window(60)
        for i in range(70):
            response = (a, b)[i % 2].get("/api/names/apfel", headers=signed(bot, "/api/names/apfel"))
            assert response.headers["x-petname-bot"] == 'verified;name="TestBot"', i
            assert response.headers["x-ratelimit-remaining"] == str(69 - i)
            assert response.headers["ratelimit-policy"] == '"bot";q=70;w=60'
        for client in (a, b):
            refused = client.get("/api/names/apfel", headers=signed(bot, "/api/names/apfel"))
            assert refused.status_code == 429 and refused.headers["x-petname-bot"] == 'verified;name="TestBot"'
        assert a.get("/api/names/apfel").headers["x-ratelimit-remaining"] == "59"  # the IP's budget: untouched


def test_a_replay_to_another_replica_is_caught(tmp_path: Path, redis_url: str) -> None:
    dist, bot = site_with_bot(tmp_path)
    with replicas(dist, redis_url) as (a, b):
        headers = signed(bot, "/api/names/apfel")
        assert a.get("/api/names/apfel", headers=headers).headers["x-petname-bot"] == 'verified;name="TestBot"'
        replayed = b.get("/api/names/apfel", headers=headers)
        assert replayed.status_code == 200 and replayed.headers["x-petname-bot"] == "unverified;reason=replayed"
        assert replayed.headers["ratelimit-policy"] == '"per-ip";q=60;w=60'
    keys = redis.Redis.from_url(redis_url).keys("petgen:nonce:*")
    assert len(keys) == 1 and 0 < redis.Redis.from_url(redis_url).pttl(keys[0]) <= 65_000  # until expires (+ skew)


def wait_for_status(client: httpx.Client, status: str, deadline: float = 15) -> dict[str, object]:
    """Poll /api/status until it says `status` (each poll is a request, which lets the runtime probe Redis)."""
    end = time.monotonic() + deadline
    while True:
        body = client.get("/api/status").json()
        if body["status"] == status or time.monotonic() > end:
            return body  # type: ignore[no-any-return]
        time.sleep(0.2)


def test_redis_stopped_mid_test_then_back(tmp_path: Path, own_redis: RedisServer,
                                          caplog: pytest.LogCaptureFixture) -> None:
    dist, bot = site_with_bot(tmp_path)
    with replicas(dist, own_redis.url, count=1) as (client,):
        fresh_window(60, need=20)
        assert client.get("/api/status").json()["checks"]["limits"] == {"status": "ok"}
        assert client.get("/api/names/apfel").headers["x-ratelimit-remaining"] == "58"
        own_redis.stop()
        with caplog.at_level(logging.WARNING, logger="petgen.runtime"):
            answers = [client.get("/api/names/apfel") for _ in range(5)]
            verified = client.get("/api/names/apfel", headers=signed(bot, "/api/names/apfel"))
            status = client.get("/api/status")
        assert [r.status_code for r in answers] == [200] * 5  # never a 5xx because the store failed
        assert all("x-ratelimit-remaining" in r.headers for r in answers)  # counted in the process meanwhile
        assert verified.headers["x-petname-bot"] == 'verified;name="TestBot"'  # nonces kept in memory meanwhile
        body = status.json()
        assert status.status_code == 200 and body["status"] == "degraded"
        assert body["checks"]["limits"]["status"] == "fail"
        assert "the shared store (Redis) failed or did not answer within 1000 ms" in body["checks"]["limits"]["detail"]
        failures = [r for r in caplog.records if "Redis at" in r.getMessage() and "failed (" in r.getMessage()]
        assert len(failures) == 1 and failures[0].levelno == logging.WARNING  # logged once
        own_redis.start()
        assert wait_for_status(client, "ok")["checks"] == {"limits": {"status": "ok"}}  # recovered by itself
        assert client.get("/api/names/apfel").headers["x-ratelimit-remaining"] == "58"  # Redis counts again (anew)
        assert any("answers again" in r.getMessage() for r in caplog.records)


def test_a_stalled_redis_costs_no_answer(tmp_path: Path, own_redis: RedisServer) -> None:
    """Redis alive but not answering (CLIENT PAUSE): requests fall back after the deadline, status degrades."""
    dist, _ = site_with_bot(tmp_path)
    with replicas(dist, own_redis.url, count=1, redis_timeout=0.05) as (client,):
        assert client.get("/api/names/apfel").status_code == 200
        admin = redis.Redis.from_url(own_redis.url)
        admin.execute_command("CLIENT", "PAUSE", 1500, "ALL")  # this connection waits it out too
        try:
            answers = [client.get("/api/names/apfel") for _ in range(5)]
            body = client.get("/api/status").json()
        finally:
            admin.close()
        assert [r.status_code for r in answers] == [200] * 5
        assert body["status"] == "degraded"
        assert body["checks"]["limits"]["detail"].startswith("the shared store (Redis) failed or did not answer within "
                                                             "50 ms (TimeoutError)")
        assert wait_for_status(client, "ok")["status"] == "ok"


def test_the_store_fails_fast_and_probes_again_after_a_pause(tmp_path: Path) -> None:
    port = free_port()
    health = Health()
    now = [100.0]
    store = SharedStore(f"redis://127.0.0.1:{port}/0", health=health, retry_every=1.0, clock=lambda: now[0])
    server = RedisServer(tmp_path / "redis", port)

    async def ping() -> object:
        return await store.run(lambda client: client.ping())

    async def scenario() -> None:
        with pytest.raises(StoreUnavailable):
            await ping()  # nothing listens
        assert health.checks()["limits"]["status"] == "fail" and not store.available
        server.start()
        with pytest.raises(StoreUnavailable):
            await ping()  # within retry_every: not even tried
        now[0] += 1.5
        assert await ping() is True  # probed, and back
        assert health.checks()["limits"] == {"status": "ok"} and store.available
        await store.close()

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_the_counter_in_redis_matches_the_one_in_memory(redis_url: str) -> None:
    """Same requests, same decisions: the Lua script is the in-process counter, clock for clock."""
    from runtime.clients.ratelimit import WindowCounter
    from runtime.clients.sharedcounter import SharedWindowCounter

    async def scenario() -> None:
        store = SharedStore(redis_url, health=Health(), timeout=1)
        memory = WindowCounter(limit=5, window=3600)
        shared = SharedWindowCounter(store, WindowCounter(limit=5, window=3600))
        for _ in range(7):
            in_memory, in_redis = memory.hit("k"), await shared.hit("k", 5)
            assert (in_redis.allowed, in_redis.remaining) == (in_memory.allowed, in_memory.remaining)
            assert abs(in_redis.reset - in_memory.reset) <= 1 and abs(in_redis.retry_after - in_memory.retry_after) <= 1
        assert store.available
        await store.close()

    fresh_window(3600, need=5)
    asyncio.run(scenario())
    ttl = redis.Redis.from_url(redis_url).pttl("petgen:rate:3600:k")
    assert 3600_000 < ttl <= 7200_000  # kept until the end of the next window, then gone


def test_concurrent_requests_beyond_the_pool_wait_rather_than_fail(tmp_path: Path, redis_url: str) -> None:
    """More requests in flight than Redis connections: none falls back, none fails, the count is exact."""
    dist, _ = site_with_bot(tmp_path)
    in_flight = MAX_CONNECTIONS + 36
    with replicas(dist, redis_url, count=1, rate_limit=2000) as (client,):
        fresh_window(60)

        async def burst() -> list[int]:  # one thread of clients: the server (a thread here) keeps the GIL mostly
            limits = httpx.Limits(max_connections=in_flight)
            async with httpx.AsyncClient(base_url=str(client.base_url), limits=limits) as many:
                answers = await asyncio.gather(*(many.get("/api/names/apfel") for _ in range(3 * in_flight)))
            return [r.status_code for r in answers]

        assert asyncio.run(burst()) == [200] * 3 * in_flight
        after = client.get("/api/names/apfel")
        assert after.headers["x-ratelimit-remaining"] == str(2000 - 3 * in_flight - 1)
        assert client.get("/api/status").json()["checks"]["limits"] == {"status": "ok"}


@pytest.mark.parametrize("environ, expected", [({}, 0.01), ({"PETGEN_REDIS_TIMEOUT_MS": "250"}, 0.25)])
def test_the_deadline_setting(environ: dict[str, str], expected: float) -> None:
    from runtime.settings import Settings

    assert Settings.from_env(environ).redis_timeout == expected


def test_a_deadline_of_nothing_is_refused() -> None:
    from runtime.settings import Settings

    with pytest.raises(ValueError, match="PETGEN_REDIS_TIMEOUT_MS must be at least 1"):
        Settings.from_env({"PETGEN_REDIS_TIMEOUT_MS": "0"})

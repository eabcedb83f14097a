"""The test suite's real Redis: it answers, and it can be stopped and started again on the same port."""

from __future__ import annotations

import redis

from tests.redis_server import RedisServer


def test_a_real_redis_that_can_be_stopped_and_restarted(own_redis: RedisServer) -> None:
    client = redis.Redis.from_url(own_redis.url, socket_timeout=1)
    assert client.ping() and client.set("k", "v") and client.get("k") == b"v"
    own_redis.stop()
    assert not own_redis.ping()
    own_redis.start()
    assert client.ping() and client.get("k") is None  # persistence is off: a restart starts empty
    client.close()

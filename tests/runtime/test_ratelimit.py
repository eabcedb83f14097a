"""Rate limit: headers on every status, 429 after the budget, rolling window, client IP, proxies."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from runtime.clients.ratelimit import Decision, WindowCounter, client_ip
from runtime.settings import parse_networks

HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit", "ratelimit-policy")


def test_headers_on_every_status(dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist)
    etag = client.get("/api/names/apfel").headers["etag"]
    responses = {
        200: client.get("/api/names"),
        304: client.get("/api/names/apfel", headers={"If-None-Match": etag}),
        301: client.get("/api/names/Apfel", follow_redirects=False),
        400: client.get("/api/names?limit=0"),
        404: client.get("/api/names/nope"),
        405: client.post("/api/names"),
        413: client.post("/api/names", content=b"x" * 70_000),
    }
    for status, response in responses.items():
        assert response.status_code == status
        for header in HEADERS:
            assert header in response.headers, (status, header)
        assert response.headers["x-ratelimit-limit"] == "60"
        assert response.headers["ratelimit-policy"] == '"per-ip";q=60;w=60'
    assert responses[200].headers["x-ratelimit-remaining"] == "58"
    assert responses[413].headers["x-ratelimit-remaining"] == "52"


def test_a_preflight_carries_the_budget_without_using_it(dist: Path, make_client: Callable[..., TestClient]) -> None:
    """Rate-limit headers are on every response (contract), a CORS preflight's too; it does not count."""
    client = make_client(dist, rate_limit=3)
    ask = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
    first = client.options("/ask", headers=ask)
    assert first.status_code == 204 and first.headers["x-ratelimit-remaining"] == "3"
    for header in HEADERS:
        assert header in first.headers, header
    assert client.get("/api/status").headers["x-ratelimit-remaining"] == "2"
    assert client.options("/api/names", headers=ask).headers["x-ratelimit-remaining"] == "2"
    assert [client.get("/api/status").status_code for _ in range(3)] == [200, 200, 429]
    spent = client.options("/ask", headers=ask)  # answered all the same: the browser learns of the 429 after it
    assert spent.status_code == 204 and spent.headers["x-ratelimit-remaining"] == "0"
    assert 1 <= int(spent.headers["retry-after"]) <= 60
    assert "x-ratelimit-limit" not in make_client(dist, rate_limit=0).options("/ask", headers=ask).headers


def test_429_after_the_budget(dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist)
    if time.time() % 60 > 50:  # windows follow the wall clock: one that ends midway weighs the requests less
        time.sleep(60.5 - time.time() % 60)
    for i in range(60):
        response = client.get("/api/names/apfel")
        assert response.status_code == 200, i
    assert response.headers["x-ratelimit-remaining"] == "0"
    limited = client.get("/api/names/apfel")
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    for header in HEADERS:
        assert header in limited.headers
    assert limited.headers["access-control-allow-origin"] == "*"


def test_budget_setting_and_off(dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist, rate_limit=2)
    assert [client.get("/api/status").status_code for _ in range(3)] == [200, 200, 429]
    off = make_client(dist, rate_limit=0)
    assert all(off.get("/api/status").status_code == 200 for _ in range(70))
    assert "x-ratelimit-limit" not in off.get("/api/status").headers


def test_window_counter_rolls_and_reset_counts_down() -> None:
    now = [600.0]  # windows are aligned to the clock: [600, 660), [660, 720), …
    counter = WindowCounter(limit=2, window=60, clock=lambda: now[0])
    assert counter.hit("a") == Decision(True, 1, 60, 0)
    now[0] = 630
    assert counter.hit("a") == Decision(True, 0, 30, 0)
    refused = counter.hit("a")
    assert (refused.allowed, refused.remaining, refused.reset) == (False, 0, 30)
    assert refused.retry_after == 31  # just after the next window starts, where the two weigh less than 2
    assert counter.hit("b").allowed  # budgets are per client
    now[0] = 675  # 15 s into the next window: 2 × 0.75 = 1.5 → 1 counted, one request left
    assert counter.hit("a") == Decision(True, 0, 45, 0)
    assert counter.hit("a").retry_after == 16  # at 690 the old two still weigh 2 × 0.5 = 1: just after it
    now[0] = 690
    assert not counter.hit("a").allowed
    now[0] = 691
    assert counter.hit("a").allowed
    now[0] = 1000  # two windows later: a fresh budget
    assert counter.hit("a") == Decision(True, 1, 20, 0)


def test_no_more_than_the_limit_in_any_rolling_window() -> None:
    """Whatever the timing, a client never gets more than `limit` requests per window plus the share the
    counter's approximation allows (the previous window counted in proportion)."""
    now = [0.0]
    counter = WindowCounter(limit=60, window=60, clock=lambda: now[0])
    allowed: list[float] = []
    for step in range(3000):  # one request every 0.1 s for 300 s
        now[0] = step * 0.1
        if counter.hit("a").allowed:
            allowed.append(now[0])
    for start in range(240):
        in_window = sum(1 for t in allowed if start <= t < start + 60)
        assert in_window <= 61, (start, in_window)
    assert len(allowed) >= 290  # and the sustained rate is the budget: ≈ 60 per minute


def test_keys_are_bounded_and_each_costs_constant_memory() -> None:
    now = [0.0]
    counter = WindowCounter(limit=5, window=60, clock=lambda: now[0], max_keys=1000)
    for i in range(5000):
        counter.hit(f"10.0.{i // 256}.{i % 256}")
    assert len(counter.counts) == 1000  # the least recently renewed keys were forgotten
    for _ in range(100):
        counter.hit("10.0.19.135")  # the newest key: still counted, one entry, three integers
    assert counter.counts["10.0.19.135"] == (0, 0, 5)


@pytest.mark.parametrize("peer, forwarded, trusted, expected", [
    ("1.2.3.4", "9.9.9.9", "", "1.2.3.4"),  # no trusted proxies: header ignored
    ("1.2.3.4", "9.9.9.9", "10.0.0.0/8", "1.2.3.4"),  # peer not trusted: header ignored
    ("10.0.0.5", "9.9.9.9", "10.0.0.0/8", "9.9.9.9"),
    ("10.0.0.5", "6.6.6.6, 9.9.9.9, 10.0.0.7", "10.0.0.0/8", "9.9.9.9"),  # spoofed left part ignored
    ("10.0.0.5", "10.0.0.6", "10.0.0.0/8", "10.0.0.5"),
    ("::1", "2001:db8::1", "::1/128", "2001:db8::/64"),  # IPv6: one key per /64
    ("2001:db8:1:2:3:4:5:6", "", "", "2001:db8:1:2::/64"),
    ("10.0.0.5", "not-an-ip", "10.0.0.0/8", "10.0.0.5"),  # junk falls back to the peer
    ("10.0.0.5", "9.9.9.9:443", "10.0.0.0/8", "10.0.0.5"),  # a port is not an IP
    ("10.0.0.5", "9.9.9.9, <script>", "10.0.0.0/8", "10.0.0.5"),  # the nearest hop is junk: believe none
    ("10.0.0.5", "9.9.9.9, ", "10.0.0.0/8", "10.0.0.5"),
    ("10.0.0.5", "::ffff:9.9.9.9", "10.0.0.0/8", "9.9.9.9"),  # IPv4-mapped IPv6 is the IPv4 client
])
def test_client_ip(peer: str, forwarded: str, trusted: str, expected: str) -> None:
    scope = {"client": (peer, 1234), "headers": [(b"x-forwarded-for", forwarded.encode())]}
    assert client_ip(scope, parse_networks(trusted)) == expected


def test_bad_trusted_proxy_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="'10.0.0.0/33' is not an IP address or CIDR network"):
        parse_networks("10.0.0.0/33")

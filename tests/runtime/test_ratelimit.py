"""Rate limit: headers on every status, 429 after the budget, rolling window, client IP, proxies."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from runtime.ratelimit import SlidingLog, client_ip
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


def test_429_after_the_budget(dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist)
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


def test_window_rolls() -> None:
    now = [0.0]
    log = SlidingLog(limit=2, window=60, clock=lambda: now[0])
    assert log.hit("a")[:2] == (True, 1)
    now[0] = 30
    assert log.hit("a")[:2] == (True, 0)
    assert log.hit("a") == (False, 0, 30.0)
    assert log.hit("b")[0] is True  # budgets are per client
    now[0] = 60.5  # the first request left the window
    assert log.hit("a")[:2] == (True, 0)
    now[0] = 500
    log.hit("c")
    assert set(log.hits) == {"c"}  # idle clients are forgotten


@pytest.mark.parametrize("peer, forwarded, trusted, expected", [
    ("1.2.3.4", "9.9.9.9", "", "1.2.3.4"),  # no trusted proxies: header ignored
    ("1.2.3.4", "9.9.9.9", "10.0.0.0/8", "1.2.3.4"),  # peer not trusted: header ignored
    ("10.0.0.5", "9.9.9.9", "10.0.0.0/8", "9.9.9.9"),
    ("10.0.0.5", "6.6.6.6, 9.9.9.9, 10.0.0.7", "10.0.0.0/8", "9.9.9.9"),  # spoofed left part ignored
    ("10.0.0.5", "10.0.0.6", "10.0.0.0/8", "10.0.0.5"),
    ("::1", "2001:db8::1", "::1/128", "2001:db8::1"),
])
def test_client_ip(peer: str, forwarded: str, trusted: str, expected: str) -> None:
    scope = {"client": (peer, 1234), "headers": [(b"x-forwarded-for", forwarded.encode())]}
    assert client_ip(scope, parse_networks(trusted)) == expected


def test_bad_trusted_proxy_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="'10.0.0.0/33' is not an IP address or CIDR network"):
        parse_networks("10.0.0.0/33")

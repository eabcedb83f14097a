"""The security headers (petgen/contract/security.py) on every kind of response, static and dynamic, success and
error, exactly once each; and in the CDN's `_headers` for every path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from petgen.build.pipeline import build
from petgen.contract.security import SECURITY_HEADERS
from tests.conftest import write_site
from tests.runtime.test_server import free_port, running_server

MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "sweep", "version": "1"}}}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("security")
    port = free_port()
    build(write_site(root / "content"), root / "dist", base_url=f"http://127.0.0.1:{port}")
    with running_server(root / "dist", port) as base:
        yield base, root / "dist"


def assert_secure(response: httpx.Response) -> None:
    where = f"{response.request.method} {response.request.url} → {response.status_code}"
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get_list(name) == [value], f"{name} on {where}"


def sweep(base: str, dist: Path) -> list[tuple[httpx.Response, set[int]]]:
    """One request of every kind the service answers, each with the statuses it may have."""
    routes = orjson.loads((dist / "_manifest.json").read_bytes())["routes"]
    hashed = "/" + routes["/api/names/schnucki"]["file"]
    css = next(route for route in routes if route.startswith("/assets/site."))
    with httpx.Client(base_url=base, timeout=10) as client:
        etag = client.get("/api/names/schnucki").headers["etag"]
        page_etag = client.get("/names/schnucki/").headers["etag"]
        list_etag = client.get("/api/names?limit=3").headers["etag"]
        ask = {"json": {"query": "Was bedeutet Schnucki?"}}
        return [
            (client.get("/api/names/schnucki"), {200}),  # static JSON
            (client.get("/names/schnucki/"), {200}),  # static HTML page
            (client.get("/"), {200}),
            (client.get("/docs"), {200}),
            (client.get("/categories/tiere/"), {200}),
            (client.get(hashed), {200}),  # hashed file
            (client.get(css), {200}),
            (client.get("/llms.txt"), {200}),
            (client.get("/.well-known/api-catalog"), {200}),  # a route with its own extra header
            (client.get("/api/names/schnucki", headers={"if-none-match": etag}), {304}),
            (client.get("/names/schnucki/", headers={"if-none-match": page_etag}), {304}),
            (client.head("/api/names/schnucki"), {200}),
            (client.head("/names/schnucki/"), {200}),
            (client.get("/api/names?limit=3"), {200}),  # computed at request time
            (client.get("/api/names?limit=3", headers={"if-none-match": list_etag}), {304}),
            (client.get("/api/names?limit=0"), {400}),
            (client.get("/api/names/nope"), {404}),  # JSON 404
            (client.get("/nope"), {404}),  # HTML 404
            (client.get("/names/nope/"), {404}),
            (client.delete("/api/names"), {405}),
            (client.get("/ask"), {405}),
            (client.post("/ask", content=b"x" * 100_000, headers={"content-type": "application/json"}), {413}),
            (client.post("/ask", **ask), {200}),  # type: ignore[arg-type]
            (client.post("/ask", headers={"prefer": "streaming=true"}, **ask), {200}),  # type: ignore[arg-type]
            (client.post("/mcp", json=INITIALIZE, headers=MCP), {200}),
            (client.post("/mcp", json=INITIALIZE, headers={**MCP, "accept": "text/html"}), {406}),
            (client.get("/api/search", params={"q": "schnucki"}), {200}),
            (client.get("/api/search", params={"q": "x"}), {400}),
            (client.get("/api/status"), {200}),
            (client.get("/api/names/Schnucki"), {301}),  # non-canonical slug
            (client.get("/api/names/schnucki/"), {301, 308}),  # trailing slash
            (client.options("/api/names", headers={"origin": "https://example.org",
                                                   "access-control-request-method": "GET"}), {200, 204}),
        ]


def test_every_kind_of_response_carries_the_security_headers(site: tuple[str, Path]) -> None:
    responses = sweep(*site)
    for response, statuses in responses:
        assert response.status_code in statuses, (response.request.url, response.status_code, response.text[:200])
        assert_secure(response)
    kinds = {response.headers.get("content-type", "").split(";")[0] for response, _ in responses}
    assert {"application/json", "text/html", "text/event-stream", "text/css", "text/markdown"} <= kinds


def test_rate_limited_responses_carry_them_too(tmp_path: Path) -> None:
    build(write_site(tmp_path / "content"), tmp_path / "dist")
    with running_server(tmp_path / "dist", rate_limit=1) as base, httpx.Client(base_url=base) as client:
        assert client.get("/api/names/schnucki").status_code == 200
        for path in ("/api/names/schnucki", "/names/schnucki/", "/api/status"):  # the static fast lane, the stack
            response = client.get(path)
            assert response.status_code == 429
            assert_secure(response)


def test_the_cdn_sends_them_for_every_path_in_one_rule(dist: Path) -> None:
    rules = (dist / "_headers").read_text().split("\n/")
    everything = next(rule for rule in rules if rule.startswith("*\n"))
    for name, value in SECURITY_HEADERS.items():
        assert f"\n  {name}: {value}\n" in everything + "\n"
        # … and in no other rule: a CDN may join a header set twice into one list, which for CSP
        # would mean two policies
        assert not [rule for rule in rules if rule is not everything and f"\n  {name}:" in rule]
    assert "/names/schnucki/\n" in "\n/".join(rules)  # the pages have their own rules (caching)

"""CORS: `*` by default, an operator's origin list when set; preflight and real request agree everywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from petgen.cli.main import _settings, cli
from runtime.settings import Settings, parse_origins

APP = "https://app.example"
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
# every kind of endpoint: each /api route, /ask, /mcp, the documents, /.well-known/*, a page
ENDPOINTS = ["/api/names", "/api/names?limit=2", "/api/names/schnucki", "/api/names/nope", "/api/categories",
             "/api/categories/tiere", "/api/search?q=ma", "/api/status", "/api/nothing", "/ask", "/mcp",
             "/openapi.json", "/docs", "/llms.txt", "/.well-known/api-catalog", "/.well-known/oauth-protected-resource",
             "/.well-known/mcp/server-card.json", "/.well-known/http-message-signatures-directory",
             "/mcp/server-card", "/names/schnucki/", "/"]
BODIES = {"/ask": b'{"query": "maus"}', "/mcp": b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'}
REQUIRED_ALLOWED = ["Prefer", "prefer.streaming", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID",
                    "Signature", "Signature-Input", "Signature-Agent", "Content-Type", "Accept", "If-None-Match",
                    "Authorization"]
REQUIRED_EXPOSED = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy",
                    "Retry-After", "ETag", "Mcp-Session-Id", "Location", "Link"]


def test_every_response_allows_any_origin(client: TestClient) -> None:
    for path in ("/api/names", "/api/names/nope", "/api/names?limit=0", "/names/apfel/", "/nothing"):
        response = client.get(path, headers={"Origin": "https://app.example"})
        assert response.headers["access-control-allow-origin"] == "*", path
        assert "vary" not in response.headers  # one answer for every origin: caches may share it
        assert "ETag" in response.headers["access-control-expose-headers"]


def preflight(client: TestClient, path: str, method: str, origin: str) -> dict[str, str]:
    response = client.options(path, headers={"Origin": origin, "Access-Control-Request-Method": method,
                                             "Access-Control-Request-Headers": "content-type, prefer"})
    assert response.status_code == 204, (path, method)
    return dict(response.headers)


def test_preflight_headers(client: TestClient) -> None:
    headers = preflight(client, "/mcp", "POST", APP)
    allowed = [h.strip().lower() for h in headers["access-control-allow-headers"].split(",")]
    assert all(name.lower() in allowed for name in REQUIRED_ALLOWED), allowed
    assert headers["access-control-max-age"] == "86400"
    exposed = [h.strip().lower() for h in client.get("/api/names").headers["access-control-expose-headers"].split(",")]
    assert all(name.lower() in exposed for name in REQUIRED_EXPOSED), exposed


def test_the_cdn_exposes_the_same_headers_as_the_runtime(client: TestClient, dist: Path) -> None:
    runtime = client.get("/api/names").headers["access-control-expose-headers"]
    assert f"  Access-Control-Expose-Headers: {runtime}\n" in (dist / "_headers").read_text(encoding="utf-8")


@pytest.mark.parametrize(("allowed_origins", "origin"), [((), APP), ((APP,), APP), ((APP,), "https://evil.example")])
def test_preflight_agrees_with_the_real_request_everywhere(dist: Path, make_client: Callable[..., TestClient],
                                                           allowed_origins: tuple[str, ...], origin: str) -> None:
    """For every endpoint and method: the preflight allows the method exactly when the real request is not
    refused with 405 (it allowed GET, HEAD and POST everywhere), and both carry the same allow-origin."""
    with make_client(dist, rate_limit=0, allowed_origins=allowed_origins) as client:
        for path in ENDPOINTS:
            for method in METHODS:
                before = preflight(client, path, method, origin)
                allowed = {m.strip() for m in before["access-control-allow-methods"].split(",")}
                real = client.request(method, path, content=BODIES.get(path), headers={
                    "Origin": origin, "Content-Type": "application/json", "Accept": "application/json"})
                if real.status_code != 404:  # a missing resource says nothing about methods
                    assert (method in allowed) == (real.status_code != 405), (path, method, real.status_code)
                assert before.get("access-control-allow-origin") == real.headers.get("access-control-allow-origin"), \
                    (path, method)
                if allowed_origins:
                    assert before["vary"] == real.headers["vary"] == "Origin", (path, method)


def test_restricted_origins_echo_only_the_allowed(dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist, rate_limit=0, allowed_origins=(APP, "http://localhost:5173"))
    for path in ("/api/names", "/openapi.json", "/api/names/nope", "/api/status"):  # fast lane and full stack
        ok = client.get(path, headers={"Origin": "http://localhost:5173"})
        assert ok.headers["access-control-allow-origin"] == "http://localhost:5173" and ok.headers["vary"] == "Origin"
        other = client.get(path, headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers and other.headers["vary"] == "Origin"
        assert other.status_code == ok.status_code  # CORS is the browser's to enforce; the data is public


def test_origin_setting_from_env_and_cli(tmp_path: Path) -> None:
    assert Settings.from_env({"PETGEN_ALLOWED_ORIGINS": f"{APP}/, HTTP://LOCALHOST:5173"}).allowed_origins == (
        APP, "http://localhost:5173")
    assert Settings.from_env({}).allowed_origins == () and parse_origins("*") == ()
    settings = _settings(tmp_path, tmp_path, 60, (), (APP, "http://localhost:5173,http://[::1]:8080"))
    assert settings.allowed_origins == (APP, "http://localhost:5173", "http://[::1]:8080")
    for bad in ("app.example", "https://app.example/path", "ftp://app.example", "https://app.example:port"):
        with pytest.raises(ValueError, match="is not an origin"):
            parse_origins(bad)
    result = CliRunner().invoke(cli, ["serve", "--allow-origin", "app.example", "--dist", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.endswith("Error: Invalid value for --allow-origin: 'app.example' is not an origin: write "
                                  "scheme://host[:port], e.g. https://app.example\n")
    assert "Built" not in result.output  # options are checked before anything is built

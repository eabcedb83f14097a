"""CORS `*` everywhere and preflight for the POST endpoints."""

from __future__ import annotations

from starlette.testclient import TestClient


def test_every_response_allows_any_origin(client: TestClient) -> None:
    for path in ("/api/names", "/api/names/nope", "/api/names?limit=0", "/names/apfel/", "/nothing"):
        response = client.get(path, headers={"Origin": "https://app.example"})
        assert response.headers["access-control-allow-origin"] == "*", path
        assert "ETag" in response.headers["access-control-expose-headers"]


def test_preflight_for_post_endpoints(client: TestClient) -> None:
    for path in ("/ask", "/mcp"):
        response = client.options(path, headers={
            "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, prefer"})
        assert response.status_code == 204
        assert response.headers["access-control-allow-origin"] == "*"
        assert "POST" in response.headers["access-control-allow-methods"]
        assert "Prefer" in response.headers["access-control-allow-headers"]
        assert response.headers["access-control-max-age"] == "86400"

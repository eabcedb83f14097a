"""Static routes from memory: ETag, 304, HEAD, Cache-Control, content type, hashed paths."""

from __future__ import annotations

from pathlib import Path

import orjson
from starlette.testclient import TestClient


def test_clean_url_has_etag_and_short_cache(client: TestClient) -> None:
    response = client.get("/api/names/schnucki")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=60, must-revalidate"
    assert response.headers["etag"].startswith('"') and len(response.headers["etag"]) == 14
    assert response.json()["slug"] == "schnucki"


def test_hashed_file_is_immutable(client: TestClient, dist: Path) -> None:
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    file = manifest["routes"]["/api/names/schnucki"]["file"]
    response = client.get(f"/{file}")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.headers["etag"] == f'"{manifest["routes"]["/api/names/schnucki"]["etag"]}"'


def test_if_none_match_gives_304_without_body(client: TestClient) -> None:
    etag = client.get("/api/names/schnucki").headers["etag"]
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        response = client.get("/api/names/schnucki", headers={"If-None-Match": header})
        assert response.status_code == 304, header
        assert response.content == b""
        assert response.headers["etag"] == etag
    assert client.get("/api/names/schnucki", headers={"If-None-Match": '"other"'}).status_code == 200


def test_head_has_headers_but_no_body(client: TestClient) -> None:
    get = client.get("/api/categories")
    head = client.head("/api/categories")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(get.content))
    assert head.headers["etag"] == get.headers["etag"]


def test_pages_are_served_as_html(client: TestClient) -> None:
    response = client.get("/names/oelprinz/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "<h1>Ölprinz</h1>" in response.text
    assert client.get("/").status_code == 200
    assert client.get("/categories/tiere/").status_code == 200


def test_every_manifest_route_is_served(client: TestClient, dist: Path) -> None:
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    for route, info in manifest["routes"].items():
        response = client.get(route)
        assert response.status_code == 200, route
        if route == "/api/status":  # answered live
            continue
        assert response.headers["etag"] == f'"{info["etag"]}"', route
        assert response.content == (dist / info["file"]).read_bytes(), route


def test_fast_lane_sends_what_the_middleware_stack_sends(dist: Path) -> None:
    """Static GET/HEAD take a shortcut past the middleware; the answer must not differ."""
    from runtime.app import create_app
    from runtime.http.observe import Observed
    from runtime.settings import Settings

    app = create_app(Settings(dist=dist, rate_limit=60))
    fast = TestClient(app, base_url="http://testserver")
    slow = TestClient(Observed(app.asgi), base_url="http://testserver")  # the full stack, no fast lane
    for path in ("/api/names/apfel", "/names/apfel/", "/api/categories"):
        a, b = fast.get(path), slow.get(path)
        assert a.status_code == b.status_code == 200
        assert a.content == b.content
        assert sorted(a.headers.keys()) == sorted(b.headers.keys()), path
        for name in ("etag", "cache-control", "content-type", "access-control-allow-origin", "x-ratelimit-limit"):
            assert a.headers[name] == b.headers[name]


def test_a_page_asked_for_with_the_other_slash_is_a_redirect_to_it(client: TestClient) -> None:
    """`/docs` is a page and `/categories/tiere/` one: the other spelling is a 301, not the 404 page."""
    docs = client.get("/docs/?x=1", follow_redirects=False)
    theme = client.get("/categories/tiere", follow_redirects=False)
    assert (docs.status_code, docs.headers["location"]) == (301, "/docs?x=1")
    assert (theme.status_code, theme.headers["location"]) == (301, "/categories/tiere/")
    assert client.get("/docs/").status_code == client.get("/categories/tiere").status_code == 200
    missing = client.get("/gibt-es-nicht/", follow_redirects=False)
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")

"""One error envelope everywhere; 500 without traceback; 413 for large bodies."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from petgen.contract.schemas import schema_for

ERROR = Draft202012Validator(schema_for("Error"))


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/api/names?limit=0", 400),
    ("GET", "/api/names/nope", 404),
    ("GET", "/api/categories/nope", 404),
    ("GET", "/api/unknown/path", 404),
    ("DELETE", "/api/names", 405),
    ("POST", "/api/names/apfel", 405),
    ("PUT", "/api/unknown", 404),
    ("GET", "/api", 404),
    ("GET", "/api/search", 400),
    ("POST", "/api/search?q=ab", 405),
    ("GET", "/ask", 405),
    ("PUT", "/ask", 405),
    ("POST", "/openapi.json", 405),
    ("DELETE", "/openapi.json", 405),
    ("GET", "/.well-known/nope", 404),
    ("GET", "/.well-known", 404),
    ("POST", "/.well-known/api-catalog", 405),
    ("PUT", "/.well-known/mcp/server-card.json", 405),
    ("GET", "/webhooks", 401),
    ("POST", "/webhooks", 401),
    ("DELETE", "/webhooks/wh_123", 401),
    ("PUT", "/webhooks", 405),
    ("GET", "/webhooks/wh_123/nope", 404),
    ("POST", "/names/apfel/", 405),
    ("GET", "/api/names/" + "x" * 5000, 404),
    ("GET", "/api/names?category=" + "x" * 5000, 400),
    ("GET", "/api/names?mood=" + "x" * 5000, 400),
    ("GET", "/api/search?q=%FF%FE", 400),  # not UTF-8: was searched for as two replacement characters
    ("GET", "/api/search?q=ma%C3", 400),  # a truncated sequence
    ("GET", "/api/names?category=%FF", 400),
])
def test_error_shape_on_every_endpoint(client: TestClient, method: str, path: str, status: int) -> None:
    response = client.request(method, path)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    body = response.json()
    assert list(ERROR.iter_errors(body)) == []
    assert body["error"]["message"] and len(body["error"]["message"]) < 300
    assert body["error"]["docs"] == f"http://testserver/docs#error-{body['error']['code']}"  # absolute
    assert body["license"] == "CC BY 4.0"
    if status == 405:
        assert response.headers["allow"]


@pytest.mark.parametrize("method", ["CONNECT", "PROPFIND", "PURGE", "PUT"])
@pytest.mark.parametrize("path, allow", [
    ("/mcp", "POST"), ("/mcp/", "POST"), ("/ask", "POST"), ("/ask/", "POST"),
    ("/api/names", "GET, HEAD"), ("/api/names/apfel", "GET, HEAD"), ("/api/categories", "GET, HEAD"),
    ("/api/search", "GET, HEAD"), ("/openapi.json", "GET, HEAD"), ("/.well-known/api-catalog", "GET, HEAD"),
    ("/webhooks", "GET, HEAD, POST"), ("/webhooks/wh_1", "GET, HEAD, DELETE"), ("/webhooks/wh_1/rotate", "POST"),
    ("/names/apfel/", "GET, HEAD"), ("/", "GET, HEAD"),
])
def test_405_names_the_methods_of_the_path_in_a_stable_order(client: TestClient, method: str, path: str,
                                                               allow: str) -> None:
    """Methods no route lists (CONNECT, PROPFIND, …) fell to Starlette, whose Allow header named every method of
    every route matching the path, in an order that changed between runs."""
    response = client.request(method, path)
    assert response.status_code == 405 and response.headers["allow"] == allow, (response.headers, response.text)
    body = response.json()
    assert (body["error"]["data"]["code"] if path.startswith("/mcp") else body["error"]["code"]) == \
        "method_not_allowed", body


@pytest.mark.parametrize("path, location", [
    ("/api/categories/", "/api/categories"),
    ("/api/names/", "/api/names"),
    ("/api/names/?limit=5", "/api/names?limit=5"),
    ("/api/names/apfel/", "/api/names/apfel"),
    ("/api/categories/tiere/", "/api/categories/tiere"),
    ("/api/status/", "/api/status"),
    ("/api/search/?q=maus", "/api/search?q=maus"),
    ("/openapi.json/", "/openapi.json"),
])
def test_trailing_slash_is_a_308_to_the_canonical_path(client: TestClient, path: str, location: str) -> None:
    response = client.get(path, follow_redirects=False)
    assert response.status_code == 308 and response.headers["location"] == location
    assert client.get(path).status_code in (200, 404)  # and the target answers


@pytest.mark.parametrize("path, location", [
    ("/api/categories/Tiere", "/api/categories/tiere"),
    ("/api/categories/F%C3%BCr-Sie", "/api/categories/fuer-sie"),
    ("/api/categories/m%C3%A4rchen?x=1", "/api/categories/maerchen?x=1"),
    ("/categories/Tiere/", "/categories/tiere/"),
    ("/categories/f%C3%BCr-sie/", "/categories/fuer-sie/"),
    ("/categories/M%C3%A4rchen", "/categories/maerchen/"),
])
def test_another_spelling_of_a_category_is_a_301(client: TestClient, path: str, location: str) -> None:
    """Upper case and umlauts, as a name's slug is (`/api/names/B%C3%A4rchen`): `für-sie` and the pages' `Tiere`
    were 404."""
    response = client.get(path, follow_redirects=False)
    assert response.status_code == 301 and response.headers["location"] == location, response.text
    assert client.get(path).status_code == 200


def test_an_unknown_category_points_at_search_and_the_lists(client: TestClient) -> None:
    """Error rule 2 of the contract: the message names the slug, the hint points at search and list endpoints."""
    body = client.get("/api/categories/tire").json()["error"]
    assert body["code"] == "not_found" and "'tire'" in body["message"]
    assert "did you mean 'tiere' (/api/categories/tiere)" in body["hint"]
    assert "/api/search?q=tire" in body["hint"] and "/api/categories" in body["hint"]
    assert client.get("/categories/nirgends/").status_code == 404


def test_post_endpoints_with_a_trailing_slash(client: TestClient) -> None:
    """POST /ask/ and /mcp/ were 405 with `Allow: HEAD, GET` (and GET an HTML 404): now a POST is a 308 that
    keeps method and body, and other methods are refused as on /ask and /mcp."""
    bodies = {"/ask/": b'{"query": "maus"}', "/mcp/": b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'}
    headers = {"content-type": "application/json", "accept": "application/json"}
    with client:  # the MCP session manager runs in the lifespan
        for path, body in bodies.items():
            redirect = client.post(path, content=body, headers=headers, follow_redirects=False)
            assert redirect.status_code == 308 and redirect.headers["location"] == path.rstrip("/"), path
            followed = client.post(path, content=body, headers=headers)
            assert followed.status_code == 200 and ("_meta" in followed.json() or followed.json()["result"] == {})
            refused = client.get(path)
            assert refused.status_code == 405 and refused.headers["allow"] == "POST", path
            preflight = client.options(path, headers={"origin": "https://app.example",
                                                      "access-control-request-method": "POST"})
            assert preflight.headers["access-control-allow-methods"] == "POST", path
        assert client.get("/mcp/").json()["error"]["code"] == -32600  # JSON-RPC, like every /mcp error
        assert client.get("/ask/").json()["error"]["code"] == "method_not_allowed"


def test_a_trailing_slash_keeps_the_method_through_its_308(client: TestClient) -> None:
    response = client.post("/api/categories/", follow_redirects=False)
    assert response.status_code == 308 and response.headers["location"] == "/api/categories"
    assert client.post("/api/categories/").status_code == 405  # followed: the path answers GET and HEAD only


def test_every_documented_error_code_has_an_anchor_on_the_docs_page(client: TestClient) -> None:
    from petgen.contract.errors import ERROR_CODES

    page = client.get("/docs").text
    for error in ERROR_CODES:
        assert f'id="error-{error.code}"' in page


def test_unhandled_exception_is_500_envelope(dist: Path, make_client: Callable[..., TestClient],
                                             caplog: pytest.LogCaptureFixture) -> None:
    client = make_client(dist, rate_limit=0)
    client.app.runtime.dist.items = None  # type: ignore[attr-defined]  # breaks computed pages
    response = client.get("/api/names?limit=3")
    assert response.status_code == 500
    assert response.json()["error"] == {"code": "internal_error", "message": "Internal server error.",
                                        "hint": "the error was logged; try again later",
                                        "docs": "http://testserver/docs#error-internal_error"}
    assert "Traceback" not in response.text and "TypeError" not in response.text
    assert response.headers["access-control-allow-origin"] == "*"
    assert "unhandled error on GET /api/names" in caplog.text


def test_body_over_limit_is_413(dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist, rate_limit=0, max_body=100)
    response = client.post("/api/names", content=b"x" * 101)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"



def test_streamed_body_over_limit_is_413() -> None:
    """Without Content-Length the body is counted as the app reads it."""
    from runtime.http.guard import GuardMiddleware

    async def reader(scope, receive, send):  # type: ignore[no-untyped-def]
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"read"})

    chunks = [{"type": "http.request", "body": b"x" * 80, "more_body": True},
              {"type": "http.request", "body": b"x" * 80, "more_body": False}]
    sent: list[dict] = []

    async def receive():  # type: ignore[no-untyped-def]
        return chunks.pop(0)

    async def send(message):  # type: ignore[no-untyped-def]
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/ask", "headers": []}
    asyncio.run(GuardMiddleware(reader, max_body=100)(scope, receive, send))
    assert sent[0]["status"] == 413

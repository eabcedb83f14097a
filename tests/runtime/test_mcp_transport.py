"""The HTTP side of /mcp against real servers: every refusal a JSON-RPC error, Accept negotiated, origins."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from runtime.mcp.transport import envelope_as_rpc_error, host_allowed, negotiate
from tests.conftest import write_site
from tests.runtime.test_server import running_server

PING = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
H = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
APP = "https://app.example"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-transport")
    build(write_site(root / "content"), root / "dist", base_url="http://127.0.0.1")
    return root / "dist"


@pytest.fixture(scope="module")
def open_base(dist: Path) -> Iterator[str]:
    with running_server(dist) as base:
        yield base


@pytest.fixture(scope="module")
def restricted_base(dist: Path) -> Iterator[str]:
    with running_server(dist, allowed_origins=(APP,)) as base:
        yield base


def post(base: str, body: bytes = PING, **headers: str | None) -> httpx.Response:
    sent = {k: v for k, v in {**H, **headers}.items() if v is not None}
    return httpx.post(base + "/mcp", content=body, headers=sent)


def rpc_error(response: httpx.Response, status: int, code: int, request_id: Any = 7) -> dict[str, Any]:
    """A JSON-RPC error response: the status, the code, the request's id, a one-line message."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"} and body["jsonrpc"] == "2.0" and body["id"] == request_id
    error = body["error"]
    assert error["code"] == code and "\n" not in error["message"] and "pydantic" not in error["message"]
    return error


def test_transport_refusals_are_json_rpc_errors_with_the_request_id(open_base: str) -> None:
    """The SDK answered 421 and 403 in plain text and 406 without the id; now each is a JSON-RPC error."""
    misdirected = rpc_error(post(open_base, host="evil.example"), 421, -32600)
    assert misdirected["data"]["code"] == "misdirected_request" and "evil.example" in misdirected["message"]
    assert rpc_error(post(open_base, **{"content-type": "text/plain"}), 415, -32600)["data"]["code"] == \
        "unsupported_media_type"
    assert rpc_error(post(open_base, accept="text/html"), 406, -32600)["data"]["code"] == "not_acceptable"
    for method in ("GET", "DELETE", "PUT"):
        response = httpx.request(method, open_base + "/mcp", headers={"accept": "text/event-stream"}, timeout=5)
        assert rpc_error(response, 405, -32600, None)["data"]["code"] == "method_not_allowed"
        assert response.headers["allow"] == "POST"
    big = post(open_base, b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"' + b"a" * 70_000 + b'"}}')
    assert rpc_error(big, 413, -32600, None)["data"]["code"] == "payload_too_large"


def test_rate_limited_mcp_call_is_a_json_rpc_error(dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist, rate_limit=1)
    headers = {**H, "origin": APP}
    assert client.post("/api/status").status_code == 405  # spends the budget of one
    limited = client.post("/mcp", content=PING, headers=headers)
    error = rpc_error(limited, 429, -32010, None)
    assert error["data"]["code"] == "rate_limited" and limited.headers["retry-after"]
    assert limited.headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize(("body", "status", "code", "request_id"), [
    (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', 400, -32600, 7),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}', 400, -32600, None),
    (b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":[]}', 400, -32602, 7),
    (b'{"jsonrpc":"2.0","id":7,"result":5}', 400, -32600, 7),
    (b"{nope", 400, -32700, None),
])
def test_bad_envelopes_get_the_spec_code(open_base: str, body: bytes, status: int, code: int, request_id: Any) -> None:
    """The SDK answered these with a pydantic dump under -32602, or (`id: 1.0`, `id: 1e400`) not at all."""
    rpc_error(post(open_base, body), status, code, request_id)


@pytest.mark.parametrize(("request_id", "said"), [
    (b"1.5", "not a number with a fraction"), (b"{}", "not an object"), (b"[1]", "not an array"),
    (b"true", "not a boolean"), (b"9007199254740992", "not a number beyond that range"),
    (b"null", "null is not allowed in requests"),
])
def test_an_invalid_id_is_named_for_what_it_is(open_base: str, request_id: bytes, said: str) -> None:
    """`"id": 1.5` was refused with '… null is not allowed in requests', which it was not."""
    body = b'{"jsonrpc":"2.0","id":' + request_id + b',"method":"ping"}'
    message = rpc_error(post(open_base, body), 400, -32600, None)["message"]
    assert message.startswith("Invalid Request: 'id' must be a string or an integer") and said in message, message


def test_an_integral_float_id_is_answered_as_an_integer(open_base: str) -> None:
    response = post(open_base, b'{"jsonrpc":"2.0","id":7.0,"method":"ping"}')
    assert response.status_code == 200 and response.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_notifications_and_responses_are_accepted(open_base: str) -> None:
    for body in (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', b'{"jsonrpc":"2.0","id":3,"result":{}}'):
        response = post(open_base, body, **{"mcp-protocol-version": "2025-06-18"})
        assert response.status_code == 202 and response.content == b"" and "content-type" not in response.headers


@pytest.mark.parametrize(("accept", "mode"), [
    (None, "json"), ("", "json"), ("*/*", "json"), ("application/json", "json"), ("application/*", "json"),
    ("application/json, text/event-stream", "json"), ("text/event-stream, application/json;q=0.5", "json"),
    ("text/event-stream", "sse"), ("text/*", "sse"), ("application/json;q=0, text/event-stream", "sse"),
    ("text/html", None), ("application/json;q=0", None), ("image/*, text/plain", None),
])
def test_negotiate(accept: str | None, mode: str | None) -> None:
    assert negotiate(accept) == mode


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "text/event-stream",
                                    "text/event-stream, application/json"])
def test_every_accept_that_allows_json_or_sse_gets_a_streamable_http_answer(open_base: str,
                                                                              accept: str | None) -> None:
    """The SDK answered 406 to `text/event-stream` alone and to a missing Accept header."""
    response = post(open_base, accept=accept)
    assert response.status_code == 200, response.text
    if accept == "text/event-stream":
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.text.splitlines()
        assert lines[0] == "event: message" and lines[1].startswith("data: ")
        data = orjson.loads(lines[1].removeprefix("data: "))
    else:
        assert response.headers["content-type"].startswith("application/json")
        data = response.json()
    assert data == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_any_origin_may_call_by_default(open_base: str) -> None:
    """The SDK's DNS-rebinding check refused every Origin but the service's own (403, plain text)."""
    for origin in (APP, "null", "http://localhost:5173"):
        response = post(open_base, origin=origin)
        assert response.status_code == 200 and response.json()["result"] == {}, origin
        assert response.headers["access-control-allow-origin"] == "*"


def test_restricted_origins_refuse_others_with_403(restricted_base: str) -> None:
    allowed = post(restricted_base, origin=APP)
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == APP
    assert post(restricted_base).status_code == 200  # no Origin: not a browser, nothing to check
    refused = post(restricted_base, origin="https://evil.example")
    error = rpc_error(refused, 403, -32600)
    assert error["data"]["code"] == "forbidden" and APP in error["data"]["hint"]  # the catalogue's code for 403
    assert "access-control-allow-origin" not in refused.headers
    # the Host check stays in force, and wins
    assert rpc_error(post(restricted_base, origin=APP, host="evil.example"), 421, -32600)


def test_media_types_are_case_insensitive(open_base: str) -> None:
    """The endpoint let `Application/JSON` pass, then the SDK refused it: 415, a null id and its own message."""
    for content_type in ("Application/JSON", "APPLICATION/JSON; charset=UTF-8"):
        response = post(open_base, **{"content-type": content_type})
        assert response.status_code == 200 and response.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


@pytest.mark.parametrize(("host", "allowed"), [
    ("kosenamen.example", True), ("Kosenamen.Example", True), ("kosenamen.example:443", True),
    ("127.0.0.1:8000", True), ("localhost", True), ("[::1]:8000", True), ("evil.example", False),
    ("kosenamen.example.evil.example", False), ("", False), ("127.0.0.1:80.evil.example", False),
    ("localhost:x", False), ("localhost:٨٠", False), ("[::1]evil", False), ("127.0.0.1:", True),
])
def test_host_allowed(host: str, allowed: bool) -> None:
    assert host_allowed(host, "kosenamen.example") is allowed
    assert host_allowed("[2001:db8::1]:8443", "[2001:db8::1]:8443")


@pytest.mark.parametrize(("status", "code"), [(429, -32010), (413, -32600), (405, -32600), (500, -32603)])
def test_the_service_envelope_becomes_a_json_rpc_error(status: int, code: int) -> None:
    envelope = {"error": {"code": "x_y", "message": "Something.", "hint": "do this", "docs": "https://d.example/"},
                "license": {"name": "CC BY 4.0"}}
    answer = orjson.loads(envelope_as_rpc_error(status, orjson.dumps(envelope)))
    assert answer == {"jsonrpc": "2.0", "id": None, "error": {
        "code": code, "message": "Something.", "data": {"code": "x_y", "hint": "do this", "docs": "https://d.example/"}}}
    for other in (b"not json", b'{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"x"}}', b"[]"):
        assert envelope_as_rpc_error(status, other) == other

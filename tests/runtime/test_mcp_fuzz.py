"""Property: whatever is POSTed to /mcp, the answer is a JSON-RPC response (or 202 for a notification or a
response), never a 5xx, and nothing reaches the log at error level or with a traceback.

Random messages of every shape: valid and invalid envelopes, known and made-up methods, ids of every JSON
type and size, params that fit and that do not, tool calls with random arguments, batches, garbage bytes;
under every protocol version header and several Accept headers. Bounded and derandomized, so CI runs the
same 200 examples each time in a few seconds.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from runtime.app import create_app
from runtime.mcp.jsonrpc import SAFE_INTEGER
from runtime.settings import Settings
from tests.conftest import BASE_URL, write_site

METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
           "resources/templates/list", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
           "resources/subscribe", "server/discover", "subscriptions/listen", "notifications/initialized",
           "notifications/cancelled", "notifications/progress"]
TOOLS = ["list_names", "get_name", "list_categories", "search", "nope"]
VERSIONS = [None, "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01", "garbage"]
ACCEPTS = [None, "application/json, text/event-stream", "application/json", "text/event-stream", "*/*"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 64, 2 ** 64), st.floats(allow_nan=False,
                    allow_infinity=False), st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=10), inner, max_size=4), max_leaves=12)
valid_ids = st.integers(-SAFE_INTEGER, SAFE_INTEGER) | st.text(max_size=30)
ids = st.one_of(valid_ids, st.integers(), st.none(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                st.just([]), st.just({}))
arguments = st.dictionaries(st.sampled_from(["category", "mood", "limit", "offset", "slug", "query", "recipient",
                                             "language", "extra"]), scalars | json_values, max_size=4)
envelope = st.fixed_dictionaries({  # what a 2026-07-28 request carries in params._meta
    "io.modelcontextprotocol/protocolVersion": st.sampled_from(VERSIONS[1:]),
    "io.modelcontextprotocol/clientCapabilities": st.just({}) | json_values})
params = st.one_of(
    json_values,
    st.fixed_dictionaries({"name": st.sampled_from(TOOLS + ["find_petname"]) | st.text(max_size=10)},
                          optional={"arguments": arguments | json_values, "_meta": envelope}),
    st.fixed_dictionaries({"uri": st.sampled_from(["petname://names", "petname://names/baerchen",
                                                   "petname://names/x", "petname://nope"]) | json_values},
                          optional={"_meta": envelope}),
    st.fixed_dictionaries({"protocolVersion": st.sampled_from(VERSIONS[1:]) | json_values,
                           "capabilities": st.just({}) | json_values,
                           "clientInfo": st.just({"name": "fuzz", "version": "1"}) | json_values}),
    st.fixed_dictionaries({}, optional={"_meta": envelope, "cursor": json_values}),
)
well_formed = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": valid_ids, "method": st.sampled_from(METHODS)},
                                    optional={"params": params})
notifications = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": st.sampled_from(METHODS)},
                                      optional={"params": params})
anything = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0]) | json_values,
    "id": ids,
    "method": st.sampled_from(METHODS) | st.text(max_size=20) | json_values,
    "params": params,
    "result": json_values,
    "error": st.fixed_dictionaries({"code": st.integers() | json_values, "message": st.text(max_size=10)}),
})


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()  # the standard library writes integers of any size; orjson stops at 64 bits


bodies = st.one_of(well_formed.map(dumps), well_formed.map(dumps), well_formed.map(dumps), notifications.map(dumps),
                   anything.map(dumps), st.lists(well_formed | anything, max_size=3).map(dumps),
                   json_values.map(dumps), st.binary(max_size=64))


@pytest.fixture(scope="module")
def mcp_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("fuzz")
    build(write_site(root / "content"), root / "dist", base_url=BASE_URL)
    app = create_app(Settings(dist=Path(root / "dist"), rate_limit=0))
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as client:  # lifespan: the SDK runs
        yield client


def expected_id(body: bytes) -> Any:
    """The id the answer must carry: the message's own id when it is a valid one."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    value = message.get("id") if isinstance(message, dict) else None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer() \
            and abs(value) <= SAFE_INTEGER:
        return int(value)
    return None


@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=bodies, version=st.sampled_from(VERSIONS), accept=st.sampled_from(ACCEPTS), name_header=st.booleans())
def test_any_message_gets_a_json_rpc_answer(mcp_client: TestClient, caplog: pytest.LogCaptureFixture, body: bytes,
                                            version: str | None, accept: str | None, name_header: bool) -> None:
    headers = {"content-type": "application/json"}
    if accept is not None:
        headers["accept"] = accept
    if version is not None:
        headers["mcp-protocol-version"] = version
    if name_header:  # the 2026-07-28 routing header, right or wrong
        try:
            method = orjson.loads(body).get("method")
        except (orjson.JSONDecodeError, AttributeError):
            method = None
        headers["mcp-method"] = method if isinstance(method, str) and method.isascii() else "ping"
    caplog.clear()
    with caplog.at_level(logging.INFO):
        response = mcp_client.post("/mcp", content=body, headers=headers)
    event(f"HTTP {response.status_code}")  # --hypothesis-show-statistics: how many reached the MCP server
    assert response.status_code < 500, response.text
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert logged == [], [r.getMessage() for r in logged]
    if response.status_code == 202:
        assert response.content == b""
        message = orjson.loads(body)
        assert isinstance(message, dict) and ("method" in message or "result" in message or "error" in message)
        assert "id" not in message or "method" not in message  # a request is always answered
        return
    content_type = response.headers["content-type"]
    if content_type.startswith("text/event-stream"):
        assert accept == "text/event-stream" and response.status_code == 200
        data = [line for line in response.text.splitlines() if line.startswith("data: ")]
        answer = orjson.loads(data[-1].removeprefix("data: "))
    else:
        assert content_type.startswith("application/json"), content_type
        answer = orjson.loads(response.content)
    assert isinstance(answer, dict) and answer["jsonrpc"] == "2.0" and "id" in answer
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error["code"], int) and error["code"] != 0, error
        assert isinstance(error["message"], str) and "\n" not in error["message"], error
        assert "Traceback" not in error["message"] and "errors.pydantic.dev" not in error["message"], error
        assert answer["id"] in (None, expected_id(body)), (answer, body)
    else:
        assert response.status_code == 200 and answer["id"] == expected_id(body), (answer, body)

"""The fast path for `tools/call` of `search` (runtime/mcp/server.py `fast_search`): byte for byte the SDK's answer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from runtime.mcp.transport import McpEndpoint

H = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
CALLS: list[tuple[Any, dict[str, Any]]] = [
    (1, {"query": "maus"}),
    (2, {"query": "  little   mouse ", "limit": 3}),
    ("id \"quoted\" ü 🐭", {"query": "Bärchen", "limit": 50}),
    (-4, {"query": "xqzjv wpfk"}),  # no match: suggestions
    (5, {"query": "süß\nherz\t\"zitat\" \\ \u2028", "limit": 1}),
    (6, {"query": "ab"}),
]
VERSIONS = [None, "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def endpoint(client: TestClient) -> McpEndpoint:
    router = client.portal.call(client.app.starlette.state.mcp.ready)  # type: ignore[attr-defined, union-attr]
    # /mcp is loaded on first use (runtime/mcp/lazy.py): its routes are those of the loaded router
    found = [r.app for r in router.routes if isinstance(r, Route) and r.path == "/mcp" and isinstance(r.app, McpEndpoint)]
    assert len(found) == 1
    return found[0]


def call(client: TestClient, request_id: Any, arguments: dict[str, Any], version: str | None,
         **params: Any) -> tuple[int, bytes, str]:
    headers = {**H, **({"mcp-protocol-version": version} if version else {})}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "search", "arguments": arguments, **params}}
    response = client.post("/mcp", content=orjson.dumps(body), headers=headers)
    return response.status_code, response.content, response.headers["content-type"]


def test_fast_search_answers_byte_for_byte_as_the_sdk(dist: Path, make_client: Callable[..., TestClient]) -> None:
    with make_client(dist, rate_limit=0) as client:
        mcp = endpoint(client)
        fast = mcp.fast
        assert fast is not None
        for version in VERSIONS:
            for request_id, arguments in CALLS:
                mcp.fast = fast
                ours = call(client, request_id, arguments, version)
                assert fast({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                             "params": {"name": "search", "arguments": arguments}}) is not None
                mcp.fast = None
                sdks = call(client, request_id, arguments, version)
                assert ours == sdks
                assert ours[0] == 200 and orjson.loads(ours[1])["result"]["isError"] is False


@pytest.mark.parametrize(("arguments", "params"), [
    ({"query": "m"}, {}),  # too short: the SDK's tool error
    ({"query": "maus", "limit": 0}, {}),
    ({"query": "maus", "limit": True}, {}),
    ({"query": "maus", "limit": "5"}, {}),
    ({"query": "maus", "limt": 5}, {}),
    ({"query": 5}, {}),
    ({"query": "maus"}, {"_meta": {"progressToken": 1}}),
])
def test_anything_but_a_plain_valid_search_goes_to_the_sdk(dist: Path, make_client: Callable[..., TestClient],
                                                            arguments: dict[str, Any], params: dict[str, Any]) -> None:
    with make_client(dist, rate_limit=0) as client:
        fast = endpoint(client).fast
        assert fast is not None
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "search", "arguments": arguments, **params}}
        assert fast(rpc) is None
        status, body, _ = call(client, 1, arguments, None, **params)
        assert status == 200 and "result" in orjson.loads(body)


def test_other_methods_and_tools_are_not_taken(dist: Path, make_client: Callable[..., TestClient]) -> None:
    with make_client(dist, rate_limit=0) as client:
        fast = endpoint(client).fast
        assert fast is not None
        assert fast({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) is None
        assert fast({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "search",
                                                                          "arguments": {"query": "maus"}}}) is None
        assert fast({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "get_name", "arguments": {"slug": "maus"}}}) is None

"""The MCP server: the official SDK client against a real server, in both protocol modes, and raw JSON-RPC."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from petgen.build import build
from tests.conftest import REPO
from tests.runtime.test_server import free_port, running_server

H = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def mcp_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    dist = tmp_path_factory.mktemp("mcp") / "dist"
    build(REPO / "content", dist, base_url=f"http://127.0.0.1:{port}")
    with running_server(dist, port) as base:
        yield base


def structured(result: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """Check a tool result: no error, structured content valid, and the same JSON as text."""
    assert not result.is_error, result.content
    data = result.structured_content
    assert list(Draft202012Validator(schema).iter_errors(data)) == []
    assert orjson.loads(result.content[0].text) == data
    return data


async def session(base: str, mode: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    async with Client(base + "/mcp", mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"list_names", "get_name", "list_categories", "search"}
        for tool in tools.values():
            assert tool.title and tool.description and tool.input_schema["type"] == "object"
            assert tool.output_schema and tool.output_schema["type"] == "object"
            assert tool.annotations and tool.annotations.read_only_hint is True
        page = structured(await client.call_tool("list_names", {"category": "tiere", "limit": 3}),
                          tools["list_names"].output_schema)
        assert len(page["items"]) == 3 and page["nextUrl"].endswith("category=tiere&limit=3&offset=3")
        name = structured(await client.call_tool("get_name", {"slug": "spatzl"}), tools["get_name"].output_schema)
        assert name["title"] == "Spatzl" and name["license"]["name"] == "CC BY 4.0"
        cats = structured(await client.call_tool("list_categories", {}), tools["list_categories"].output_schema)
        assert any(c["slug"] == "regional" for c in cats["items"])
        hits = structured(await client.call_tool("search", {"query": "little mouse", "limit": 5}),
                          tools["search"].output_schema)
        assert hits["items"] and all(isinstance(h["score"], float | int) for h in hits["items"])

        unknown = await client.call_tool("get_name", {"slug": "baerchn"})
        assert unknown.is_error and "Did you mean 'baerchen'?" in unknown.content[0].text
        bad = await client.call_tool("list_names", {"category": "tierchen"})
        assert bad.is_error and "Did you mean 'tiere'?" in bad.content[0].text and "Valid values:" in bad.content[0].text
        too_big = await client.call_tool("search", {"query": "maus", "limit": 500})
        assert too_big.is_error
        assert too_big.content[0].text == ("Invalid arguments for search: limit: Input should be less than or equal "
                                           "to 50. The tool's inputSchema lists every argument with its type and "
                                           "bounds.")

        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert uris == {"petname://names", "petname://categories", "petname://corpus"}
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        assert templates == ["petname://names/{slug}"]
        for uri in sorted(uris) + ["petname://names/baerchen"]:
            found[uri] = (await client.read_resource(uri)).contents[0].text
        with pytest.raises(Exception) as missing:
            await client.read_resource("petname://names/baerchn")
        assert "Did you mean 'baerchen'?" in str(missing.value)
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["find_petname"]
        prompt = await client.get_prompt("find_petname", {"recipient": "my girlfriend", "mood": "verspielt",
                                                          "language": "en"})
        found["prompt"] = prompt.messages[0].content.text
    return found


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_official_client(mcp_base: str, mode: str) -> None:
    found = asyncio.run(session(mcp_base, mode))
    assert orjson.loads(found["petname://names"])["total"] >= 250
    assert orjson.loads(found["petname://names/baerchen"])["slug"] == "baerchen"
    with httpx.Client(base_url=mcp_base) as http:
        assert found["petname://corpus"] == http.get("/llms-full.txt").text
    assert "`search`" in found["prompt"] and "CC BY 4.0" in found["prompt"] and "English" in found["prompt"]


def rpc(base: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(base + "/mcp", content=body, headers={**H, **headers})


def test_raw_json_rpc(mcp_base: str) -> None:
    parse = rpc(mcp_base, b"{nope")
    assert parse.status_code == 400 and parse.json()["error"]["code"] == -32700
    unknown = rpc(mcp_base, b'{"jsonrpc":"2.0","id":1,"method":"nope/nope","params":{}}')
    assert unknown.json()["error"]["code"] == -32601
    invalid = rpc(mcp_base, b'{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{}}',
                  **{"mcp-protocol-version": "2025-06-18"})
    assert invalid.json()["error"]["code"] == -32602
    notification = rpc(mcp_base, b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                       **{"mcp-protocol-version": "2025-06-18"})
    assert notification.status_code == 202 and notification.content == b""
    for method in ("GET", "DELETE"):
        response = httpx.request(method, mcp_base + "/mcp", headers={"accept": "text/event-stream"}, timeout=5)
        assert response.status_code == 405 and response.json()["error"]["code"] == -32600
        assert response.headers["allow"] == "POST"


def test_limits_cors_and_host_checks(mcp_base: str) -> None:
    listed = rpc(mcp_base, b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}')
    assert listed.status_code == 200 and listed.headers["x-ratelimit-limit"] == "1000"
    assert listed.headers["access-control-allow-origin"] == "*"
    assert rpc(mcp_base, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', host="evil.example").status_code == 421
    big = rpc(mcp_base, b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * 70_000 + b'"}}')
    assert big.status_code == 413 and big.json()["error"]["data"]["code"] == "payload_too_large"


def test_host_check_accepts_the_public_host(tmp_path: Path) -> None:
    """A deployment's base_url host must pass, or every real client gets 421; any Origin may call by default."""
    build(REPO / "content", tmp_path / "dist", base_url="https://kosenamen.example")
    with running_server(tmp_path / "dist") as base:
        for origin in ("https://kosenamen.example", "https://app.example"):
            ok = rpc(base, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', host="kosenamen.example", origin=origin)
            assert ok.status_code == 200 and ok.json()["result"] == {}, origin
            assert ok.headers["access-control-allow-origin"] == "*"

"""The MCP server: the official SDK client against a real server, in both protocol modes, and raw JSON-RPC."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.server.mcpserver.prompts.base import Prompt

from petgen.build.pipeline import build
from petgen.contract import mcp as mcpspec
from petgen.contract.limits import MCP_MAX_DEPTH
from runtime.mcp.server import build_mcp
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
        assert name["title"] == "Spatzl" and name["license"] == "CC BY 4.0"
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


@pytest.mark.parametrize("depth", [MCP_MAX_DEPTH + 1, 253, 300, 1000])
def test_a_deeply_nested_message_is_an_invalid_request_not_a_500(mcp_base: str, depth: int,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """orjson parses 1,024 levels but encodes 254: a message between the two reached the SDK's re-encoding and
    came back 500 with id null. It is refused by its depth, with its id."""
    inner = b"[" * (depth - 3) + b"]" * (depth - 3)  # the message, params and _meta are three levels
    body = b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"x":' + inner + b"}}}"
    answer = rpc(mcp_base, body)
    assert answer.status_code == 400 and answer.json()["id"] == 7, answer.text
    assert answer.json()["error"]["code"] == -32600 and str(MCP_MAX_DEPTH) in answer.json()["error"]["message"]
    shallow = b'{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"x":' + inner[:MCP_MAX_DEPTH - 4] \
        + inner[-(MCP_MAX_DEPTH - 4):] + b"}}}"
    assert rpc(mcp_base, shallow).status_code == 200
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


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


def call(base: str, method: str, params: dict[str, Any], version: str = "2025-11-25") -> dict[str, Any]:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 9, "method": method, "params": params})
    response = rpc(base, body, **{"mcp-protocol-version": version})
    assert response.status_code == 200, response.text
    return response.json()


def invalid_params(answer: dict[str, Any]) -> str:
    assert answer["id"] == 9 and answer["error"]["code"] == -32602, answer
    message = answer["error"]["message"]
    assert "\n" not in message and "pydantic" not in message and "Traceback" not in message
    return message


def test_protocol_errors_are_invalid_params_with_one_line(mcp_base: str, caplog: pytest.LogCaptureFixture) -> None:
    """The SDK answered a prompt's missing or unknown argument and an unknown prompt with code 0 (and logged a
    traceback), an unknown tool as a tool result, and malformed params without naming the field."""
    caplog.set_level(logging.INFO)
    assert "'recipient'" in invalid_params(call(mcp_base, "prompts/get", {"name": "find_petname"}))
    assert "'tone'" in invalid_params(call(mcp_base, "prompts/get", {
        "name": "find_petname", "arguments": {"recipient": "x", "tone": "sweet"}}))
    assert "find_petname" in invalid_params(call(mcp_base, "prompts/get", {"name": "find_pet"}))
    assert "recipient" in invalid_params(call(mcp_base, "prompts/get", {
        "name": "find_petname", "arguments": {"recipient": 5}}))
    assert "list_names" in invalid_params(call(mcp_base, "tools/call", {"name": "list_name", "arguments": {}}))
    assert "name" in invalid_params(call(mcp_base, "tools/call", {"arguments": {}}))
    assert "uri" in invalid_params(call(mcp_base, "resources/read", {"uri": 5}))
    ok = call(mcp_base, "prompts/get", {"name": "find_petname", "arguments": {"recipient": "unser Baby"}})
    assert "unser Baby" in ok["result"]["messages"][0]["content"]["text"]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []


@pytest.mark.parametrize(("arguments", "problem"), [
    ({"offset": -1}, "offset: Input should be greater than or equal to 0"),
    ({"offset": 1_000_000_001}, "offset: Input should be less than or equal to 1000000000"),
    ({"limit": 201}, "limit: Input should be less than or equal to 200"),
    ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
    ({"catgory": "tiere"}, "unknown argument 'catgory' (did you mean 'category'?)"),
    ({"limit": True}, "limit: Input should be a valid integer"),  # was taken as 1
    ({"limit": "007"}, "limit: Input should be a valid integer"),  # 7
    ({"limit": " 5 "}, "limit: Input should be a valid integer"),  # 5
    ({"limit": 1e2}, "limit: Input should be a valid integer"),  # 100
    ({"offset": 5.0}, "offset: Input should be a valid integer"),
    ({"category": 5}, "category: Input should be a valid string"),
])
def test_tool_argument_errors_are_tool_results_the_model_can_read(mcp_base: str, arguments: dict[str, Any],
                                                                   problem: str) -> None:
    """MCP 2025-11-25 (SEP-1303): input validation errors are tool execution errors, not protocol errors."""
    result = call(mcp_base, "tools/call", {"name": "list_names", "arguments": arguments})["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("Invalid arguments for list_names: ") and problem in text and "\n" not in text


def test_search_is_bounded_like_rest(mcp_base: str) -> None:
    """GET /api/search takes at most 200 characters; the tool took any length, and a 50 KB query cost a second
    of CPU per call (40 such clients held /api/status for 14 s)."""
    longest = " ".join(["maus"] * 40)  # 199 characters
    accepted = call(mcp_base, "tools/call", {"name": "search", "arguments": {"query": longest}})["result"]
    assert accepted["isError"] is False
    result = call(mcp_base, "tools/call", {"name": "search", "arguments": {"query": longest + " x"}})["result"]
    assert result["isError"] is True and "longer than 200 characters" in result["content"][0]["text"]
    assert httpx.get(mcp_base + "/api/search", params={"q": longest + " x"}).status_code == 400  # the same bound


@pytest.mark.parametrize(("tool", "arguments"), [
    ("get_name", {"slug": "x" * 50_000}), ("list_names", {"category": "x" * 50_000}),
    ("list_names", {"mood": "x" * 50_000}),
])
def test_tool_errors_quote_the_client_briefly(mcp_base: str, tool: str, arguments: dict[str, Any]) -> None:
    """An unknown slug, category or mood was quoted whole: a 50 KB argument came back (and was logged) in full."""
    result = call(mcp_base, "tools/call", {"name": tool, "arguments": arguments})["result"]
    assert result["isError"] is True and len(result["content"][0]["text"]) < 400


def test_list_names_pages_like_rest(mcp_base: str) -> None:
    """Default page of 200 and the same page, byte for byte as JSON, as GET /api/names."""
    for arguments, query in (({}, ""), ({"limit": 5, "offset": 10}, "?limit=5&offset=10"),
                             ({"category": "tiere", "offset": 3}, "?category=tiere&offset=3")):
        result = call(mcp_base, "tools/call", {"name": "list_names", "arguments": arguments})["result"]
        assert result["structuredContent"] == httpx.get(f"{mcp_base}/api/names{query}").json(), arguments
    tool = next(t for t in call(mcp_base, "tools/list", {})["result"]["tools"] if t["name"] == "list_names")
    assert tool["inputSchema"]["properties"]["limit"]["default"] == 200
    assert tool["inputSchema"]["additionalProperties"] is False


def test_initialize_advertises_what_the_server_card_says(mcp_base: str) -> None:
    """At 2026-07-28 the SDK advertised listChanged and subscribe true while the card said false."""
    card = httpx.get(mcp_base + "/.well-known/mcp/server-card.json").json()
    assert card["capabilities"] == {"tools": {"listChanged": False}, "prompts": {"listChanged": False},
                                    "resources": {"subscribe": False, "listChanged": False}}
    for version in card["remotes"][0]["supportedProtocolVersions"]:
        if version == "2026-07-28":  # no handshake: the capabilities come from server/discover
            envelope = {"io.modelcontextprotocol/protocolVersion": version,
                        "io.modelcontextprotocol/clientCapabilities": {}}
            body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}})
            answer = rpc(mcp_base, body, **{"mcp-protocol-version": version, "mcp-method": "server/discover"}).json()
        else:
            answer = call(mcp_base, "initialize", {"protocolVersion": version, "capabilities": {},
                                                   "clientInfo": {"name": "test", "version": "1"}})
        assert answer["result"]["capabilities"] == card["capabilities"], version


def test_the_server_lists_exactly_what_the_card_declares(mcp_base: str) -> None:
    """The card is written by the build from petgen/contract/mcp.py without the SDK; the server is built from the same
    declarations: every listing and `initialize` must say the same, field for field."""
    card = httpx.get(mcp_base + "/.well-known/mcp/server-card.json").json()
    assert call(mcp_base, "tools/list", {})["result"]["tools"] == card["tools"]
    assert call(mcp_base, "resources/list", {})["result"]["resources"] == card["resources"]
    assert call(mcp_base, "resources/templates/list", {})["result"]["resourceTemplates"] == card["resourceTemplates"]
    assert call(mcp_base, "prompts/list", {})["result"]["prompts"] == card["prompts"]
    info = call(mcp_base, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "test", "version": "1"}})["result"]
    assert info["serverInfo"]["name"] == card["name"] and info["serverInfo"]["version"] == card["version"]
    assert info["instructions"] == mcpspec.INSTRUCTIONS


def test_the_tool_signatures_validate_what_the_listing_declares() -> None:
    """What a tool accepts is decided by its function's signature (the SDK validates with it); what clients read
    is the declared `inputSchema`. They must be the same schema, and the prompt's arguments the same list."""
    server = build_mcp(lambda: None, version="1", base_url="http://127.0.0.1")  # type: ignore[arg-type, return-value]
    for spec in mcpspec.TOOLS:
        tool = server._tool_manager.get_tool(spec["name"])
        assert tool is not None
        derived = tool.fn_metadata.arg_model.model_json_schema()
        declared = {k: v for k, v in spec["inputSchema"].items() if k != "additionalProperties"}
        declared["properties"] = {name: {k: v for k, v in prop.items() if k != "description"}  # documentation only
                                  for name, prop in declared["properties"].items()}
        assert derived == declared, spec["name"]
    for spec in mcpspec.PROMPTS:
        prompt = server._prompt_manager.get_prompt(spec["name"])
        assert prompt is not None
        derived_prompt = Prompt.from_function(prompt.fn, name=spec["name"])
        assert [a.model_dump(exclude_none=True) for a in derived_prompt.arguments or []] \
            == [{k: v for k, v in a.items() if k != "description"} for a in spec["arguments"]]


def test_the_build_does_not_import_the_runtime_or_the_sdk(tmp_path: Path) -> None:
    """The build writes the server card and OpenAPI from declarations: building must load neither the
    runtime package nor the MCP SDK (the build→runtime cycle of the first wave)."""
    script = ("import sys; from pathlib import Path; from petgen.build.pipeline import build; "
              f"build(Path({str(REPO / 'content')!r}), Path({str(tmp_path / 'd')!r}), base_url='http://127.0.0.1'); "
              "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in ('runtime', 'mcp')}))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    assert result.stdout.strip() == "[]"
    assert (tmp_path / "d" / ".well-known" / "mcp" / "server-card.json").is_file()

"""The OpenAPI document: valid 3.1, in step with the app (both directions), and true to the files."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from starlette.routing import Route
from starlette.testclient import TestClient

from petgen.contract.errors import ERROR_CODES
from runtime.app import create_app
from runtime.settings import Settings

# Served paths that are not API operations: pages, documents and the files behind them.
# The human pages (HTML), files and documents that are no API operation.
NOT_OPERATIONS = re.compile(r"^/($|names/|(categories|moods|relationships|regions|languages|a-z)/|docs$|docs/|"
                            r"openapi\.json$|llms(-full)?\.txt$|robots\.txt$|sitemap\.xml$|"
                            r"search/|assets/|\.well-known/|mcp/server-card$|api/.*\.[0-9a-f]{12}\.json$)")


@pytest.fixture
def document(dist: Path) -> dict[str, Any]:
    return orjson.loads((dist / "openapi.json").read_bytes())


def template_of(path: str, templates: list[str]) -> str | None:
    for template in templates:
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path):
            return template
    return None


def test_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    validate(document)
    assert document["openapi"] == "3.1.0" and document["info"]["version"] == "1.0.0"
    assert document["servers"] == [{"url": "http://testserver"}]
    ids = [op.get("operationId") for item in document["paths"].values() for op in item.values()]
    # the contract's eight, the webhook subscriptions beyond them, and POST /webhooks, which the contract lists
    # without an operation id
    assert sorted(ids, key=str) == sorted(["listNames", "getName", "listCategories", "getCategory", "searchNames",
                                           "nlAsk", "mcpInvoke", "getStatus", "listWebhooks", "getWebhook",
                                           "deleteWebhook", "rotateWebhookSecret", None], key=str)
    assert "operationId" not in document["paths"]["/webhooks"]["post"]


def test_every_served_route_is_documented_and_every_path_is_served(document: dict[str, Any], dist: Path) -> None:
    templates = list(document["paths"])
    app = create_app(Settings(dist=dist, rate_limit=0))
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    served = {route.split("?")[0] for route in manifest["routes"]}
    served |= {r.path for r in app.starlette.routes if isinstance(r, Route)}
    undocumented = [p for p in sorted(served)
                    if not NOT_OPERATIONS.match(p) and not p.startswith("/{") and template_of(p, templates) is None]
    # not operations: redirects of a trailing slash, and the catch-alls that answer 404/405 envelopes
    assert undocumented == ["/.well-known", "/api", "/api/categories/{slug}/",
                            "/api/names/{slug}/", "/api/{rest:path}", "/ask/", "/mcp/", "/openapi.json/{rest:path}"]
    client = TestClient(app, base_url="http://testserver", raise_server_exceptions=False)
    with client:
        for template, item in document["paths"].items():
            for method, operation in item.items():
                if "security" in operation:  # /webhooks: tests/runtime/webhooks/test_api.py goes through them
                    response = client.request(method.upper(), template.replace("{id}", "wh_abcdefghijklmnop"))
                    assert response.status_code == 401 and "401" in operation["responses"], (method, template)
                    continue
                path = re.sub(r"\{slug\}", next(p["example"] for p in operation["parameters"] if p["name"] == "slug"),
                              template) if "{" in template else template
                body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example")
                response = client.request(method.upper(), path, json=body,
                                          params={"q": "maus"} if template == "/api/search" else None,
                                          headers={"accept": "application/json, text/event-stream"})
                assert str(response.status_code) in operation["responses"], (method, template, response.status_code)
                assert response.status_code < 300, (method, template, response.text[:200])


def test_every_precomputed_file_validates_against_its_operation(document: dict[str, Any], dist: Path) -> None:
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    templates = list(document["paths"])
    checked = 0
    for route, info in manifest["routes"].items():
        path = route.split("?")[0]
        template = template_of(path, templates)
        if template is None:
            continue
        media = document["paths"][template]["get"]["responses"]["200"]["content"]["application/json"]
        body = orjson.loads((dist / info["file"]).read_bytes())
        for components in (document["components"], every_property_required(document["components"])):
            errors = list(Draft202012Validator({**media["schema"], "components": components}).iter_errors(body))
            assert errors == [], (route, errors[0].message)
        checked += 1
    assert checked > 20


def every_property_required(node: Any) -> Any:
    """The schemas as the build fills them: `required` promises less, the build still sends everything
    (but the properties that only apply to some entries or categories)."""
    from petgen.contract.schemas import SOMETIMES

    if isinstance(node, dict):
        tightened = {k: every_property_required(v) for k, v in node.items()}
        if isinstance(node.get("properties"), dict):
            tightened["required"] = [name for name in node["properties"] if name not in SOMETIMES]
        return tightened
    return [every_property_required(v) for v in node] if isinstance(node, list) else node


def schemas_in(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from schemas_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from schemas_in(value)


def test_nothing_a_code_generator_skips(document: dict[str, Any]) -> None:
    """openapi-python-client dropped `type: [X, "null"]` members and collided on `title`s of inline
    oneOf members (tests/test_generated_client.py generates a whole client)."""
    nodes = list(schemas_in(document))
    assert [n["type"] for n in nodes if isinstance(n.get("type"), list)] == []
    assert [n["title"] for n in schemas_in(document["components"]) if isinstance(n.get("title"), str)] == []
    for node in nodes:
        for member in node.get("oneOf", []) + node.get("anyOf", []):
            assert "properties" not in member and "title" not in member, member  # shapes are named components


# The contract's promises (its Required column, or every field of a table without one), and `license`,
# which the contract says every entry and response carries. Everything else is optional.
CONTRACT_REQUIRED = {
    "Name": ["slug", "title", "meaning", "license"],
    "NameSummary": ["slug", "title", "meaning", "categories", "url"],
    "NameList": ["items", "total", "limit", "offset", "nextUrl", "license"],
    "CategorySummary": ["slug", "title", "description", "emoji", "moods", "url"],
    "Category": ["slug", "title", "description", "emoji", "moods", "url", "names", "license"],
    "CategoryList": ["items", "total", "license"],
    "SearchHit": ["slug", "title", "meaning", "url", "score"],
    "SearchResults": ["query", "items", "total", "license"],
    "AskMeta": ["response_type", "version", "site", "query", "result_count", "license"],
    "AskResult": ["@type", "name", "url", "description", "score", "citation"],
    "AskResponse": ["_meta", "result"],
    "Status": ["status", "timestamp", "version", "names", "categories", "license"],
    "Error": ["error"],
    "AskFlatRequest": ["query"], "AskNLWebRequest": ["query"], "AskNLWebQuery": ["text"],
    "JsonRpcRequest": ["jsonrpc", "id", "method"], "JsonRpcNotification": ["jsonrpc", "method"],
    "JsonRpcResponse": ["jsonrpc", "id"], "JsonRpcError": ["code", "message"],
}


def test_required_is_what_the_contract_promises(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert {name: sorted(schemas[name]["required"]) for name in CONTRACT_REQUIRED} == \
        {name: sorted(fields) for name, fields in CONTRACT_REQUIRED.items()}
    assert schemas["Error"]["properties"]["error"]["required"] == ["code", "message"]


def test_every_error_status_is_in_the_catalogue(document: dict[str, Any]) -> None:
    statuses = {e.status: e.code for e in ERROR_CODES}
    for template, item in document["paths"].items():
        for operation in item.values():
            responses = operation["responses"]
            assert {"429", "500", "503"} <= set(responses), template  # rate limit, fault, down: anywhere
            for status, response in responses.items():
                if int(status) >= 400:
                    assert int(status) in statuses, (template, status)
                    assert statuses[int(status)] in response["description"] or "JSON-RPC" in response["description"]
    refusals = document["paths"]["/mcp"]["post"]["responses"]
    for status in ("403", "406", "415", "421"):  # the MCP transport's refusals are JSON-RPC errors
        assert refusals[status]["content"] == {"application/json": {
            "schema": {"$ref": "#/components/schemas/JsonRpcResponse"}}}


def test_a_down_runtime_answers_every_operation_as_documented(document: dict[str, Any], tmp_path: Path) -> None:
    """Without a build the runtime answers 503 everywhere (Status on /api/status, else the error envelope)."""
    client = TestClient(create_app(Settings(dist=tmp_path / "not-built", rate_limit=0)), base_url="http://testserver",
                        raise_server_exceptions=False)
    with client:
        for template, item in document["paths"].items():
            for method, operation in item.items():
                path = template.replace("{slug}", "baerchen")
                body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example")
                response = client.request(method.upper(), path, json=body,
                                          params={"q": "maus"} if template == "/api/search" else None)
                assert response.status_code == 503, (template, response.status_code)
                media = operation["responses"]["503"]["content"]["application/json"]
                validator = Draft202012Validator({**media["schema"], "components": document["components"]})
                assert list(validator.iter_errors(response.json())) == [], (template, response.text)
                assert response.headers["retry-after"].isdigit()


def test_examples_are_real_entries_and_valid(document: dict[str, Any]) -> None:
    operation = document["paths"]["/api/names/{slug}"]["get"]
    example = operation["responses"]["200"]["content"]["application/json"]["example"]
    assert example["slug"] == operation["parameters"][0]["example"]
    validator = Draft202012Validator({"$ref": "#/components/schemas/Name", "components": document["components"]})
    assert list(validator.iter_errors(example)) == []


def test_parameters_bounds_and_headers(document: dict[str, Any]) -> None:
    params = {p["name"]: p["schema"] for p in document["paths"]["/api/names"]["get"]["parameters"]}
    assert params["limit"] == {"type": "integer", "minimum": 1, "maximum": 200, "default": 200}
    assert params["category"]["enum"][:2] == ["klassiker", "tiere"]
    search = {p["name"]: p for p in document["paths"]["/api/search"]["get"]["parameters"]}
    assert search["q"]["required"] and search["limit"]["schema"]["maximum"] == 50
    responses = document["paths"]["/api/names"]["get"]["responses"]
    assert {"200", "304", "400", "429", "500"} <= set(responses)
    assert "X-RateLimit-Remaining" in responses["200"]["headers"] and "Retry-After" in responses["429"]["headers"]
    ask = document["paths"]["/ask"]["post"]
    headers = {p["name"]: p for p in ask["parameters"] if p["in"] == "header"}
    assert headers["Prefer"]["schema"] == {"type": "string"} and not headers["Prefer"]["required"]
    assert headers["prefer.streaming"]["schema"] == {"type": "boolean"} and not headers["prefer.streaming"]["required"]
    assert "text/event-stream" in ask["responses"]["200"]["content"]
    reset = document["components"]["headers"]["X-RateLimit-Reset"]
    assert reset["description"] == "Seconds until the window resets (0..60)." and reset["schema"]["minimum"] == 0


def test_docs_page_is_rendered_from_the_document(client: TestClient, document: dict[str, Any]) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for template, item in document["paths"].items():
        for method, operation in item.items():
            anchor = operation.get("operationId") or method + template.replace("/", "-")
            assert f'id="{anchor}"' in page.text
    for event in document["webhooks"]:
        assert f'id="event-{event}"' in page.text
    assert "http://" not in re.sub(r'(href|src)="http://testserver[^"]*"', "", page.text).split("<footer>")[0] \
        .replace("http://testserver", "")  # no assets from other hosts
    assert "<script src" not in page.text
    stylesheet = re.search(r'<link rel="stylesheet" href="(/assets/site\.[0-9a-f]{12}\.css)">', page.text)
    assert stylesheet and client.get(stylesheet.group(1)).headers["content-type"] == "text/css; charset=utf-8"


# Text around the edges of "at least 2 characters after trimming": each whitespace family, line breaks inside.
QUERIES = ["ab", " a ", "a\nb", "\x1e0\x1e", "\x85a\x85", "a\x85b", "\u3000a\u3000", "\ufeffab", "\u00a0a", "a\u2028b",
           "\t\r\n", "---", "\x1cx\x1fy"]


def test_query_pattern_says_what_the_runtime_accepts(document: dict[str, Any], client: TestClient) -> None:
    """`\\S.*\\S` let q="\\x1e0\\x1e" pass (ECMA-262 does not count U+001E as space; Python trims it) and refused
    "a\\nb" (`.` stops at a line break), both of which the runtime answers the other way (schemathesis, seed 4242)."""
    q = next(p for p in document["paths"]["/api/search"]["get"]["parameters"] if p["name"] == "q")["schema"]
    question = document["components"]["schemas"]["AskFlatRequest"]["properties"]["query"]
    assert question["pattern"] == q["pattern"]
    pattern = re.compile(q["pattern"])  # the trimmed characters listed: every regex engine reads it alike
    for text in QUERIES:
        valid = pattern.search(text) is not None and len(text) >= 2
        assert (client.get("/api/search", params={"q": text}).status_code == 200) is valid, repr(text)
        assert (client.post("/ask", json={"query": text}).status_code == 200) is valid, repr(text)

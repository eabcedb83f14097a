"""The OpenAPI document: valid 3.1, in step with the app (both directions), and true to the files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from starlette.routing import Route
from starlette.testclient import TestClient

from runtime.app import create_app
from runtime.settings import Settings

# Served paths that are not API operations: pages, documents and the files behind them.
NOT_OPERATIONS = re.compile(r"^/($|names/|categories/[^/]+/$|docs$|openapi\.json$|llms(-full)?\.txt$|robots\.txt$|"
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
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert sorted(ids) == sorted(["listNames", "getName", "listCategories", "getCategory", "searchNames", "nlAsk",
                                  "mcpInvoke", "getStatus"])


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
                            "/api/names/{slug}/", "/api/{rest:path}", "/openapi.json/{rest:path}", "/webhooks",
                            "/webhooks/{rest:path}"]
    client = TestClient(app, base_url="http://testserver", raise_server_exceptions=False)
    with client:
        for template, item in document["paths"].items():
            for method, operation in item.items():
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
        validator = Draft202012Validator({**media["schema"], "components": document["components"]})
        errors = list(validator.iter_errors(orjson.loads((dist / info["file"]).read_bytes())))
        assert errors == [], (route, errors[0].message)
        checked += 1
    assert checked > 20


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
    assert ask["parameters"][0]["name"] == "Prefer"
    assert "text/event-stream" in ask["responses"]["200"]["content"]


def test_docs_page_is_rendered_from_the_document(client: TestClient, document: dict[str, Any]) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for item in document["paths"].values():
        for operation in item.values():
            assert f'id="{operation["operationId"]}"' in page.text
    assert "http://" not in re.sub(r'(href|src)="http://testserver[^"]*"', "", page.text).split("<footer>")[0] \
        .replace("http://testserver", "")  # no assets from other hosts
    assert "<script src" not in page.text
    stylesheet = re.search(r'<link rel="stylesheet" href="(/assets/site\.[0-9a-f]{12}\.css)">', page.text)
    assert stylesheet and client.get(stylesheet.group(1)).headers["content-type"] == "text/css; charset=utf-8"

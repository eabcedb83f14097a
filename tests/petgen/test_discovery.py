"""Discovery documents: media types, profile, Link header, JWKS, server card, llms.txt."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from petgen.content.bots import jwk_thumbprint
from petgen.content.kb import load_knowledge_base
from petgen.content.problems import ContentError

KEY = base64.urlsafe_b64encode(bytes(range(32))).rstrip(b"=").decode()


def test_api_catalog(client: TestClient) -> None:
    response = client.get("/.well-known/api-catalog")
    assert response.headers["content-type"] == 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"'
    assert response.headers["access-control-allow-origin"] == "*"
    links = response.json()["linkset"]
    api = links[0]
    assert api["service-desc"][0]["href"] == "http://testserver/openapi.json"
    assert api["service-doc"][0]["href"] == "http://testserver/docs"
    assert api["status"][0]["href"] == "http://testserver/api/status"
    assert links[1]["anchor"] == "http://testserver/mcp"
    assert api["anchor"] == "http://testserver/" and client.get(api["anchor"]).status_code == 200
    head = client.head("/.well-known/api-catalog")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["link"] == '<http://testserver/.well-known/api-catalog>; rel="api-catalog"'


def test_protected_resource_metadata_needs_no_token(client: TestClient) -> None:
    meta = client.get("/.well-known/oauth-protected-resource").json()
    assert meta["resource"] == "http://testserver/" and meta["resource_name"] == "Kosenamen API"
    assert meta["resource_documentation"] == "http://testserver/docs"
    assert meta["bearer_methods_supported"] == [] and "authorization_servers" not in meta


def test_server_card_at_both_paths(client: TestClient) -> None:
    card = client.get("/.well-known/mcp/server-card.json").json()
    assert client.get("/mcp/server-card").json() == card
    assert card["$schema"].endswith("server-card.schema.json")
    assert card["name"].count("/") == 1 and card["version"] == "1.0.0" and card["title"] and card["description"]
    assert card["websiteUrl"] == "http://testserver/"
    remote = card["remotes"][0]
    assert remote == {"type": "streamable-http", "url": "http://testserver/mcp",
                      "supportedProtocolVersions": ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"],
                      "authentication": {"required": False, "schemes": []}}
    assert {t["name"] for t in card["tools"]} == {"list_names", "get_name", "list_categories", "search"}
    assert [p["name"] for p in card["prompts"]] == ["find_petname"]


def test_signatures_directory_is_an_empty_jwks_until_keys_are_registered(client: TestClient) -> None:
    response = client.get("/.well-known/http-message-signatures-directory")
    assert response.headers["content-type"] == "application/http-message-signatures-directory+json"
    assert response.json() == {"keys": []}


def test_registered_bot_keys_are_published(content: Path, tmp_path: Path,
                                           make_client: Callable[..., TestClient]) -> None:
    (content / "bots.yml").write_text(f"bots:\n  - name: TestBot\n    contact: https://bot.example\n"
                                      f"    use_case: Tests\n    keys:\n      - x: {KEY}\n", encoding="utf-8")
    build(content, tmp_path / "d", base_url="http://testserver")
    keys = make_client(tmp_path / "d").get("/.well-known/http-message-signatures-directory").json()["keys"]
    assert keys == [{"kty": "OKP", "crv": "Ed25519", "x": KEY, "kid": jwk_thumbprint(KEY)}]


def test_bad_bot_key_is_a_content_error(content: Path) -> None:
    (content / "bots.yml").write_text("bots:\n  - name: TestBot\n    contact: https://bot.example\n    use_case: Tests\n"
                                      "    keys:\n      - x: tooshort\n", encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    assert "every key needs 'x', a base64url Ed25519 public key of 32 bytes" in info.value.problems[0].message


def test_llms_txt_corpus_and_robots(client: TestClient) -> None:
    llms = client.get("/llms.txt")
    assert llms.headers["content-type"].startswith("text/markdown")
    assert "http://testserver/openapi.json" in llms.text and "http://testserver/mcp" in llms.text
    corpus = client.get("/llms-full.txt").text
    assert corpus.count("\n## ") == 6 and "## Ölprinz" in corpus and "http://testserver/names/oelprinz/" in corpus
    assert client.get("/robots.txt").text.startswith("User-agent: *")

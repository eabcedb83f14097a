"""GET /api/search: results, totals, bad parameters; the runtime uses the build's index."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from petgen.contract.schemas import schema_for
from petgen.search import index as engine
from petgen.search.stored import STEM, WORD


def test_search_results(client: TestClient) -> None:
    response = client.get("/api/search", params={"q": "zucker", "limit": 1})
    assert response.status_code == 200
    body = response.json()
    assert list(Draft202012Validator(schema_for("SearchResults")).iter_errors(body)) == []
    assert body["query"] == "zucker"
    assert body["items"][0]["slug"] == "zuckerstueck"
    assert body["items"][0]["url"] == "http://testserver/names/zuckerstueck/"
    assert body["total"] >= 1 and len(body["items"]) == 1
    assert response.headers["etag"] and response.headers["access-control-allow-origin"] == "*"


def test_total_counts_all_matches(client: TestClient) -> None:
    body = client.get("/api/search", params={"q": "kosename", "limit": 2}).json()
    assert body["total"] == 6 and len(body["items"]) == 2


def test_umlaut_less_spelling(client: TestClient) -> None:
    for q in ("Ölprinz", "oelprinz", "olprinz", "ölprin"):
        assert client.get("/api/search", params={"q": q}).json()["items"][0]["slug"] == "oelprinz", q


@pytest.mark.parametrize("query, message", [
    ("", "The parameter 'q' is required."),
    ("q=", "The query 'q' must have at least 2 characters after trimming."),
    ("q=%20a%20", "The query 'q' must have at least 2 characters after trimming."),
    ("q=ab&limit=0", "'limit' must be from 1 to 50, not 0."),
    ("q=ab&limit=51", "'limit' must be from 1 to 50, not 51."),
    ("q=ab&limit=x", "'limit' must be a whole number from 1 to 50 (digits 0-9 only), not 'x'."),
        ("q=ab&limit=%2B5", "'limit' must be a whole number from 1 to 50 (digits 0-9 only), not '+5'."),
    ("query=ab", "Unknown parameter 'query'."),
    ("q=ab&q=cd", "Parameter 'q' is given more than once."),
])
def test_bad_search_parameters(client: TestClient, query: str, message: str) -> None:
    response = client.get(f"/api/search?{query}")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == message
    assert response.json()["error"]["hint"]


def test_runtime_normalises_queries_as_the_build_did(dist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's terms are exactly what the shared `analyze`/`stems` produce for the entries' words."""
    from runtime.builds.dist import Dist

    loaded = Dist.load(dist).search
    manifest = orjson.loads((dist / "search" / "index.json").read_bytes())
    assert manifest["fields"] == {"title": 8.0, "variants": 5.0, "keywords": 3.0, "meaning": 1.0}
    assert loaded.posting(WORD, "olprinz") and loaded.posting(STEM, engine.stems("olprinz")[0])
    calls: list[str] = []
    original = engine.analyze
    monkeypatch.setattr(engine, "analyze", lambda text, **kw: calls.append(text) or original(text, **kw))
    loaded.search("Ölprinz")
    assert calls == ["Ölprinz"]  # the query goes through the build's analyzer


def test_index_is_fetchable_without_the_runtime(client: TestClient) -> None:
    index = client.get("/search/index.json").json()
    documents = index["documents"]
    first = client.get(documents["files"][0])  # documents in title order: the shortest titles first
    assert first.headers["cache-control"] == "public, max-age=31536000, immutable"
    titles = [title for _, title, _, _ in first.json()]
    assert len(titles) == min(documents["count"], documents["per_file"]) and titles == sorted(titles, key=len)
    assert titles[0] == "Apfel" and documents["count"] > (len(documents["files"]) - 1) * documents["per_file"]
    assert len(client.get("/search/index.json").content) < 20_000  # shards and document files named, no documents
    shard_url = index["shards"]["ol"]
    shard = client.get(shard_url)
    assert shard.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "olprinz" in shard.json()["words"]

"""/api/names filters and paging, bad parameters, unknown and non-canonical slugs."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from starlette.testclient import TestClient

from tests.conftest import BASE_URL


def walk(client: TestClient, url: str) -> list[str]:
    """Follow nextUrl from url to the end; return every slug seen."""
    slugs: list[str] = []
    pages = 0
    while url:
        response = client.get(url.removeprefix(BASE_URL))
        assert response.status_code == 200, url
        page = response.json()
        slugs += [item["slug"] for item in page["items"]]
        url = page["nextUrl"]
        pages += 1
        assert pages < 1000
    return slugs


@pytest.fixture
def big(big_dist: Path, make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(big_dist, rate_limit=0)


def _all(big_dist: Path) -> list[dict]:
    data = orjson.loads((big_dist / "_data" / "index.json").read_bytes())
    return data["items"]


@pytest.mark.parametrize("limit", [None, 200, 37, 1])
def test_following_next_url_visits_every_entry_once(big: TestClient, big_dist: Path, limit: int | None) -> None:
    items = _all(big_dist)
    data = orjson.loads((big_dist / "_data" / "index.json").read_bytes())
    filters = [{}] + [{"category": c} for c in data["categories"]] + [{"mood": m} for m in data["moods"]]
    filters += [{"category": "tiere", "mood": "frech"}, {"category": "altmodisch", "mood": "leidenschaftlich"}]
    filters += [{"gender": "sie"}, {"relationship": "kind", "region": "berlin"}, {"category": "fuer-sie", "mood": "frech",
                                                                                 "language": "deutsch"}]
    if limit == 1:
        filters = [{"category": "lustig", "mood": "verspielt"}]
    for f in filters:
        query = "&".join(f"{k}={v}" for k, v in {**f, **({"limit": limit} if limit else {})}.items())
        seen = walk(big, "/api/names" + (f"?{query}" if query else ""))
        expected = [i["slug"] for i in items if all(_member(i, name, value) for name, value in f.items())]
        assert seen == expected, f
        assert len(set(seen)) == len(seen)


# What the old audience categories stand for (content/categories.yml), written out independently of the code.
ALIASES = {"fuer-sie": ("gender", "sie"), "fuer-ihn": ("gender", "ihn"), "neutral": ("gender", "alle"),
           "kinder": ("relationship", "kind"), "freunde": ("relationship", "freunde")}


def _member(item: dict, name: str, value: str) -> bool:
    if name == "category" and value == "regional":
        return item["region"] != ["ueberregional"]
    if name == "category" and value in ALIASES:
        name, value = ALIASES[value]
    field = {"category": "categories", "mood": "moods"}.get(name, name)
    return value == item[field] if isinstance(item[field], str) else value in item[field]


def test_computed_page_equals_precomputed_page(big: TestClient, big_dist: Path) -> None:
    """The runtime's page builder is the build's: same bytes for the same query."""
    from runtime.builds.dist import Dist
    from runtime.names import ListQuery, computed_page

    dist = Dist.load(big_dist)
    precomputed = dist.routes["/api/names?category=tiere"].body
    assert computed_page(ListQuery({"category": "tiere"}, 200, 0), dist) == precomputed


def test_equivalent_queries_share_a_page(big: TestClient) -> None:
    a = big.get("/api/names?offset=0&limit=200")
    b = big.get("/api/names")
    assert a.content == b.content and a.headers["etag"] == b.headers["etag"]


def test_computed_pages_support_etags(big: TestClient) -> None:
    first = big.get("/api/names?limit=7&offset=3")
    assert first.status_code == 200 and len(first.json()["items"]) == 7
    again = big.get("/api/names?limit=7&offset=3", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_offset_past_the_end_is_an_empty_page(client: TestClient) -> None:
    page = client.get("/api/names?offset=1000").json()
    assert page["items"] == [] and page["total"] == 6 and page["nextUrl"] is None


@pytest.mark.parametrize("query, message, hint", [
    ("limit=0", "'limit' must be from 1 to 200, not 0.", "use limit=1"),
    ("limit=201", "'limit' must be from 1 to 200, not 201.", "use limit=200"),
    ("offset=-1", "'offset' must be a whole number from 0 to 1000000000 (digits 0-9 only), not '-1'.",
     "for example offset=0"),
    ("offset=8662191408271119260014", "'offset' must be from 0 to 1000000000, not 8662191408271119260014.",
     "use offset=1000000000"),
    ("offset=" + "9" * 5000, "'offset' must be from 0 to 1000000000, not " + "9" * 39 + "….", "use offset=1000000000"),
    ("limit=abc", "'limit' must be a whole number from 1 to 200 (digits 0-9 only), not 'abc'.", "for example limit=20"),
    ("limit=", "'limit' must be a whole number from 1 to 200 (digits 0-9 only), not ''.", "for example limit=20"),
    # Only plain ASCII digits: Python's int() would take every one of these.
    *((f"limit={raw}", f"'limit' must be a whole number from 1 to 200 (digits 0-9 only), not '{shown}'.",
       "for example limit=20") for raw, shown in [("5_0", "5_0"), ("%2B5", "+5"), ("%205", " 5"), ("5%20", "5 "),
                                                  ("%D9%A5", "٥"), ("1e2", "1e2"), ("0x10", "0x10"),
                                                  ("%EF%BC%95", "５"), ("5.0", "5.0")]),
    ("category=tierchen", "Unknown category 'tierchen'.", "did you mean 'tiere'?"),
    ("mood=happy", "Unknown mood 'happy'.", "valid values: "),
    ("catgory=tiere", "Unknown parameter 'catgory'.", "did you mean 'category'?"),
    ("limit=5&limit=6", "Parameter 'limit' is given more than once.", "send 'limit' once"),
])
def test_bad_parameters_are_400_with_hint(client: TestClient, query: str, message: str, hint: str) -> None:
    response = client.get(f"/api/names?{query}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "bad_request"
    assert error["message"] == message
    assert error["hint"].startswith(hint)


def test_leading_zeros_are_plain_digits(client: TestClient) -> None:
    page = client.get("/api/names?limit=007&offset=00")
    assert page.status_code == 200 and page.json()["limit"] == 7 and page.json()["offset"] == 0


def test_unknown_slug_is_404_naming_it(client: TestClient) -> None:
    response = client.get("/api/names/schnuggi")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error == {
        "code": "not_found",
        "message": "No name with the slug 'schnuggi'.",
        "hint": "did you mean 'schnucki' (/api/names/schnucki)? Or search with /api/search?q=schnuggi or list all "
                "names at /api/names",
        "docs": "http://testserver/docs#error-not_found",
    }
    assert "did you mean" not in client.get("/api/names/xyzzyq").json()["error"]["hint"]


@pytest.mark.parametrize("path", ["/api/names/x", "/api/names/-", "/api/names/%20", "/api/names/x-", "/api/names/ab",
                                  "/api/names/a-b", "/api/categories/x", "/api/categories/tierchen"])
def test_every_link_in_a_404_hint_answers(client: TestClient, path: str) -> None:
    """A hint names a search only with a query /api/search takes: `/api/names/x` does not send anyone to a 400."""
    response = client.get(path)
    assert response.status_code == 404
    hint = response.json()["error"]["hint"]
    links = re.findall(r"/api/[^\s,()]+", hint)
    assert "/api/names" in links or "/api/categories" in links
    for link in links:
        assert client.get(link).status_code == 200, (path, hint, link)
    assert ("/api/search?q=" in hint) == (len(path.rsplit("/", 1)[1].replace("-", "").replace("%20", "")) >= 2)


@pytest.mark.parametrize("spelling", ["Ölprinz", "OELPRINZ", "oelPrinz", "%C3%96lprinz"])
def test_non_canonical_slug_redirects(client: TestClient, spelling: str) -> None:
    response = client.get(f"/api/names/{spelling}", follow_redirects=False)
    assert response.status_code == 301
    assert response.headers["location"] == "/api/names/oelprinz"
    assert client.get(f"/api/names/{spelling}").json()["slug"] == "oelprinz"


def test_pages_redirect_to_trailing_slash_and_canonical_slug(client: TestClient) -> None:
    assert client.get("/names/apfel", follow_redirects=False).headers["location"] == "/names/apfel/"
    assert client.get("/names/Äffchen/", follow_redirects=False).headers["location"] == "/names/aeffchen/"
    missing = client.get("/names/nichtda/")
    assert missing.status_code == 404 and "Nicht gefunden" in missing.text


def test_unknown_category_is_404(client: TestClient) -> None:
    response = client.get("/api/categories/tierchen")
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "No category with the slug 'tierchen'."
    assert client.get("/api/categories/TIERE", follow_redirects=False).status_code == 301


def test_live_status(client: TestClient) -> None:
    status = client.get("/api/status").json()
    assert status["status"] == "ok" and status["names"] == 6 and status["categories"] == 15
    assert status["timestamp"].endswith("Z") and status["timestamp"] != "2026-11-01T00:00:00Z"


def test_facet_filters_combine_and_unknown_values_are_400(client: TestClient) -> None:
    page = client.get("/api/names?gender=sie&region=rheinland&limit=5").json()
    assert [i["slug"] for i in page["items"]] == ["apfel"] and page["total"] == 1
    assert client.get("/api/names?category=natur&relationship=kind").json()["total"] == 1
    assert client.get("/api/names?category=fuer-sie&relationship=freunde").json()["total"] == 0
    error = client.get("/api/names?gender=frau").json()["error"]
    assert error["message"] == "Unknown gender 'frau'." and error["hint"] == "valid values: sie, ihn, alle (see " \
        "/api/categories)"
    assert client.get("/api/names?region=berln").json()["error"]["hint"].startswith("did you mean 'berlin'?")


def test_mcp_list_names_takes_the_facets(client: TestClient) -> None:
    with client:
        response = client.post("/mcp", headers={"Accept": "application/json"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "list_names", "arguments": {"region": "berlin", "relationship": "freunde"}}})
        assert response.json()["result"]["structuredContent"]["items"][0]["slug"] == "ohrwurm"
        bad = client.post("/mcp", headers={"Accept": "application/json"}, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_names", "arguments": {"gender": "female"}}}).json()["result"]
        assert bad["isError"] and bad["content"][0]["text"].endswith("Unknown gender 'female'. Did you mean 'alle'? "
                                                         "Valid values: sie, ihn, alle")

"""POST /ask: request shapes, understanding, JSON and SSE answers, errors."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from httpx_sse import connect_sse
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from petgen.contract.schemas import schema_for
from runtime.ask import Lexicon, understand
from tests.conftest import REPO
from tests.runtime.test_server import running_server

ASK = Draft202012Validator(schema_for("AskResponse"))


@pytest.fixture(scope="module")
def kb_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real knowledge base: understanding is judged on real entries."""
    out = tmp_path_factory.mktemp("kb") / "dist"
    build(REPO / "content", out, base_url="http://testserver")
    return out


@pytest.fixture
def kb(kb_dist: Path, make_client) -> TestClient:  # type: ignore[no-untyped-def]
    return make_client(kb_dist, rate_limit=0)


def names(client: TestClient, query: str, **extra: object) -> list[str]:
    response = client.post("/ask", json={"query": query, **extra})
    assert response.status_code == 200, response.text
    body = response.json()
    assert list(ASK.iter_errors(body)) == []
    return [r["name"] for r in body["result"]]


def test_response_shape(kb: TestClient) -> None:
    body = kb.post("/ask", json={"query": "Was bedeutet Spatzl?", "limit": 3}).json()
    assert body["_meta"]["response_type"] == "Answer"
    assert body["_meta"]["site"] == "kosenamen" and body["_meta"]["query"] == "Was bedeutet Spatzl?"
    assert body["_meta"]["result_count"] == len(body["result"]) == 3
    first = body["result"][0]
    assert first["name"] == "Spatzl" and first["@type"] == "DefinedTerm"
    assert first["citation"] == "Kosenamen API, http://testserver/names/spatzl/"
    assert body["_meta"]["license"] == "CC BY 4.0"


@pytest.mark.parametrize("question, expected", [
    ("What does Spatzl mean?", "Spatzl"),
    ("Was bedeutet Schnucki?", "Schnucki"),
    ("woher kommt eigentlich Bärchen", "Bärchen"),
    ("what's the meaning of Chérie", "Chérie"),
    ("Was heißt Mauserl?", "Mauserl"),
])
def test_definition_questions_answer_with_the_name_first(kb: TestClient, question: str, expected: str) -> None:
    assert names(kb, question)[0] == expected


def test_english_question_with_intents_and_translation(kb: TestClient) -> None:
    found = names(kb, "cute nickname for my girlfriend that means little mouse")
    assert set(found[:3]) <= {"Mäuschen", "Mausi", "Mäusle", "Müsli", "Mauserl", "Maus"} and "Mausi" in found[:3]


def test_partner_intent(kb: TestClient, kb_dist: Path) -> None:
    from runtime.builds.dist import Dist

    items = {i["title"]: i for i in Dist.load(kb_dist).items}
    for name in names(kb, "Wie kann ich meinen Freund liebevoll nennen?", limit=10):
        item = items[name]  # names used for him or for anyone, and for a partner (not a kid or a buddy)
        assert item["gender"] in ("ihn", "alle") and "partner" in item["relationship"], name


def test_regional_and_children(kb: TestClient, kb_dist: Path) -> None:
    from runtime.builds.dist import Dist

    items = {i["title"]: i for i in Dist.load(kb_dist).items}
    found = names(kb, "bavarian pet names for a baby")
    assert all(items[n]["region"] != ["ueberregional"] for n in found)
    assert "kind" in items[found[0]]["relationship"]


def test_language_specific_loanwords(kb: TestClient) -> None:
    assert set(names(kb, "romantic French pet names")[:2]) == {"Chérie", "Mon Amour"}
    assert "Amore" in names(kb, "italienische Kosenamen")


def test_funny_intent_uses_mood(kb: TestClient, kb_dist: Path) -> None:
    from runtime.builds.dist import Dist

    items = {i["title"]: i for i in Dist.load(kb_dist).items}
    for name in names(kb, "funny names for my boyfriend"):
        assert "humorvoll" in items[name]["moods"] or "lustig" in items[name]["categories"], name


def test_understanding_strips_filler_in_both_languages() -> None:
    lexicon = Lexicon.from_data({"translations": {"mouse": ["Maus"]}, "categories": {"fuer-ihn": ["boyfriend"]},
                                 "moods": {"humorvoll": ["funny"]},
                                 "filler": {"en": ["what", "for", "my", "a"], "de": ["wie", "kann", "ich"]}})
    meaning = understand("a funny mouse for my boyfriend", lexicon, aliases={"fuer-ihn": ("gender", "ihn")})
    # 'funny' asks for a mood and boosts entries that say it; 'boyfriend' only says whom the name is for
    assert meaning.words == [["maus"]] and meaning.topics == [["funny"]]
    assert meaning.intents == {"mood": ["humorvoll"], "gender": ["ihn"]}
    assert meaning.ignored == ["a", "for", "my"]
    assert understand("Kumpel", lexicon, frozenset({"kumpel"})).words == [["kumpel"]]
    assert understand("Wie kann ich Schatz sagen", lexicon).words == [["schatz"], ["sagen"]]
    assert understand("What does Honey Bunny mean?", lexicon).define == "Honey Bunny"


def test_nested_nlweb_shape(kb: TestClient) -> None:
    body = kb.post("/ask", json={"query": {"text": "Was bedeutet Maus?", "site": "kosenamen"},
                                 "meta": {"version": "0.54"}}).json()
    assert body["result"][0]["name"] == "Maus"


@pytest.mark.parametrize("body, status, message", [
    ({"query": "a"}, 400, "'query' must have at least 2 characters."),
    ({"site": "kosenamen"}, 400, "'query' is required: a question as text (or {\"text\": …} in the NLWeb shape)."),
    ({"query": "Maus", "site": "example.com"}, 400, "Unknown site 'example.com'."),
    ({"query": "Maus", "limit": 21}, 400, "'limit' must be a whole number from 1 to 20, not 21."),
    ({"query": "Maus", "limit": "5"}, 400, "'limit' must be a whole number from 1 to 20, not \"5\"."),
    (["Maus"], 400, "The body must be a JSON object."),
    ({"query": "Maus", "limit": -2050040759243980406784}, 400,
     "'limit' must be a whole number from 1 to 20, not -2050040759243980406784."),
    ({"query": "Maus", "meta": [None]}, 400, "'meta' must be a JSON object."),
    ({"query": {"text": "Maus", "site": None}}, 400, "'site' must be text."),
    ({"query": "Maus", "prefer": {"streaming": None}}, 400, "'prefer.streaming' must be true or false."),
])
def test_bad_requests(kb: TestClient, body: object, status: int, message: str) -> None:
    response = kb.post("/ask", json=body)
    assert response.status_code == status
    assert response.json()["error"]["message"] == message
    assert response.json()["error"]["hint"]
    if "site" in message:
        assert "kosenamen" in response.json()["error"]["hint"]


@pytest.mark.parametrize("flag", ["yes", "1", "{}", "True", ""])
def test_the_boolean_streaming_header_takes_only_true_or_false(kb: TestClient, flag: str) -> None:
    """The OpenAPI document lists `prefer.streaming` as a boolean header: other values are refused."""
    response = kb.post("/ask", json={"query": "Maus", "streaming": True}, headers={"prefer.streaming": flag})
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("The header 'prefer.streaming' must be true or false")
    plain = kb.post("/ask", json={"query": "Maus"}, headers={"prefer.streaming": "false"})
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("application/json")


def test_bad_json_and_content_type(kb: TestClient) -> None:
    response = kb.post("/ask", content=b"{nope", headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["error"]["message"].startswith("The body is not valid JSON")
    response = kb.post("/ask", content=b"query=Maus", headers={"content-type": "application/x-www-form-urlencoded"})
    assert response.status_code == 415 and response.json()["error"]["code"] == "unsupported_media_type"
    assert kb.get("/ask").status_code == 405
    latin1 = '{"query": "Bärchen"}'.encode("latin-1")
    response = kb.post("/ask", content=latin1, headers={"content-type": "application/json; charset=latin1"})
    assert response.status_code == 415 and response.json()["error"]["message"] == "JSON is sent in UTF-8, not 'latin1'."
    response = kb.post("/ask", content=latin1, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["error"]["message"] == \
        "The body is not UTF-8, which JSON is sent in."
    utf8 = kb.post("/ask", content='{"query": "Bärchen"}'.encode(), headers={"content-type": 'application/json; charset="UTF-8"'})
    assert utf8.status_code == 200


def _events(client: httpx.Client, **kwargs: object) -> list[tuple[str, dict]]:
    with connect_sse(client, "POST", "/ask", **kwargs) as source:  # type: ignore[arg-type]
        assert source.response.headers["content-type"].startswith("text/event-stream")
        return [(event.event, event.json()) for event in source.iter_sse()]


@pytest.mark.parametrize("how", ["prefer-header", "dotted-header", "nested"])
def test_streaming_with_a_real_sse_client(kb_dist: Path, how: str) -> None:
    body: dict = {"query": "Was bedeutet Spatzl?", "limit": 3}
    headers = {}
    if how == "prefer-header":
        headers["Prefer"] = "respond-async, streaming=true"
    elif how == "dotted-header":
        headers["prefer.streaming"] = "true"
    else:
        body = {"query": {"text": "Was bedeutet Spatzl?"}, "limit": 3, "prefer": {"streaming": True}}
    with running_server(kb_dist) as base, httpx.Client(base_url=base) as client:
        events = _events(client, json=body, headers=headers)
    kinds = [kind for kind, _ in events]
    assert kinds == ["start", "result", "result", "result", "complete"]
    assert events[0][1]["response_type"] == "Answer" and events[0][1]["result_count"] == 3
    assert events[1][1]["name"] == "Spatzl"
    assert events[-1][1]["result_count"] == 3 and events[-1][1]["elapsed_ms"] >= 0


def test_client_disconnecting_mid_stream(kb_dist: Path) -> None:
    with running_server(kb_dist) as base, httpx.Client(base_url=base) as client:
        with connect_sse(client, "POST", "/ask", json={"query": "maus", "limit": 20},
                         headers={"Prefer": "streaming=true"}) as source:
            first = next(iter(source.iter_sse()))
            assert first.event == "start"
        # the server shrugs off the closed stream and keeps answering
        assert client.post("/ask", json={"query": "Schatz"}).status_code == 200

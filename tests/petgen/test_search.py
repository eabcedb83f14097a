"""The search engine: normalisation and ranking, one test per class of query."""

from __future__ import annotations

import pytest

from petgen.search import Document, SearchIndex, analyze, build_index, shard, words

TITLES = {
    "Bärchen": ["Bärli", "Bärle"], "Bär": [], "Mäuschen": ["Mäuslein"], "Maus": ["Mausi"],
    "Zuckermaus": [], "Kuschelmaus": [], "Mausebär": [], "Chérie": ["mon Chéri"], "Honey Bunny": ["Honeybunny"],
    "Haus": [], "Schatz": ["Schatzi"], "Liebling": [], "Kuschelbär": [], "Herzblatt": [],
}
KEYWORDS = {"Bärchen": ["bear", "cuddly"], "Maus": ["mouse"], "Mäuschen": ["little mouse"], "Schatz": ["treasure"],
            "Herzblatt": ["sweetheart"]}


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    docs = [Document(slug=t.lower(), title=t, meaning=f"Bedeutung von {t}", url=f"https://x/{t}",
                     fields={"title": [t], "variants": v, "keywords": KEYWORDS.get(t, []), "meaning": ["ein Kosename"]})
            for t, v in TITLES.items()]
    return SearchIndex.from_index(build_index(docs))


def titles(index: SearchIndex, query: str) -> list[str]:
    return [h.title for h in index.search(query)]


@pytest.mark.parametrize("text, folded", [
    ("Bärchen", ["barchen"]), ("Baerchen", ["barchen"]), ("barchen", ["barchen"]), ("BÄRCHEN", ["barchen"]),
    ("Chérie", ["cherie"]), ("Süßmaus", ["sussmaus"]), ("Honey-Bunny!", ["honey", "bunny"]), ("Zuckerstück", ["zuckerstuck"]),
])
def test_normalisation(text: str, folded: list[str]) -> None:
    assert words(text) == folded


@pytest.mark.parametrize("query", ["Bärchen", "Baerchen", "barchen", "BÄRCHEN"])
def test_umlaut_spellings_find_the_same_entry_first(index: SearchIndex, query: str) -> None:
    assert titles(index, query)[0] == "Bärchen"


def test_accents(index: SearchIndex) -> None:
    assert titles(index, "cherie")[0] == "Chérie" and titles(index, "Chéri")[0] == "Chérie"


def test_prefix_as_you_type(index: SearchIndex) -> None:
    found = titles(index, "bär")
    assert found[0] == "Bär" and {"Bärchen", "Kuschelbär", "Mausebär"} <= set(found)
    assert "Mäuschen" in titles(index, "mäu")


def test_compounds(index: SearchIndex) -> None:
    found = titles(index, "maus")
    assert found[0] == "Maus"
    assert {"Zuckermaus", "Kuschelmaus", "Mausebär"} <= set(found)
    assert "Haus" not in found[:5]


def test_stemming_german_and_english(index: SearchIndex) -> None:
    assert titles(index, "Schätze")[0] == "Schatz"
    assert titles(index, "bears")[0] == "Bärchen"
    assert titles(index, "treasures")[0] == "Schatz"


def test_typos_one_edit_from_four_two_from_eight(index: SearchIndex) -> None:
    assert titles(index, "Libling")[0] == "Liebling"  # 1 edit
    assert titles(index, "Hertzblat")[0] == "Herzblatt"  # 2 edits, 9 letters
    assert titles(index, "Lbling") == []  # 2 edits on 6 letters: too many
    assert titles(index, "Schaz")[0] == "Schatz"  # transposition-free deletion, 5 letters
    assert titles(index, "baer") and titles(index, "bar")[0] == "Bär"


def test_exact_always_above_fuzzy(index: SearchIndex) -> None:
    hits = index.search("haus")
    assert hits[0].title == "Haus"
    assert all(h.score < 100 for h in hits[1:])  # Maus etc. only by typo
    maus = index.search("maus")
    assert maus[0].title == "Maus" and all(h.title != "Haus" or h.score < 100 for h in maus)


def test_field_weights_title_variants_keywords_meaning(index: SearchIndex) -> None:
    scores = {h.title: h.score for h in index.search("mausi")}
    assert scores["Maus"] > 100  # variant
    scores = {h.title: h.score for h in index.search("mouse")}
    assert scores["Maus"] == pytest.approx(113.0)  # keyword weight 3, + 100 without typo, + 10 whole word
    assert index.search("kosename")[0].score == pytest.approx(111.0)  # meaning weight 1


def test_ties_broken_by_title_and_deterministic(index: SearchIndex) -> None:
    first = [(h.title, h.score) for h in index.search("kosename")]
    assert first == [(h.title, h.score) for h in index.search("kosename")]
    assert [t for t, _ in first] == sorted([t for t, _ in first], key=lambda t: (len(t), words(t)[0]))


def test_word_groups_count_once(index: SearchIndex) -> None:
    both = {h.title: h.score for h in index.search([["mauschen", "mausi"]])}
    assert both["Mäuschen"] == pytest.approx(118.0)  # title 8 + 100 + 10, counted once for the group
    assert both["Maus"] == pytest.approx(114.9)  # variant Mausi: 5 × 0.98 (second alternative) + 110


def test_exact_word_above_same_stem(index: SearchIndex) -> None:
    scores = {h.title: h.score for h in index.search("schatzi")}
    assert scores["Schatz"] == pytest.approx(115.0)  # the variant Schatzi itself: 5 × 1.0 + 110
    assert titles(index, "Schatz")[0] == "Schatz"


def test_compound_tails_of_names(index: SearchIndex) -> None:
    assert titles(index, "blatt")[0] == "Herzblatt"  # 'blatt' is no word of its own anywhere
    assert titles(index, "ling")[0] == "Liebling"


def test_top_k_and_total(index: SearchIndex) -> None:
    hits, total = index.top("kosename", 3)
    assert len(hits) == 3 and total == len(index.search("kosename")) == len(TITLES)
    assert [h.title for h in hits] == [h.title for h in index.search("kosename")[:3]]


def test_stopwords_are_dropped_unless_alone() -> None:
    assert analyze("für meine Maus") == ["meine", "maus"]
    assert analyze("the") == ["the"]


def test_shards_are_by_prefix_and_roundtrip(index: SearchIndex) -> None:
    data = build_index([Document("a", "Bärchen", "m", "u", {"title": ["Bärchen"]})])
    shards = shard(data)
    assert "ba" in shards and "barchen" in shards["ba"]["words"]
    for key, content in shards.items():  # every term sits in the shard of its first two characters
        assert all(term[:2] == key for kind in content.values() for term in kind)
    again = SearchIndex.from_shards(data["docs"], shards.values())
    assert again.search("bärchen")[0].slug == "a"


def test_whole_words_above_prefixes_and_compounds(index: SearchIndex) -> None:
    scores = {h.title: h.score for h in index.search("maus")}
    assert scores["Maus"] == pytest.approx(118.0)
    assert scores["Zuckermaus"] == pytest.approx(8 * 0.55 + 100)  # compound part: no whole-word bonus
    assert scores["Maus"] - scores["Zuckermaus"] > 10

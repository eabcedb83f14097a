"""The search engine: normalisation and ranking, one test per class of query."""

from __future__ import annotations

import mmap
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import petgen.search.query as engine
from petgen.contract.resources import encode
from petgen.search import topk, update
from petgen.search.index import FIELDS, WEIGHTS, Document, analyze, build_index, document_terms, words, words_each
from petgen.search.pack import pack_index
from petgen.search.query import SearchIndex
from petgen.search.stored import HEAD

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


def test_typos_can_be_left_out_for_words_spelt_right(index: SearchIndex) -> None:
    """/ask's topic words come from the lexicon: `typos=False` looks up none for them."""
    assert index.sources(["libling"], prefix=False) and not index.sources(["libling"], prefix=False, typos=False)
    assert index.sources(["liebling"], prefix=False, typos=False)


def test_exact_always_above_fuzzy(index: SearchIndex) -> None:
    hits = index.search("haus")
    assert hits[0].title == "Haus" and hits[0].score == 1.0
    assert titles(index, "maus")[0] == "Maus" and "Haus" not in titles(index, "maus")  # a known word: no typos


def test_scores_are_confidences_from_0_to_1(index: SearchIndex) -> None:
    """field × match, the mean over the query's groups: comparable whatever the query."""
    scores = {h.title: h.score for h in index.search("mausi")}
    assert scores["Maus"] == pytest.approx(0.9)  # variant, whole word
    assert {h.title: h.score for h in index.search("mouse")}["Maus"] == pytest.approx(0.8)  # keyword
    assert index.search("kosename")[0].score == pytest.approx(0.45)  # meaning
    assert {h.title: h.score for h in index.search("Libling")}["Liebling"] == pytest.approx(0.6)  # one typo
    assert {h.title: h.score for h in index.search("Hertzblat")}["Herzblatt"] == pytest.approx(0.5)  # two
    prefix = {h.title: h.score for h in index.search("kusch")}
    assert prefix["Kuschelbär"] == pytest.approx(0.5 + 0.4 * 5 / 10)  # typed 5 of 10 letters
    both = {h.title: h.score for h in index.search("maus herzblatt")}
    assert both["Maus"] == pytest.approx(0.5) and both["Herzblatt"] == pytest.approx(0.5)  # one of two words
    for query in ("bär", "ma", "zuckermaus", "bärchen mausi kosename", "Hertzblat"):
        assert all(0 < h.score <= 1 for h in index.search(query))


def test_groups_that_match_nothing_are_left_out(index: SearchIndex) -> None:
    docs, scores, unmatched = index.scored("maus qwxyz")
    assert unmatched == [["qwxyz"]] and max(scores) == 1.0


def test_ties_broken_by_title_and_deterministic(index: SearchIndex) -> None:
    first = [(h.title, h.score) for h in index.search("kosename")]
    assert first == [(h.title, h.score) for h in index.search("kosename")]
    assert [t for t, _ in first] == sorted([t for t, _ in first], key=lambda t: (len(t), words(t)[0]))


def test_word_groups_count_once(index: SearchIndex) -> None:
    both = {h.title: h.score for h in index.search([["mauschen", "mausi"]])}
    assert both["Mäuschen"] == pytest.approx(1.0)  # the title, counted once for the group
    assert both["Maus"] == pytest.approx(0.9 * 0.98)  # variant Mausi, the second alternative


def test_exact_word_above_same_stem(index: SearchIndex) -> None:
    scores = {h.title: h.score for h in index.search("schatzi")}
    assert scores["Schatz"] == pytest.approx(0.9)  # the variant Schatzi itself
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


def test_shards_are_by_prefix(index: SearchIndex) -> None:
    docs = [Document("a", "Bärchen", "m", "u", {"title": ["Bärchen"]}),
            Document("b", "X", "m", "u", {"title": ["X"]})]
    shards = {key: orjson.loads(data) for key, data in update.build(docs, encode).shards.items()}
    assert "ba" in shards and "barchen" in shards["ba"]["words"] and "x" in shards["_"]["words"]
    for key, content in shards.items():  # every term sits in the shard of its first two characters
        assert all(term[:2] == key or (key == "_" and len(term) == 1) for kind in content.values() for term in kind)
    assert SearchIndex.from_index(build_index(docs)).search("bärchen")[0].slug == "a"


def test_the_pack_file_is_mapped_and_checked(tmp_path: Path) -> None:
    data = build_index([Document("a", "Bärchen", "m", "u", {"title": ["Bärchen"]})])
    path = tmp_path / "index.bin"
    path.write_bytes(pack_index(data))
    mapped = SearchIndex.load(path)
    path.unlink()  # the mapping outlives the file (a build swapped out and deleted)
    assert mapped.search("baerchen")[0].slug == "a" and mapped.docs[0] == ["a", "Bärchen", "m", "u"]
    assert isinstance(mapped.arrays.pack.buffer, mmap.mmap)
    for broken in (b"", b"not a pack", pack_index(data)[:200]):
        path.write_bytes(broken)
        with pytest.raises(ValueError):
            SearchIndex.load(path)


def test_whole_words_above_prefixes_and_compounds(index: SearchIndex) -> None:
    scores = {h.title: h.score for h in index.search("maus")}
    assert scores["Maus"] == pytest.approx(1.0)
    assert scores["Zuckermaus"] == pytest.approx(0.65)  # compound part
    assert scores["Maus"] > scores["Mausebär"]


def many(count: int, word: str) -> SearchIndex:
    """An index of `count` documents whose titles all start with `word` (and share a typo neighbourhood)."""
    docs = [Document(f"d{i}", f"{word}{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{i}", "m", "u",
                     {"title": [f"{word}{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{i}"], "meaning": ["gemeinsam"]})
            for i in range(count)]
    return SearchIndex.from_index(build_index(docs))


def test_prefix_expansion_is_capped() -> None:
    big = many(3 * engine.PREFIX_FANOUT + 40, "kuschel")
    for prefix in ("ku", "kus", "kusche", "kuschela"):
        found = big.completions(prefix)
        assert 0 < len(found) <= engine.PREFIX_FANOUT
        assert [len(w) for w in found] == sorted(len(w) for w in found)  # the shortest first
    assert len(big.search("kusch")) <= engine.PREFIX_FANOUT


PREFIXES = "ba bi bo bu da di do fa fe fi fo ga ge gi go ha hi ho hu ka".split()  # no stopwords among them
LETTERS = "abcdfghijklmnopqrstuvwxyz"  # no "e": no ae/oe/ue, which fold to one letter


def test_a_query_cannot_expand_beyond_its_completions() -> None:
    """The words of one query share QUERY_COMPLETIONS completions: each of n words expanded as prefixes keeps
    its first prefix_share(n); a query of four words or fewer is not affected, twenty words keep six each, and
    the completions of a whole query never pass the cap. A word's completions are those it has alone, cut short."""
    index = SearchIndex.from_index(build_index([
        Document(f"d{p}{i}", p + LETTERS[i % 25] + LETTERS[i // 25], "m", "u", {"title": [p + LETTERS[i % 25] + LETTERS[i // 25]]})
        for p in PREFIXES for i in range(2 * engine.PREFIX_FANOUT)]))
    assert all(len(index.completions(p)) == engine.PREFIX_FANOUT for p in PREFIXES)
    assert engine.QUERY_COMPLETIONS == 4 * engine.PREFIX_FANOUT
    assert [engine.prefix_share(n) for n in (1, 4, 5, 20, 128, 129)] == [32, 32, 25, 6, 1, 0]

    def expanded(query: str) -> list[int]:
        """How many completions each word of the query brought (its lists with prefixes, less those without)."""
        with_prefix, _ = index.matched(query)
        without, _ = index.matched(query, prefix=False)
        return [len(a) - len(b) for a, b in zip(with_prefix, without)] + [len(a) for a in with_prefix[len(without):]]

    for size in (1, 4, 5, 8, 20):
        query = " ".join(PREFIXES[:size])
        found = expanded(query)
        assert found == [engine.prefix_share(size)] * size, query
        assert sum(found) <= engine.QUERY_COMPLETIONS
    assert expanded(" ".join(PREFIXES[:4])) == [engine.PREFIX_FANOUT] * 4  # four words: every completion
    # 20 words: each word's six shortest completions, the same as its own first six
    query = " ".join(PREFIXES)
    docs, _, _ = index.scored(query)
    first = {w for p in PREFIXES for w in index.completions(p)[:engine.prefix_share(20)]}
    assert {index.docs[d][1] for d in docs.tolist()} == first
    assert index.top(query, 10)[1] == len(first) == 20 * 6 < len(PREFIXES) * engine.PREFIX_FANOUT
    # a group of alternatives counts each of its words
    groups, _ = index.matched([PREFIXES[:3], PREFIXES[3:5]])
    assert sum(len(g) for g in groups) == 5 * engine.prefix_share(5)
    assert engine.prefix_words([["ab", "c"], ["def"]]) == 2  # words of one letter are not expanded


def test_a_long_prefix_looks_at_prefix_scan_words_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    big = many(300, "kuschel")  # kuschelaa0, kuschelba1, … : 300 words that start with "kusche"
    everything = sorted(w for w in big.arrays.terms if w.startswith("kusche") and big.posting(engine.WORD, w))
    monkeypatch.setattr(engine, "PREFIX_SCAN", 40)
    found = big.completions("kusche")
    assert found and set(found) <= set(everything[:40])  # only the first 40 in alphabetical order were looked at
    monkeypatch.setattr(engine, "PREFIX_SCAN", 512)
    assert not set(big.completions("kusche")) <= set(everything[:40])


def test_fuzzy_candidates_and_matches_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    big = many(400, "maus")
    monkeypatch.setattr(engine, "FUZZY_SCAN", 50)
    assert len(big.fuzzy_candidates("mausab1", 2)) <= 50
    typos = big.typos("mausxy12")  # not indexed: close to many titles
    assert 0 < len(typos) <= engine.FUZZY_MATCHES
    assert big.typos("mausaa0") == []  # an indexed word is not looked up for typos


def test_top_k_without_sorting_everything() -> None:
    big = many(500, "herz")
    hits, total = big.top("gemeinsam", 7)
    assert total == 500 and len(hits) == 7
    assert [h.title for h in hits] == [h.title for h in big.search("gemeinsam")[:7]]


def test_did_you_mean_from_titles(index: SearchIndex) -> None:
    assert [h.title for h in index.suggest("Hertzbladd")][:1] == ["Herzblatt"]
    assert [h.title for h in index.suggest("Honey Buny")][:1] == ["Honey Bunny"]
    assert index.suggest("zz") == []


def common(count: int) -> SearchIndex:
    """`count` documents that all share two words (one in a few titles, the rest in meanings), plus rarer ones."""
    docs = []
    for i in range(count):
        title = f"Herz{i}" if i % 97 else f"Kuscheln {i}"
        fields = {"title": [title], "keywords": ["kuscheln"] if i % 7 == 0 else [f"wort{i % 13}"],
                  "meaning": [f"kuscheln gemeinsam sonne{i % 5} mond{i % 11}"]}
        docs.append(Document(f"d{i}", title, "m", "u", fields))
    return SearchIndex.from_index(build_index(docs))


@pytest.mark.parametrize("query", ["kuscheln", "kuscheln gemeinsam", "gemeinsam sonne3", "kusch", "mond4 wort2",
                                   "herz", "kuscheln wort5 sonne1 mond7"])
def test_bounded_top_k_equals_scoring_everything(query: str) -> None:
    big = common(3000)
    docs, scores, _ = big.scored(query)
    for limit in (1, 10, 50):
        hits, total = big.top(query, limit)
        assert total == len(docs)
        assert [(h.doc, h.score) for h in hits] == [(h.doc, h.score) for h in big.ranked(docs, scores, limit)]


def test_a_query_looks_at_most_at_max_head_documents_of_a_long_list(monkeypatch: pytest.MonkeyPatch) -> None:
    big = common(3000)
    seen: list[int] = []
    original = SearchIndex._top_of_heads

    def counting(self: SearchIndex, groups: list, limit: int, head: int, *memo: dict) -> tuple:
        seen.append(head)
        return original(self, groups, limit, head, *memo)

    monkeypatch.setattr(SearchIndex, "_top_of_heads", counting)
    monkeypatch.setattr(topk, "MAX_HEAD", 128)
    hits, total = big.top("mond4 wort2", 10)  # needs more than the first heads to prove its top ten
    assert len(hits) == 10 and total == len(big.scored("mond4 wort2")[0])
    assert seen == [HEAD, 128]  # grown once, then stopped by the cap
    assert all(len(big.posting(engine.WORD, w)) > 128 for w in ("mond4", "wort2"))  # so the cap was what bounded it


def test_a_query_of_many_long_lists_looks_at_most_at_max_candidates_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    big = common(3000)
    seen: list[int] = []
    original = SearchIndex._top_of_heads

    def counting(self: SearchIndex, groups: list, limit: int, head: int, *memo: dict) -> tuple:
        long = [posting for sources in groups for posting, _, _ in sources if posting.impact is not None]
        seen.append(sum(min(head, len(posting)) for posting in long))
        return original(self, groups, limit, head, *memo)

    monkeypatch.setattr(SearchIndex, "_top_of_heads", counting)
    monkeypatch.setattr(topk, "MAX_CANDIDATES", 1200)
    hits, _ = big.top("kuscheln wort5 sonne1 mond7", 10)  # four long lists (and more from the prefix sonne1 …)
    assert len(hits) == 10 and len(seen) > 1  # it had to grow, and stopped at the budget
    assert max(seen) <= 1200 and seen[-1] > seen[0]  # grown, but never beyond it


def test_groups_that_cannot_lift_a_document_into_the_top_are_only_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    """`pruned_top`: two words in every document beside two rare ones (titles); the common ones are probed at the rare
    ones' documents, and the answer is the same as scoring everything."""
    big = common(3000)
    query = "kuscheln gemeinsam herz5 herz7"
    docs, scores, _ = big.scored(query)
    groups, _ = big.matched(query)
    merged: list[int] = []
    original = SearchIndex.group_of

    def merging(self: SearchIndex, sources: list) -> tuple:
        merged.append(sum(len(posting) for posting, _, _ in sources))
        return original(self, sources)

    monkeypatch.setattr(SearchIndex, "group_of", merging)
    for limit in (1, 10, 50):
        hits = big.pruned_top(groups, limit)
        assert hits is not None
        assert [(h.doc, h.score) for h in hits] == [(h.doc, h.score) for h in big.ranked(docs, scores, limit)]
    assert merged and max(merged) * topk.SMALL_GROUP <= len(big.docs)  # the groups in every document never merged
    rare = sum(len(posting) for sources in groups[2:] for posting, _, _ in sources)
    monkeypatch.setattr(topk, "MAX_MERGED", rare - 1)  # fewer than the rare words' postings: the heads answer instead
    assert big.pruned_top(groups, 10) is None
    hits, total = big.top(query, 10)
    assert total == len(docs)
    assert [(h.doc, h.score) for h in hits] == [(h.doc, h.score) for h in big.ranked(docs, scores, 10)]


def test_recently_read_lists_and_documents_are_kept_within_their_bound() -> None:
    """The caches of decoded posting lists and documents never hold more than their limit, the least recently
    used going first (a read makes an entry the newest), and a list read again is the same object (its
    confidences decoded once)."""
    from petgen.search.stored import Recent

    recent = Recent(10)
    for key in range(6):
        recent.put(key, str(key), weight=3)
        assert recent.weight <= 10
    assert list(recent.items) == [3, 4, 5] and recent.get(0) is None and recent.get(5) == "5"
    recent = Recent(10)
    for key in range(3):
        recent.put(key, str(key), weight=3)
    assert recent.get(0) == "0"  # 0 is now the most recently used: 1 goes first, then 2
    recent.put(3, "3", weight=3)
    assert list(recent.items) == [2, 0, 3] and recent.get(1) is None and recent.weight == 9
    recent.put(4, "4", weight=3)
    assert list(recent.items) == [0, 3, 4] and recent.get(2) is None
    recent.put(3, "again", weight=4)  # the same key put twice counts once
    assert recent.weight == 10 and recent.get(3) == "again" and list(recent.items) == [0, 4, 3]
    assert recent.put(99, "too heavy", weight=11) == "too heavy" and recent.get(99) is None and recent.weight == 10
    index = SearchIndex.from_index(build_index([Document(slug=f"d{i}", title=f"Maus {i}", meaning="klein", url="u",
                                                          fields={"title": [f"Maus {i}"]}) for i in range(5)]))
    first = index.posting(engine.WORD, "maus")
    assert first is not None and index.posting(engine.WORD, "maus") is first
    assert index.recent.weight == sum(len(p) for p, _ in index.recent.items.values())


def test_typo_candidates_too_far_by_their_letters_are_dropped_exactly() -> None:
    """`_nearby(..., near=True)` drops the candidates whose characters differ from the word's by more than the
    edit distance (`stored.within`): the typos and suggestions found among the rest are those found among all
    candidates; some were dropped; the decoded buckets stay within their bound."""
    from rapidfuzz.distance import OSA
    from rapidfuzz.process import extract

    from petgen.search.stored import NEAR_KEPT, letter_set, letter_sets

    assert letter_sets("ab\n\nba\nxyz").tolist() == [letter_set("ab"), 0, letter_set("ab"), letter_set("xyz")]
    big = many(400, "maus")
    dropped = 0
    for word in ["mausab1", "mausxy12", "muasab", "mausaa0", "maus", "mäusab", "mxyzab9", "mausab1mausab1"]:
        for shapes in ("shape", "title"):
            for distance in (1, 2, 3):
                every, every_ids = big._nearby(shapes, word, distance)
                near, near_ids = big._nearby(shapes, word, distance, near=True)
                assert set(near) <= set(every) and [s for s in every if s in set(near)] == near
                found = lambda pool, ids: [(s, d, int(ids[i])) for s, d, i in extract(  # noqa: E731
                    word, pool, scorer=OSA.distance, score_cutoff=distance, limit=len(pool) or 1)]
                assert found(near, near_ids) == found(every, every_ids)
                dropped += len(every) - len(near)
    assert dropped > 0
    assert all(buckets.recent.weight <= NEAR_KEPT for buckets in big.near.values())


TEXT = st.text(alphabet=st.sampled_from(list("aouAÖsSßẞİıﬁͺ\u0308\u0301e\x00\x01 -_.,'„“²٣0äöüÄÜ\ud800der und")),
               max_size=30)


@settings(max_examples=2000, deadline=None)
@given(st.lists(TEXT, max_size=6), st.lists(TEXT, max_size=3))
def test_the_words_of_many_texts_at_once_are_those_of_each(texts: list[str], keywords: list[str]) -> None:
    """`words_each` (one pass over texts joined by NUL) finds what `words` finds in each text, combining marks at
    a text's start and a NUL in a text included; `document_terms` weighs each text's `analyze` words."""
    assert words_each(texts) == [words(text) for text in texts]
    fields = {"title": texts[:1], "variants": texts[1:], "keywords": keywords, "meaning": ["der und " + "".join(texts)]}
    expected: dict[str, float] = {}
    for name in FIELDS:
        for text in fields[name]:
            for word in analyze(text):
                expected[word] = max(expected.get(word, 0.0), WEIGHTS[name])
    assert document_terms(fields) == expected

"""The compact engine (the pack file the runtime maps) answers as the JSON form of the index says it must:
the same hits in the same order with the same scores, the same totals, suggestions and completions as a
brute-force scoring of every document (tests/petgen/search_reference.py) over the build's JSON shards, for
random words, prefixes, typos, umlaut spellings and multi-word queries, over the bundled content and a
synthetic one (long posting lists: the bounded top-k, bitmaps)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import orjson
import pytest

from petgen.build.pipeline import build
from petgen.content.synthetic import write_corpus
from petgen.search.query import SearchIndex
from petgen.search.stored import HEAD
from runtime.builds.dist import Dist
from runtime.reading import understand
from tests.petgen.search_reference import Reference

REPO = Path(__file__).resolve().parents[2]
ADVERSARIAL = ["ab", "ei au oh", "a b c d e f g h i j k l m n o p q r s t", "aaaaaaaaaa", "üüüüüü", "ßßßß äää",
               "Ää Öö Üü ß", "äöü äöü äöü äöü äöü", "mmmmmmmmmmmmmmmmmmmmmmmmmmmmm"]


def built(root: Path, content: Path) -> tuple[Dist, Reference]:
    """The build's engine, and a brute-force reference over its static index for browsers (documents and shards,
    numbered in title order there) renumbered as the engine numbers its documents."""
    build(content, root / "dist", base_url="http://testserver")
    read = lambda path: orjson.loads((root / "dist" / path.lstrip("/")).read_bytes())
    index = read("/search/index.json")
    docs = [doc for path in index["documents"]["files"] for doc in read(path)]
    assert len(docs) == index["documents"]["count"] and all(len(read(path)) == index["documents"]["per_file"]
                                                            for path in index["documents"]["files"][:-1])
    dist = Dist.load(root / "dist")
    number = {dist.search.docs[d][0]: d for d in range(len(dist.search.docs))}
    engine = [number[slug] for slug, *_ in docs]  # the engine's number of each document of the static index
    assert [int(dist.search.order[d]) for d in engine] == list(range(len(docs)))  # numbered in title order
    postings: dict[str, dict] = {"stems": {}, "words": {}, "parts": {}}
    for path in index["shards"].values():
        for kind, terms in read(path).items():
            for term, (ids, weights) in terms.items():
                pairs = sorted(zip([engine[d] for d in ids], weights))
                postings[kind][term] = [[d for d, _ in pairs], [w for _, w in pairs]]
    return dist, Reference({"docs": [docs[rank] for rank in np.argsort(engine).tolist()], **postings})


@pytest.fixture(scope="module", params=["bundled", "synthetic"])
def engines(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Dist, Reference]:
    root = tmp_path_factory.mktemp(request.param)
    if request.param == "bundled":
        return built(root, REPO / "content")
    content = write_corpus(root / "content", 2500, taxonomy_from=REPO / "content")
    (content / "lexicon.yml").write_bytes((REPO / "content" / "lexicon.yml").read_bytes())
    return built(root, content)


def typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word))
    edit = rng.choice(["delete", "replace", "insert", "swap"])
    if edit == "delete":
        return word[:i] + word[i + 1:]
    if edit == "swap" and i + 1 < len(word):
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    letter = rng.choice("abcdefghijklmnopqrstuvwxyzäöüß")
    return word[:i] + letter + word[i + (edit == "replace"):]


def queries(reference: Reference, seed: int = 7) -> list[str]:
    """Random indexed words, prefixes of them, one or two typos, umlaut spellings, titles and several words at once."""
    rng = random.Random(seed)
    vocabulary = reference.vocabulary
    titles = [doc[1] for doc in reference.docs]
    found = list(ADVERSARIAL)
    for _ in range(50):
        word = rng.choice(vocabulary)
        found += [word, word[:rng.randint(2, max(2, len(word)))], word[:2], word[:3]]
        if len(word) >= 4:
            found.append(typo(word, rng))
        if len(word) >= 8:
            found.append(typo(typo(word, rng), rng))
        title = rng.choice(titles)
        found += [title, title.replace("ä", "ae").replace("ö", "oe").replace("ü", "ue"), title.upper(), typo(title, rng)]
        found.append(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(2, 5))))
    found.append(" ".join(rng.choice(vocabulary) for _ in range(20)))
    common = sorted(vocabulary, key=lambda w: -len(reference.kinds["words"][w]))[:40]
    found += [" ".join(rng.sample(common, 20)), " ".join(common[:3]), " ".join(w[:3] for w in common[:6])]
    for n in (1, 2, 3):  # words in (nearly) every document beside rarer ones: `SearchIndex.pruned_top`
        found += [" ".join([*common[:n], *rng.sample(vocabulary, 5)]), " ".join([*rng.sample(vocabulary, 2), common[n]]),
                  " ".join([*rng.sample(common, n), *rng.sample(common[20:], 3), *rng.sample(vocabulary, 12)])]
    return list(dict.fromkeys(q for q in found if q.strip()))


def hits(found: list) -> list[tuple[int, float]]:
    return [(h.doc, h.score) for h in found]


def test_the_engine_answers_as_scoring_every_document(engines: tuple[Dist, Reference],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    dist, reference = engines
    index = dist.search
    assert [index.docs[d] for d in range(len(index.docs))] == reference.docs
    pruned = []
    original = SearchIndex.pruned_top

    def counting(self: SearchIndex, groups: list, limit: int) -> list | None:
        found = original(self, groups, limit)
        pruned.append(found is not None)
        return found

    monkeypatch.setattr(SearchIndex, "pruned_top", counting)
    checked = long = 0
    for q in queries(reference):
        scores = reference.scores(q)
        for limit in (1, 10, 50):
            found, total = index.top(q, limit)
            assert (hits(found), total) == (reference.ranked(scores, limit), len(scores)), (q, limit)
        assert hits(index.search(q)) == reference.ranked(scores, None), q
        assert hits(index.suggest(q)) == reference.suggest(q), q
        word = q.split()[0].casefold()
        assert index.completions(word) == reference.completions(word), q
        long += len(scores) > HEAD
        checked += 1
    assert checked > 250 and long > 5  # and some needed the bounded top-k's heads
    assert sum(pruned) >= (10 if len(index.docs) > 1000 else 0), (sum(pruned), len(pruned))  # and its pruning


def test_api_search_word_groups_answer_as_scoring_every_document(engines: tuple[Dist, Reference]) -> None:
    """/api/search's word groups (question words dropped, English mapped through the lexicon, alternatives)."""
    dist, reference = engines
    asks = ["Kosename für meine Freundin", "süße maus für meine Freundin", "frecher Kosename für meinen Freund",
            "romantic names for my wife", "schwäbische Kosenamen für ein Baby", "sonne mond sterne", "kuschel bär",
            "cute nickname for my girlfriend that means little mouse", "Welcher Kosename bedeutet kleiner Spatz?"]
    for q in queries(reference, seed=11)[:120] + asks:
        meaning = understand(q, dist.lexicon_index, dist.title_words)
        groups = meaning.words + meaning.topics
        if groups:
            found, total = dist.search.top(groups, 10)
            assert (hits(found), total) == reference.top(groups, 10), q


def test_recent_keeps_its_summed_weight_exact_under_threads() -> None:
    """Puts from many threads at once: the summed weight stays what is kept (a drifted sum evicted everything)."""
    import threading

    from petgen.search.stored import Recent
    cache = Recent(500)

    def work(seed: int) -> None:
        for i in range(3000):
            key = (seed * 7 + i) % 97
            if cache.get(key) is None:
                cache.put(key, key, 1 + key % 13)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.weight == sum(weight for _, weight in cache.items.values()) <= 500
    assert len(cache.items) > 30  # not emptied: about 500 / 7 entries fit

"""The compact engine (the pack file the runtime maps) answers exactly as the engine over the JSON shards did:
the same hits in the same order with the same scores, the same totals and the same suggestions, for random
words, prefixes, typos, umlaut spellings and multi-word queries, over the bundled content and a synthetic one."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import orjson
import pytest

from petgen.build import build
from petgen.synthetic import write_corpus
from runtime.ask import answer
from runtime.dist import Dist
from runtime.search import search_results
from tests.petgen import legacy_searchquery as legacy

REPO = Path(__file__).resolve().parents[2]
ADVERSARIAL = ["ab", "ei au oh", "a b c d e f g h i j k l m n o p q r s t", "aaaaaaaaaa", "üüüüüü", "ßßßß äää",
               "Ää Öö Üü ß", "äöü äöü äöü äöü äöü", "mmmmmmmmmmmmmmmmmmmmmmmmmmmmm"]


def built(root: Path, content: Path) -> tuple[Dist, legacy.SearchIndex]:
    build(content, root / "dist", base_url="http://testserver")
    dist = Dist.load(root / "dist")
    index = orjson.loads((root / "dist" / "search" / "index.json").read_bytes())
    shards = (orjson.loads((root / "dist" / path.lstrip("/")).read_bytes()) for path in index["shards"].values())
    return dist, legacy.SearchIndex.from_shards(index["docs"], shards)


@pytest.fixture(scope="module", params=["bundled", "synthetic"])
def engines(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Dist, legacy.SearchIndex]:
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


def queries(index: legacy.SearchIndex, seed: int = 7) -> list[str]:
    """Random indexed words, prefixes of them, one or two typos, umlaut spellings, titles and several words at once."""
    rng = random.Random(seed)
    vocabulary = index.vocabulary
    titles = [doc[1] for doc in index.docs]
    found = list(ADVERSARIAL)
    for _ in range(60):
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
    common = sorted(vocabulary, key=lambda w: -len(index.words[w]))[:40]
    found += [" ".join(rng.sample(common, 20)), " ".join(common[:3]), " ".join(w[:3] for w in common[:6])]
    return list(dict.fromkeys(q for q in found if q.strip()))


def hits(found: list) -> list[tuple[int, str, float]]:
    return [(h.doc, h.slug, h.score) for h in found]


def test_the_engine_answers_as_the_json_engine(engines: tuple[Dist, legacy.SearchIndex]) -> None:
    dist, old = engines
    new = dist.search
    assert len(new.docs) == len(old.docs) and [new.docs[d] for d in (0, len(old.docs) - 1)] == [old.docs[0], old.docs[-1]]
    checked = 0
    for q in queries(old):
        for limit in (1, 10, 50):
            (a, total_a), (b, total_b) = new.top(q, limit), old.top(q, limit)
            assert (hits(a), total_a) == (hits(b), total_b), (q, limit)
        assert hits(new.search(q)) == hits(old.search(q)), q
        assert hits(new.suggest(q)) == hits(old.suggest(q)), q
        assert new.completions(q.split()[0].casefold()) == old.completions(q.split()[0].casefold()), q
        checked += 1
    assert checked > 300


def test_the_runtime_answers_as_with_the_json_engine(engines: tuple[Dist, legacy.SearchIndex]) -> None:
    """/api/search and /ask (word groups, filters, the bounded top-k of runtime/understanding.py) on both engines."""
    dist, old = engines
    before = dataclasses.replace(dist, search=old)
    asks = ["Kosename für meine Freundin", "süße maus für meine Freundin", "frecher Kosename für meinen Freund",
            "romantic names for my wife", "schwäbische Kosenamen für ein Baby", "sonne mond sterne", "kuschel bär"]
    for q in queries(old, seed=11)[:150] + asks:
        q = q[:200]
        assert search_results(q, 10, dist) == search_results(q, 10, before), q
        a, b = answer(q, dist, 10), answer(q, before, 10)
        assert (hits(a.hits), a.relaxed, hits(a.suggestions)) == (hits(b.hits), b.relaxed, hits(b.suggestions)), q

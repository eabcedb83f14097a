"""Per-entry updates of the search index (petgen/search/update.py): an updated index is the index built anew."""

from __future__ import annotations

import pickle
import random

import numpy as np
import orjson
import pytest

from petgen.contract.resources import encode
from petgen.search import update
from petgen.search.index import Document, build_index, is_known, shard_key, title_order
from petgen.search.pack import Postings, pack, prefix_completions, tables_of
from petgen.search.query import PREFIX_FANOUT, SHORT_PREFIX
from petgen.search.repack import patched

WORDS = ["Maus", "Bärchen", "Zucker", "Zuckermaus", "Schnecke", "Herz", "Herzblatt", "Kuschel", "Kuschelbär",
         "Honig", "Honigbiene", "Stern", "Sternchen", "klein", "süß", "treu", "Liebling", "Schatz", "Mausebär",
         "Spatz", "Schnuckel", "Wolke", "Quatschkopf", "kopf", "Blume", "Blümchen", "Engel", "Engelchen"]


def document(rng: random.Random, slug: str, title: str) -> Document:
    def pick(k: int) -> str:
        return " ".join(rng.sample(WORDS, k))

    return Document(slug=slug, title=title, meaning=pick(rng.randint(2, 6)), url=f"https://x/{slug}",
                    fields={"title": [title], "variants": [pick(1) for _ in range(rng.randint(0, 2))],
                            "keywords": [pick(1) for _ in range(rng.randint(0, 2))], "meaning": [pick(rng.randint(2, 6))]})


def edited(rng: random.Random, doc: Document) -> Document:
    """The same document (slug, title) with other variants, keywords or meaning, sometimes a word never seen."""
    new = document(rng, doc.slug, doc.title)
    if rng.random() < 0.5:
        new.fields = {**doc.fields, "meaning": [f"{rng.choice(WORDS)} Wort{rng.randint(0, 9999)}"]}
    if rng.random() < 0.5:
        new.fields["keywords"] = doc.fields["keywords"]
    return new


def same(state: update.IndexState, fresh: update.IndexState) -> None:
    assert state.docs == fresh.docs
    for kind in update.KINDS:
        mine, theirs = state.kinds[kind], fresh.kinds[kind]
        assert mine.terms == theirs.terms, kind
        for name in ("start", "docs", "weights"):
            assert getattr(mine, name).tolist() == getattr(theirs, name).tolist(), (kind, name)
            assert getattr(mine, name).dtype == getattr(theirs, name).dtype, (kind, name)
    assert state.shards == fresh.shards and list(state.shards) == list(fresh.shards)
    assert state.known == fresh.known and state.order == fresh.order and state.digests == fresh.digests
    assert [orjson.loads(w) for w in state.words] == [orjson.loads(w) for w in fresh.words]
    assert state.completions == fresh.completions and list(state.completions) == list(fresh.completions)
    assert state.pack() == fresh.pack() == pack(fresh.docs, fresh.kinds)  # nothing of it taken from the state


def reference_shards(index: dict, order: list[int]) -> dict[str, bytes]:
    """The browsers' shards as their definition says, term by term (`update.shards` makes them flat)."""
    found: dict[str, dict] = {}
    for kind in update.KINDS:
        for term, (docs, weights) in index[kind].items():
            renumbered = sorted(zip((order[d] for d in docs), weights))
            found.setdefault(shard_key(term), {k: {} for k in update.KINDS})[kind][term] = [
                [d for d, _ in renumbered], [w for _, w in renumbered]]
    return {key: encode(found[key]) for key in sorted(found)}


@pytest.mark.parametrize("seed", range(4))
def test_the_index_built_flat_is_build_index(seed: int) -> None:
    rng = random.Random(seed)
    docs = [document(rng, f"d{i}", f"{rng.choice(WORDS)} {i}") for i in range(150)]
    docs += [Document(slug="e", title="", meaning="", url="u", fields={}),  # no words, one-letter words
             Document(slug="f", title="A b", meaning="", url="u",
                      fields={"title": ["A b"], "meaning": ["c Zuckerherz"]})]
    state, index = update.build(docs, encode), build_index(docs)
    for kind in update.KINDS:
        expected = Postings.of(index[kind])
        assert state.kinds[kind].terms == expected.terms, kind
        for name in ("start", "docs", "weights"):
            assert getattr(state.kinds[kind], name).tolist() == getattr(expected, name).tolist(), (kind, name)
            assert getattr(state.kinds[kind], name).dtype == getattr(expected, name).dtype, (kind, name)
    assert state.known == {w for w, (_, weights) in index["words"].items() if is_known(w, weights)}
    assert state.docs == index["docs"] and state.order == title_order(index["docs"])
    assert list(state.shards.items()) == list(reference_shards(index, state.order).items())
    assert update.build([], encode).pack() == pack([], {k: Postings.of({}) for k in update.KINDS})


@pytest.mark.parametrize("seed", range(6))
def test_an_updated_index_is_the_index_built_anew(seed: int) -> None:
    rng = random.Random(seed)
    docs = [document(rng, f"d{i}", f"{rng.choice(WORDS)} {i}") for i in range(120)]
    state = update.build(docs, encode)
    updated = 0
    for _ in range(25):
        for d in rng.sample(range(len(docs)), rng.randint(1, 4)):
            docs[d] = edited(rng, docs[d])
        state = pickle.loads(pickle.dumps(state))  # as the build cache keeps it
        if update.update(state, docs, [update.digest(d) for d in docs], encode):
            updated += 1
        else:  # declined (the known words changed): built anew
            state = update.build(docs, encode)
        same(state, update.build(docs, encode))
    assert updated >= 5  # most edits are updates


def test_other_documents_or_titles_are_declined() -> None:
    rng = random.Random(7)
    docs = [document(rng, f"d{i}", f"Titel {i}") for i in range(40)]
    state = update.build(docs, encode)
    renamed = [*docs[:3], document(rng, "d3", "Anderer Titel"), *docs[4:]]
    assert not update.update(pickle.loads(pickle.dumps(state)), renamed, [update.digest(d) for d in renamed], encode)
    fewer = docs[1:]
    assert not update.update(pickle.loads(pickle.dumps(state)), fewer, [update.digest(d) for d in fewer], encode)
    assert update.update(state, docs, [update.digest(d) for d in docs], encode)  # nothing changed: nothing to do
    same(state, update.build(docs, encode))


def test_prefix_completions_are_each_prefix_s_shortest_words() -> None:
    """`prefix_completions` (slices of the sorted vocabulary) against its definition, prefix by prefix."""
    rng = random.Random(3)
    vocabulary = sorted({"a", "ab", "abc", "b", "bär", "bärchen", "ü", "üb", *(
        "".join(rng.choice("abcäü") for _ in range(rng.randint(1, 7))) for _ in range(3000))})
    short: dict[str, list[str]] = {}
    for word in vocabulary:
        for size in range(2, min(SHORT_PREFIX, len(word)) + 1):
            short.setdefault(word[:size], []).append(word)
    expected = {prefix: sorted(short[prefix], key=lambda w: (len(w), w))[:PREFIX_FANOUT] for prefix in sorted(short)}
    found = prefix_completions(vocabulary)
    assert list(found.items()) == list(expected.items())
    assert any(len(words) == PREFIX_FANOUT for words in found.values()) and "ab" in found["ab"]


def flat_terms(terms: set[str]) -> Postings:
    """Postings of `terms` without documents: the tables read only the terms."""
    return Postings(sorted(terms), np.zeros(len(terms) + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                    np.zeros(0, dtype=np.float64))


@pytest.mark.parametrize("seed", range(8))
def test_patched_tables_are_the_tables_made_anew(seed: int) -> None:
    """Terms added to and removed from each kind, sometimes from stems or parts alone (the words' tables are then
    renumbered, not made anew), a term moving between kinds, documents whose fields change."""
    rng = random.Random(seed)
    universe = sorted({w.lower()[:size] for w in WORDS for size in range(2, len(w) + 1)} | {"ä", "zz", "über"})
    kinds = {kind: set(rng.sample(universe, 40)) for kind in update.KINDS}
    docs = [[f"d{i}", f"Titel {i}", rng.choice(WORDS), f"u{i}"] for i in range(30)]
    tables = tables_of(docs, {kind: flat_terms(terms) for kind, terms in kinds.items()})
    for _ in range(12):
        before = {kind: set(terms) for kind, terms in kinds.items()}
        for kind in rng.sample(update.KINDS, rng.randint(1, 3)):
            for term in rng.sample(universe, rng.randint(1, 4)):
                kinds[kind].symmetric_difference_update({term})
        changed = sorted(rng.sample(range(len(docs)), rng.randint(0, 3)))
        for d in changed:
            docs[d][2] = " ".join(rng.sample(WORDS, 2))
        toggled = sorted(set().union(*(before[kind] ^ kinds[kind] for kind in update.KINDS)) | {universe[seed]})
        flat = {kind: flat_terms(terms) for kind, terms in kinds.items()}
        completions = prefix_completions(flat["words"].terms)
        tables = patched(tables, docs, changed, flat, completions, toggled)
        fresh = tables_of(docs, flat, completions)
        assert list(tables) == list(fresh)
        for name, array in fresh.items():
            assert tables[name].dtype == array.dtype and tables[name].tolist() == array.tolist(), name

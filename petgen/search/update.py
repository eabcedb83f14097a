"""Per-entry updates of a built search index: an edit re-indexes the entries it changed, not all of them.

`build_index` is a function of the documents alone, and each document contributes its own postings:
its words (`document_terms`), their stems (`doc_stems`) and, given the set of known words, its compound
parts (`doc_parts`). An `IndexState` keeps an index together with what it was built from: a digest of
each document's searchable fields, each document's words, the known words, the title order and the
browsers' shards, encoded. `update` takes a document's old postings out of the index and puts its new
ones in, and re-encodes only the shards holding a term it touched; the result is the index
`build_index` makes of the new documents, term for term (each kind's terms stay sorted, each posting
list's documents ascending). tests/petgen/test_search_update.py compares the two.

An update needs the same documents in the same order (document numbers are positions in that list) with
the same slugs and titles (the title order numbers the browsers' documents), and the same known words
(they decide every document's compound parts); else `update` declines and the index is built anew.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

import orjson

from petgen.search.index import (
    Document,
    build_index,
    doc_parts,
    doc_stems,
    document_terms,
    in_title_order,
    is_known,
    renumber,
    shard,
    shard_key,
    title_order,
)

STATE_VERSION = 1
KINDS = ("stems", "words", "parts")
MOST_CHANGED = 0.05  # an update of more than this share of the documents builds the index anew instead


def digest(document: Document) -> bytes:
    """What a document's postings and stored fields are made of."""
    return hashlib.blake2b(orjson.dumps([document.slug, document.title, document.meaning, document.url,
                                         document.fields]), digest_size=16).digest()


def words_of(document: Document) -> dict[str, float]:
    return document.terms if document.terms is not None else document_terms(document.fields)


@dataclass
class IndexState:
    """An index (`build_index`) with what it was made of, and the browsers' shards encoded (`shards`)."""

    digests: list[bytes]  # per document, `digest`
    words: list[dict[str, float]]  # per document, its words with their weights
    index: dict[str, Any]
    known: set[str]  # the words compound parts are made of (`is_known`)
    order: list[int]  # each document's rank in title order (`title_order`)
    shards: dict[str, bytes]  # shard key -> the shard, encoded
    version: int = STATE_VERSION


def build(documents: list[Document], encode: Any) -> IndexState:
    """The index of `documents`, built whole, with its state; `encode` serialises a shard."""
    index = build_index(documents)
    known = {w for w, (_, weights) in index["words"].items() if is_known(w, weights)}
    order = title_order(index["docs"])
    return IndexState([digest(d) for d in documents], [words_of(d) for d in documents], index, known, order,
                      {key: encode(data) for key, data in shard(in_title_order(index)).items()})


def update(state: IndexState, documents: list[Document], digests: list[bytes], encode: Any) -> bool:
    """Turn `state` into the state of `documents` (whose `digest`s are `digests`) entry by entry; False (and
    `state` unusable) when it has to be built anew."""
    if state.version != STATE_VERSION or len(digests) != len(state.digests):
        return False
    changed = [d for d, (old, new) in enumerate(zip(state.digests, digests)) if old != new]
    if len(changed) > max(1, MOST_CHANGED * len(digests)):
        return False
    docs = state.index["docs"]
    if any(docs[d][:2] != [documents[d].slug, documents[d].title] for d in changed):
        return False  # renumbered documents, or another title order
    touched: set[str] = set()
    old_words = {d: state.words[d] for d in changed}
    new_words = {d: words_of(documents[d]) for d in changed}
    parts_of: dict[tuple[str, bool], list[str]] = {}
    for d in changed:  # out with the old postings (parts by the known words they were made with)
        seen = old_words[d]
        for kind, postings in (("words", seen), ("stems", doc_stems(seen)), ("parts", doc_parts(seen, state.known, parts_of))):
            for term in postings:
                _remove(state.index[kind], term, d)
                touched.add(term)
    added = dict.fromkeys(KINDS, False)
    for d in changed:
        for term, weight in new_words[d].items():
            added["words"] |= _insert(state.index["words"], term, d, weight)
            touched.add(term)
    words = state.index["words"]
    for term in {w for d in changed for w in (*old_words[d], *new_words[d])}:
        if (term in words and is_known(term, words[term][1])) != (term in state.known):
            return False  # other documents' compound parts change too
    for d in changed:
        seen = new_words[d]
        for kind, postings in (("stems", doc_stems(seen)), ("parts", doc_parts(seen, state.known, parts_of))):
            for term, weight in postings.items():
                added[kind] |= _insert(state.index[kind], term, d, weight)
                touched.add(term)
        docs[d] = [documents[d].slug, documents[d].title, documents[d].meaning, documents[d].url]
        state.words[d] = new_words[d]
        state.digests[d] = digests[d]
    for kind in KINDS:
        if added[kind]:  # new terms went to the end: sort again
            state.index[kind] = dict(sorted(state.index[kind].items()))
    terms = {kind: list(state.index[kind]) for kind in KINDS}
    for key in sorted({shard_key(term) for term in touched}):
        found = {kind: {term: renumber(state.index[kind][term], state.order) for term in _shard_terms(terms[kind], key)}
                 for kind in KINDS}
        if any(found.values()):
            state.shards[key] = encode(found)
        else:
            state.shards.pop(key, None)
    state.shards = dict(sorted(state.shards.items()))
    return True


def _remove(index: dict[str, list[list[Any]]], term: str, doc: int) -> None:
    docs, weights = index[term]
    at = bisect_left(docs, doc)
    del docs[at], weights[at]
    if not docs:
        del index[term]


def _insert(index: dict[str, list[list[Any]]], term: str, doc: int, weight: float) -> bool:
    """Add a posting; True if the term is new."""
    postings = index.get(term)
    if postings is None:
        index[term] = [[doc], [weight]]
        return True
    at = bisect_left(postings[0], doc)
    postings[0].insert(at, doc)
    postings[1].insert(at, weight)
    return False


def _shard_terms(terms: list[str], key: str) -> list[str]:
    """The terms of one shard (`shard_key`) in sorted `terms`: a run of them, or the one-letter terms."""
    if key == "_":
        return [term for term in terms if shard_key(term) == key]
    return terms[bisect_left(terms, key):bisect_left(terms, key + "\U0010ffff")]

"""Per-entry updates of a built search index: an edit re-indexes the entries it changed, not all of them.

`build_index` is a function of the documents alone, and each document contributes its own postings:
its words (`document_terms`), their stems (`doc_stems`) and, given the set of known words, its compound
parts (`doc_parts`). An `IndexState` keeps an index together with what it was built from: a digest of
each document's searchable fields, each document's words, the known words, the title order and the
browsers' shards, encoded. `update` takes a document's old postings out of the index and puts its new
ones in, and re-encodes only the shards holding a term it touched; the result is the index
`build_index` makes of the new documents, term for term (each kind's terms stay sorted, each posting
list's documents ascending). The postings are kept flat (`petgen.search.pack.Postings`), as `pack` reads
them: a term that changes is taken out as lists, changed and spliced back in.
tests/petgen/test_search_update.py compares an updated state with one built anew.

An update needs the same documents in the same order (document numbers are positions in that list) with
the same slugs and titles (the title order numbers the browsers' documents), and the same known words
(they decide every document's compound parts); else `update` declines and the index is built anew.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from petgen.search.index import (
    Document,
    build_index,
    digest,
    doc_parts,
    doc_stems,
    document_terms,
    in_title_order,
    is_known,
    shard,
    shard_key,
    title_order,
)
from petgen.search.pack import Postings, pack, prefix_completions, shortest, title_arrays
from petgen.search.query import SHORT_PREFIX
from petgen.search.stored import KINDS

STATE_VERSION = 3
MOST_CHANGED = 0.05  # an update of more than this share of the documents builds the index anew instead
Encode = Callable[[Any], bytes]
Lists = tuple[list[int], list[float]]  # one term's documents and weights, while they change


def words_of(document: Document) -> dict[str, float]:
    return document.terms if document.terms is not None else document_terms(document.fields)


@dataclass
class IndexState:
    """An index (`build_index`) with what it was made of, its postings flat (`Postings`, what `pack` takes),
    and the browsers' shards encoded."""

    digests: list[bytes]  # per document, `digest`
    words: list[bytes]  # per document, its words with their weights (JSON, decoded when it changes)
    docs: list[list[str]]  # per document, [slug, title, meaning, url]
    kinds: dict[str, Postings]  # stems, words, parts
    known: set[str]  # the words compound parts are made of (`is_known`)
    order: list[int]  # each document's rank in title order (`title_order`)
    shards: dict[str, bytes]  # shard key -> the shard, encoded
    completions: dict[str, list[str]]  # `prefix_completions` of the words
    titles: dict[str, np.ndarray]  # `title_arrays` of the documents
    version: int = STATE_VERSION

    def pack(self) -> bytes:
        """The pack file of this index (`petgen.search.pack.pack`)."""
        return pack(self.docs, self.kinds, self.order, self.completions, self.titles)


def build(documents: list[Document], encode: Encode, digests: list[bytes] | None = None) -> IndexState:
    """The index of `documents` (whose `digest`s are `digests`, if computed already), built whole, with its
    state; `encode` serialises a shard."""
    index = build_index(documents)
    known = {w for w, (_, weights) in index["words"].items() if is_known(w, weights)}
    order = title_order(index["docs"])
    return IndexState(digests if digests is not None else [digest(d) for d in documents],
                      [orjson.dumps(words_of(d)) for d in documents],
                      index["docs"], {kind: Postings.of(index[kind]) for kind in KINDS}, known, order,
                      {key: encode(data) for key, data in shard(in_title_order(index, order)).items()},
                      prefix_completions(list(index["words"])), title_arrays(index["docs"]))


def update(state: IndexState, documents: list[Document], digests: list[bytes], encode: Encode) -> bool:
    """Turn `state` into the state of `documents` (whose `digest`s are `digests`) entry by entry; False (and
    `state` unusable) when it has to be built anew."""
    if state.version != STATE_VERSION or len(digests) != len(state.digests):
        return False
    changed = [d for d, (old, new) in enumerate(zip(state.digests, digests)) if old != new]
    if len(changed) > max(1, MOST_CHANGED * len(digests)):
        return False
    if any(state.docs[d][:2] != [documents[d].slug, documents[d].title] for d in changed):
        return False  # renumbered documents, or another title order
    lists: dict[str, dict[str, Lists]] = {kind: {} for kind in KINDS}  # the terms that change, as lists

    def postings(kind: str, term: str) -> Lists:
        found = lists[kind].get(term)
        if found is None:
            flat = state.kinds[kind]
            at = bisect_left(flat.terms, term)
            docs, weights = flat.postings(at) if at < len(flat.terms) and flat.terms[at] == term else ((), ())
            found = lists[kind][term] = (list(docs) if isinstance(docs, tuple) else docs.tolist(),
                                         list(weights) if isinstance(weights, tuple) else weights.tolist())
        return found

    old_words = {d: orjson.loads(state.words[d]) for d in changed}
    new_words = {d: words_of(documents[d]) for d in changed}
    parts_of: dict[tuple[str, bool], list[str]] = {}
    for d in changed:  # out with the old postings (parts by the known words they were made with)
        seen = old_words[d]
        for kind, terms in (("words", seen), ("stems", doc_stems(seen)), ("parts", doc_parts(seen, state.known, parts_of))):
            for term in terms:
                docs, weights = postings(kind, term)
                at = bisect_left(docs, d)
                del docs[at], weights[at]
    for d in changed:
        for term, weight in new_words[d].items():
            _insert(postings("words", term), d, weight)
    for term in {w for d in changed for w in (*old_words[d], *new_words[d])}:
        if is_known(term, postings("words", term)[1]) != (term in state.known):
            return False  # other documents' compound parts change too
    for d in changed:
        seen = new_words[d]
        for kind, terms in (("stems", doc_stems(seen)), ("parts", doc_parts(seen, state.known, parts_of))):
            for term, weight in terms.items():
                _insert(postings(kind, term), d, weight)
        state.docs[d] = [documents[d].slug, documents[d].title, documents[d].meaning, documents[d].url]
        state.words[d] = orjson.dumps(new_words[d])
        state.digests[d] = digests[d]
    vocabulary = state.kinds["words"].terms
    toggled = [word for word, (docs, _) in lists["words"].items() if bool(docs) != _has(vocabulary, word)]
    state.kinds = {kind: _splice(state.kinds[kind], lists[kind]) for kind in KINDS}
    _complete(state.completions, state.kinds["words"].terms, toggled)
    order = np.asarray(state.order, dtype=np.int64)
    for key in sorted({shard_key(term) for found in lists.values() for term in found}):
        shard_of = {kind: _renumbered(state.kinds[kind], key, order) for kind in KINDS}
        if any(shard_of.values()):
            state.shards[key] = encode(shard_of)
        else:
            state.shards.pop(key, None)
    state.shards = dict(sorted(state.shards.items()))
    return True


def _has(terms: list[str], term: str) -> bool:
    at = bisect_left(terms, term)
    return at < len(terms) and terms[at] == term


def _complete(completions: dict[str, list[str]], vocabulary: list[str], toggled: list[str]) -> None:
    """Update `prefix_completions` for the words added to or removed from `vocabulary` (sorted, as it is now)."""
    prefixes = {word[:size] for word in toggled for size in range(2, min(SHORT_PREFIX, len(word)) + 1)}
    added = False
    for prefix in prefixes:
        found = vocabulary[bisect_left(vocabulary, prefix):bisect_left(vocabulary, prefix + "\U0010ffff")]
        if found:
            added |= prefix not in completions
            completions[prefix] = shortest(found)
        else:
            completions.pop(prefix, None)
    if added:
        ordered = dict(sorted(completions.items()))
        completions.clear()
        completions.update(ordered)


def _insert(postings: Lists, doc: int, weight: float) -> None:
    docs, weights = postings
    at = bisect_left(docs, doc)
    docs.insert(at, doc)
    weights.insert(at, weight)


def _splice(flat: Postings, changes: dict[str, Lists]) -> Postings:
    """`flat` with the postings of the terms in `changes` replaced (a term without any: removed)."""
    if not changes:
        return flat
    terms: list[str] = []
    docs: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    old_lengths = np.diff(flat.start)
    done = 0  # the old terms before this one are copied

    def copy(upto: int) -> None:
        if upto > done:
            terms.extend(flat.terms[done:upto])
            docs.append(flat.docs[flat.start[done]:flat.start[upto]])
            weights.append(flat.weights[flat.start[done]:flat.start[upto]])
            lengths.append(old_lengths[done:upto])

    for term in sorted(changes):
        at = bisect_left(flat.terms, term)
        copy(at)
        new_docs, new_weights = changes[term]
        if new_docs:
            terms.append(term)
            docs.append(np.asarray(new_docs, dtype=np.int32))
            weights.append(np.asarray(new_weights, dtype=np.float64))
            lengths.append(np.asarray([len(new_docs)], dtype=np.int64))
        done = at + 1 if at < len(flat.terms) and flat.terms[at] == term else at
    copy(len(flat.terms))
    start = np.zeros(len(terms) + 1, dtype=np.int64)
    if not terms:
        return Postings(terms, start, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64))
    np.cumsum(np.concatenate(lengths), out=start[1:])
    return Postings(terms, start, np.concatenate(docs).astype(np.int32, copy=False),
                    np.concatenate(weights).astype(np.float64, copy=False))


def _renumbered(flat: Postings, key: str, order: np.ndarray) -> dict[str, list[list[Any]]]:
    """The terms of one shard (`shard_key`) with their postings in title order (`renumber`)."""
    terms = flat.terms
    if key == "_":
        found = [i for i, term in enumerate(terms) if shard_key(term) == key]
    else:
        found = list(range(bisect_left(terms, key), bisect_left(terms, key + "\U0010ffff")))
    if not found:
        return {}
    starts = flat.start[found]
    ends = flat.start[np.asarray(found) + 1]
    lengths = ends - starts
    at = np.repeat(ends - lengths.cumsum(), lengths) + np.arange(int(lengths.sum()))  # every posting, term by term
    ranks = order[flat.docs[at]]
    by_rank = np.lexsort((ranks, np.repeat(np.arange(len(found)), lengths)))  # within each term
    docs, weights = ranks[by_rank].tolist(), flat.weights[at][by_rank].tolist()
    bounds = [0, *lengths.cumsum().tolist()]
    return {terms[i]: [docs[bounds[j]:bounds[j + 1]], weights[bounds[j]:bounds[j + 1]]] for j, i in enumerate(found)}

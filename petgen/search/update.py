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
from dataclasses import dataclass, field
from itertools import chain, compress, groupby, pairwise
from operator import itemgetter
from typing import Any

import numpy as np
import orjson

from petgen.search.index import (
    WEIGHTS,
    Document,
    digest,
    doc_parts,
    doc_stems,
    document_terms,
    is_known,
    shard_key,
    stems_each,
    title_order,
)
from petgen.search.pack import (
    Postings,
    distinct_sorted,
    pack,
    prefix_completions,
    shortest,
    tables_of,
    title_arrays,
)
from petgen.search.repack import Tables
from petgen.search.scoring import SHORT_PREFIX
from petgen.search.stored import KINDS

STATE_VERSION = 4
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
    tables: Tables = field(default_factory=Tables)  # of the last `pack` (petgen/search/repack.py)

    def pack(self) -> bytes:
        """The pack file of this index (`petgen.search.pack.pack`), its tables patched from the last one's."""
        tables = self.tables.current(self.docs, self.kinds, self.completions)
        if tables is None:
            tables = self.tables.arrays = tables_of(self.docs, self.kinds, self.completions)
        return pack(self.docs, self.kinds, self.order, self.completions, self.titles, tables)


def build(documents: list[Document], encode: Encode, digests: list[bytes] | None = None) -> IndexState:
    """The index of `documents` (whose `digest`s are `digests`, if computed already), built whole, with its
    state; `encode` serialises a shard. The same index as `build_index`'s (tests/petgen/test_search_update.py),
    made flat in a few array operations rather than term by term in dicts."""
    found = [words_of(d) for d in documents]
    kinds, known = flat_index(found)
    docs = [[d.slug, d.title, d.meaning, d.url] for d in documents]
    order = title_order(docs)
    return IndexState(digests if digests is not None else [digest(d) for d in documents],
                      [orjson.dumps(seen) for seen in found], docs, kinds, known, order,
                      shards(kinds, order, encode), prefix_completions(kinds["words"].terms), title_arrays(docs))


def flat_index(found: list[dict[str, float]]) -> tuple[dict[str, Postings], set[str]]:
    """`build_index`'s postings of documents whose words are `found` (`document_terms`), flat, by kind; and the
    known words (`is_known`)."""
    n = len(found)
    lengths = np.fromiter(map(len, found), dtype=np.int64, count=n)
    every = list(chain.from_iterable(found))  # each document's words, one document after another
    weights = np.fromiter(chain.from_iterable(seen.values() for seen in found), dtype=np.float64, count=len(every))
    docs = np.repeat(np.arange(n, dtype=np.int64), lengths)
    vocabulary = sorted(set(every))
    ids = {word: i for i, word in enumerate(vocabulary)}
    word_of = np.fromiter(map(ids.__getitem__, every), dtype=np.int64, count=len(every))
    start = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum(np.bincount(word_of, minlength=len(vocabulary)), out=start[1:])
    by_word = np.argsort(word_of, kind="stable")  # documents stay ascending within a word
    words = Postings(vocabulary, start, docs[by_word].astype(np.int32), weights[by_word])
    sizes = np.fromiter(map(len, vocabulary), dtype=np.int64, count=len(vocabulary))
    best = np.maximum.reduceat(words.weights, start[:-1]) if vocabulary else np.zeros(0)
    known = set(compress(vocabulary, ((sizes >= 3) & (best > WEIGHTS["meaning"])).tolist()))  # `is_known`
    made = stems_each(vocabulary)
    stem_code = np.repeat(np.arange(len(made), dtype=np.int64), np.fromiter(map(len, made), dtype=np.int64,
                                                                           count=len(made)))
    stems = _derived(word_of, docs, weights, n, stem_code, list(chain.from_iterable(made)))
    # Compound parts depend on the word and on whether it is a name's (`doc_parts`): two codes per word.
    long = sizes[word_of] >= 6
    codes, code_of = np.unique(word_of[long] * 2 + (weights[long] >= WEIGHTS["variants"]), return_inverse=True)
    parts = _derived(code_of, docs[long], weights[long], n, *_compound_parts(vocabulary, sizes, known, codes))
    return {"stems": stems, "words": words, "parts": parts}, known


def _compound_parts(vocabulary: list[str], sizes: np.ndarray, known: set[str],
                    codes: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """`compound_parts` of the words that `codes` (ascending) stand for (word << 1, with tails if code & 1), as
    pairs: each part (perhaps twice) with the rank of its code in `codes`, ascending. Every cut of each word at
    once: its head and its end, each kept if known, an end also if it is a tail."""
    word_ids = distinct_sorted(codes >> 1)
    long_words = [vocabulary[w] for w in word_ids.tolist()]
    heads = [word[:i] for word in long_words for i in range(3, len(word) - 2)]
    ends = [word[i:] for word in long_words for i in range(3, len(word) - 2)]
    cuts = sizes[word_ids] - 5  # cuts of each word: after 3 letters up to before the last 3
    first = np.zeros(len(cuts) + 1, dtype=np.int64)
    np.cumsum(cuts, out=first[1:])
    head_known = np.fromiter(map(known.__contains__, heads), dtype=bool, count=len(heads))
    end_known = np.fromiter(map(known.__contains__, ends), dtype=bool, count=len(ends))
    end_tail = np.repeat(sizes[word_ids], cuts) - 3 - (np.arange(len(ends)) - np.repeat(first[:-1], cuts)) >= 4
    word_rank = np.searchsorted(word_ids, codes >> 1)
    code_cuts = cuts[word_rank]  # each code's cuts, code after code
    code_rank = np.repeat(np.arange(len(codes), dtype=np.int64), code_cuts)
    cut = np.repeat(first[word_rank] - np.cumsum(code_cuts) + code_cuts, code_cuts) + np.arange(len(code_rank))
    with_head = head_known[cut]
    with_end = end_known[cut] | (end_tail[cut] & (codes & 1).astype(bool)[code_rank])
    pair_code = np.concatenate((code_rank[with_head], code_rank[with_end]))
    by_code = np.argsort(pair_code, kind="stable")
    pair_part = [*map(heads.__getitem__, cut[with_head].tolist()), *map(ends.__getitem__, cut[with_end].tolist())]
    return pair_code[by_code], list(map(pair_part.__getitem__, by_code.tolist()))


def _derived(code_of: np.ndarray, docs: np.ndarray, weights: np.ndarray, n: int, pair_code: np.ndarray,
             pair_term: list[str]) -> Postings:
    """The postings of the terms that postings (`docs`, `weights`) of codes `code_of` stand for (code c stands for
    each `pair_term[j]` with `pair_code[j] == c`, `pair_code` ascending: a word's stems or compound parts), each
    term in a document at its best weight there (`doc_stems`)."""
    terms = sorted(set(pair_term))
    ids = {term: i for i, term in enumerate(terms)}
    made_ids = np.fromiter(map(ids.__getitem__, pair_term), dtype=np.int64, count=len(pair_term))
    counts = np.bincount(pair_code, minlength=int(code_of.max(initial=-1)) + 1)
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    each = counts[code_of]  # terms per posting
    posting = np.repeat(np.arange(len(code_of), dtype=np.int64), each)
    nth = np.arange(len(posting), dtype=np.int64) - np.repeat(np.cumsum(each) - each, each)
    key = made_ids[offsets[code_of[posting]] + nth] * max(n, 1) + docs[posting]  # term, then document
    by = np.argsort(key, kind="stable")
    key = key[by]
    first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1]))) if len(key) else by
    weight = np.maximum.reduceat(weights[posting][by], first) if len(key) else weights[:0]
    key = key[first]
    term_of = key // max(n, 1)
    start = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term_of, minlength=len(terms)), out=start[1:])
    return Postings(terms, start, (key - term_of * max(n, 1)).astype(np.int32), weight)


def shards(kinds: dict[str, Postings], order: list[int], encode: Encode) -> dict[str, bytes]:
    """The browsers' shards of flat postings, encoded, in key order: each term in the shard of its `shard_key`,
    under its kind (stems, words, parts), with its documents numbered by their rank in title order (`order`),
    ascending. Terms are sorted, so a shard's terms of a kind come in runs (those of one letter between the others):
    each run goes in at once."""
    ranks = np.asarray(order, dtype=np.int64)
    found: dict[str, dict[str, dict[str, tuple[list[int], list[float]]]]] = {}
    for kind in KINDS:
        flat = kinds[kind]
        term_of = np.repeat(np.arange(len(flat.terms), dtype=np.int64), np.diff(flat.start))
        renumbered = ranks[flat.docs]
        by = np.argsort(term_of * max(len(ranks), 1) + renumbered)  # within each term, by rank
        docs, weights, bounds = renumbered[by].tolist(), flat.weights[by].tolist(), flat.start.tolist()
        lists = [(docs[lo:hi], weights[lo:hi]) for lo, hi in pairwise(bounds)]  # encoded as [docs, weights]
        at = 0
        for prefix, run in groupby(map(itemgetter(slice(2)), flat.terms)):  # shard_key(prefix) is each term's
            size, key = len(list(run)), shard_key(prefix)
            into = found.get(key)
            if into is None:
                into = found[key] = {"stems": {}, "words": {}, "parts": {}}
            into[kind].update(zip(flat.terms[at:at + size], lists[at:at + size]))
            at += size
    return {key: encode(found[key]) for key in sorted(found)}


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

    def by_kind(seen: dict[str, float]) -> dict[str, dict[str, float]]:  # parts by the known words of the last build
        return {"words": seen, "stems": doc_stems(seen), "parts": doc_parts(seen, state.known, parts_of)}

    # Only the postings that change are taken out and put in again: those of a term the document no longer has, has
    # now, or has with another weight (an edit leaves most of its words as they were: the lists of common words,
    # as long as there are documents, and their shards are not touched).
    before = {d: by_kind(old_words[d]) for d in changed}
    after = {d: by_kind(new_words[d]) for d in changed}
    for d in changed:  # out with the postings that change
        for kind, terms in before[d].items():
            now = after[d][kind]
            for term, weight in terms.items():
                if now.get(term) != weight:
                    docs, weights = postings(kind, term)
                    at = bisect_left(docs, d)
                    del docs[at], weights[at]
    for d in changed:
        was = before[d]["words"]
        for term, weight in new_words[d].items():
            if was.get(term) != weight:
                _insert(postings("words", term), d, weight)
    for term, (_, weights) in list(lists["words"].items()):  # a word whose postings are as they were is as known
        if is_known(term, weights) != (term in state.known):
            return False  # other documents' compound parts change too
    for d in changed:
        for kind in ("stems", "parts"):
            was = before[d][kind]
            for term, weight in after[d][kind].items():
                if was.get(term) != weight:
                    _insert(postings(kind, term), d, weight)
        state.docs[d] = [documents[d].slug, documents[d].title, documents[d].meaning, documents[d].url]
        state.words[d] = orjson.dumps(new_words[d])
        state.digests[d] = digests[d]
    toggled = {kind: [term for term, (docs, _) in lists[kind].items()
                      if bool(docs) != _has(state.kinds[kind].terms, term)]
               for kind in KINDS}  # the terms added to a kind or removed from it
    state.tables.changed(changed, set(chain.from_iterable(toggled.values())))
    state.kinds = {kind: _splice(state.kinds[kind], lists[kind]) for kind in KINDS}
    _complete(state.completions, state.kinds["words"].terms, toggled["words"])
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

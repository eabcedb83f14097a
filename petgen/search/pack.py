"""The build side of the compact search index: `build_index`'s postings as flat arrays in one pack file.

The query engine (petgen/search/query.py) maps the file and reads these arrays in place; this module
prepares everything it would otherwise compute per term at load time. Arrays (n documents, T terms,
P posting lists, E postings):

- documents: `doc_text` (UTF-8) and `doc_offsets` (4 n + 1: slug, title, meaning, url of each), `order`
  (each document's rank in title order: shorter titles first, then alphabetical; ties in a ranking);
- terms (stems, words and compound parts together), sorted by their UTF-8 bytes: `term_text`,
  `term_offsets`, `term_chars` (length in characters), `term_hash` (CRC-32 of the bytes, ascending)
  with `term_by_hash` (the term of each hash), and `term_posting` (3 T: the posting list of each term as
  a stem, a word and a compound part, -1 for none);
- posting lists: `post_start` (P + 1) into `post_docs` (documents ascending) and `post_conf` (an index
  into `confidences`, the field confidences); the lists longer than HEAD (`long_posting`, ascending) also
  have their documents in impact order (`impact_start`, by rank in `long_posting`, into `impact_docs`) and
  their confidence levels in that order (`level_start` into `level_end`, `level_value`); the lists longer
  than 1/DENSE_SHARE of the documents (`dense_posting`) a bitmap each in `bits`, (n + 63) // 64 words;
- prefix completion: `vocabulary` (the terms that are words, in order) and, for every prefix of up to
  SHORT_PREFIX letters, its PREFIX_FANOUT shortest completions (`prefix_*`: a string table as the terms',
  `prefix_start` into `prefix_terms`);
- typo candidates: the words by shape (first letter, length: `shape_*`) and the folded titles by shape
  (`title_*`, with `title_start` into `title_docs`), each shape's strings also as one text joined by
  newlines, so that a query decodes a shape's candidates at once.
"""

from __future__ import annotations

import zlib
from bisect import bisect_left
from collections.abc import Sequence, Sized
from dataclasses import dataclass
from itertools import chain, pairwise
from operator import itemgetter
from typing import Any

import numpy as np

from petgen.search.index import title_order, words_each
from petgen.search.packfile import write_pack
from petgen.search.scoring import PREFIX_FANOUT, SHORT_PREFIX, confidence
from petgen.search.stored import DENSE_SHARE, HEAD, KINDS, PACK_FORMAT

# The arrays of the pack file that `pack` takes from its `tables`, in the file's order (between them: `order` first,
# then the postings' arrays after TERM_TABLE, the titles' at the end).
DOC_TABLE = ("doc_text", "doc_offsets")
TERM_TABLE = ("term_text", "term_offsets", "term_hash", "term_by_hash", "term_chars", "term_posting")
WORD_TABLES = ("vocabulary", "prefix_text", "prefix_offsets", "prefix_hash", "prefix_by_hash", "prefix_start",
               "prefix_items", "shape_key", "shape_start", "shape_items", "shape_text", "shape_text_start")


@dataclass
class Postings:
    """One kind of posting list (stems, words or parts) flat: `terms` sorted, term i's documents (ascending)
    and weights at `docs[start[i]:start[i + 1]]` and `weights[…]`."""

    terms: list[str]
    start: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # int32
    weights: np.ndarray  # float64

    @classmethod
    def of(cls, postings: dict[str, list[list[float]]]) -> Postings:
        """From `build_index`'s `{term: [docs, weights]}` (terms sorted)."""
        lists = list(postings.values())
        lengths = np.fromiter((len(docs) for docs, _ in lists), dtype=np.int64, count=len(lists))
        start = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=start[1:])
        size = int(start[-1])
        return cls(list(postings), start,
                   np.fromiter(chain.from_iterable(d for d, _ in lists), dtype=np.int32, count=size),
                   np.fromiter(chain.from_iterable(w for _, w in lists), dtype=np.float64, count=size))

    def postings(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        return self.docs[self.start[i]:self.start[i + 1]], self.weights[self.start[i]:self.start[i + 1]]


def pack_index(index: dict[str, Any]) -> bytes:
    """The pack file of an index from `petgen.search.index.build_index`."""
    return pack(index["docs"], {kind: Postings.of(index[kind]) for kind in KINDS})


def pack(docs: list[list[str]], kinds: dict[str, Postings], order_of: list[int] | None = None,
         completions: dict[str, list[str]] | None = None, titles: dict[str, np.ndarray] | None = None,
         tables: dict[str, np.ndarray] | None = None) -> bytes:
    """The pack file of documents `docs` and their postings by kind; `order_of` (their `title_order`),
    `completions` (`prefix_completions` of the words), `titles` (`title_arrays` of `docs`) and `tables` (the
    documents' string table and `term_arrays`, as petgen/search/repack.py keeps them) if known."""
    n = len(docs)
    order = np.asarray(order_of if order_of is not None else title_order(docs), dtype=np.int64)
    if tables is None:
        tables = tables_of(docs, kinds, completions)
    arrays: dict[str, np.ndarray] = {"order": order}
    arrays.update({name: tables[name] for name in DOC_TABLE + TERM_TABLE})
    lengths = np.concatenate([np.diff(kinds[kind].start) for kind in KINDS])
    arrays.update(postings_arrays(lengths, np.concatenate([kinds[kind].docs for kind in KINDS]),
                                  np.concatenate([kinds[kind].weights for kind in KINDS]), order))
    arrays.update({name: tables[name] for name in WORD_TABLES})
    arrays.update(titles if titles is not None else title_arrays(docs))
    return write_pack(arrays, {"format": PACK_FORMAT, "documents": n})


def tables_of(docs: list[list[str]], kinds: dict[str, Postings],
              completions: dict[str, list[str]] | None = None) -> dict[str, np.ndarray]:
    """`pack`'s tables: the documents' strings (`DOC_TABLE`) and `term_arrays`."""
    return {**strings("doc", [field for doc in docs for field in doc]), **term_arrays(kinds, completions)}


def term_arrays(kinds: dict[str, Postings], completions: dict[str, list[str]] | None = None) -> dict[str, np.ndarray]:
    """The arrays of the terms (`TERM_TABLE`), of the words (`WORD_TABLES`) and each kind's terms' numbers
    (`ids_<kind>`, ascending: not in the pack file)."""
    terms = sorted(set().union(*(kinds[kind].terms for kind in KINDS)))
    term_id = {term: i for i, term in enumerate(terms)}
    arrays = strings("term", terms, hashed=True)
    arrays["term_chars"] = np.fromiter(map(len, terms), dtype=np.int32, count=len(terms))
    ids = {kind: np.fromiter(map(term_id.__getitem__, kinds[kind].terms), dtype=np.int64, count=len(kinds[kind].terms))
           for kind in KINDS}
    arrays["term_posting"] = term_postings(ids, len(terms))
    words = kinds["words"].terms  # sorted
    arrays["vocabulary"] = ids["words"].astype(np.int32)
    arrays.update(prefix_arrays(completions if completions is not None else prefix_completions(words), term_id))
    arrays.update(shapes("shape", words, arrays["vocabulary"]))
    arrays.update({f"ids_{kind}": ids[kind] for kind in KINDS})
    return arrays


def term_postings(ids: dict[str, np.ndarray], count: int) -> np.ndarray:
    """`term_posting` of `count` terms, each kind's (`ids`) numbered by their place in it."""
    term_posting = np.full((len(KINDS), count), -1, dtype=np.int32)
    first = 0
    for k, kind in enumerate(KINDS):
        term_posting[k, ids[kind]] = np.arange(first, first + len(ids[kind]), dtype=np.int32)
        first += len(ids[kind])
    return term_posting.ravel()


def strings(name: str, values: Sequence[str], *, hashed: bool = False) -> dict[str, np.ndarray]:
    """A string table: `<name>_text` (UTF-8), `<name>_offsets`; with `hashed`, a lookup by CRC-32."""
    encoded = [v.encode() for v in values]
    found = {f"{name}_text": np.frombuffer(b"".join(encoded), dtype=np.uint8), f"{name}_offsets": starts(encoded)}
    if hashed:
        hashes = np.fromiter(map(zlib.crc32, encoded), dtype=np.uint32, count=len(encoded))
        by_hash = np.argsort(hashes, kind="stable")
        found[f"{name}_hash"] = hashes[by_hash]
        found[f"{name}_by_hash"] = by_hash.astype(np.int32)
    return found


def starts(values: Sequence[Sized]) -> np.ndarray:
    """Where each of some values starts when they are put one after another, and where the last ends."""
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)), out=offsets[1:])
    return offsets


def postings_arrays(lengths: np.ndarray, docs: np.ndarray, weights: np.ndarray, order: np.ndarray) -> dict[str, np.ndarray]:
    """The posting lists (`lengths`, their `docs` and `weights` one after another) flat, with their impact
    order, confidence levels and bitmaps (see the module)."""
    n = len(order)
    start = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    docs = docs.astype(np.int32, copy=False)
    conf = confidence(weights)
    table = distinct_sorted(np.sort(conf))
    if len(table) > 256:
        raise ValueError("more than 256 distinct field confidences")
    codes = np.searchsorted(table, conf)  # a few distinct values: cheaper than the sort `return_inverse` makes
    arrays = {"confidences": table, "post_start": start, "post_docs": docs, "post_conf": codes.astype(np.uint8)}
    # Impact order of the long lists: confidence descending, then title order, in one sort of all their postings
    # (by one key: list, confidence code descending, rank in title order; every key distinct).
    list_of = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    long = lengths > HEAD
    inside = np.flatnonzero(long[list_of])
    key = (list_of[inside] * len(table) + (len(table) - 1 - codes[inside])) * max(n, 1) + order[docs[inside]]
    perm = inside[np.argsort(key)]
    long_ids = np.flatnonzero(long)
    impact_start = np.zeros(len(long_ids) + 1, dtype=np.int64)
    np.cumsum(lengths[long_ids], out=impact_start[1:])
    arrays["long_posting"], arrays["impact_start"], arrays["impact_docs"] = long_ids.astype(np.int32), impact_start, docs[perm]
    ranked_list, ranked_conf = list_of[perm], conf[perm]
    change = np.flatnonzero((np.diff(ranked_list) != 0) | (np.diff(ranked_conf) != 0)) + 1
    ends = np.concatenate((change, [len(perm)])).astype(np.int64) if len(perm) else np.zeros(0, dtype=np.int64)
    run_rank = np.searchsorted(long_ids, ranked_list[ends - 1])
    arrays["level_end"] = (ends - impact_start[run_rank]).astype(np.int32)
    arrays["level_value"] = ranked_conf[ends - 1]
    level_start = np.zeros(len(long_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(run_rank, minlength=len(long_ids)), out=level_start[1:])
    arrays["level_start"] = level_start
    # Bitmaps of the very long lists, (n + 63) // 64 words each.
    dense = np.flatnonzero(lengths * DENSE_SHARE > n)
    width = (n + 63) // 64
    bits = np.zeros(len(dense) * width * 64, dtype=bool)
    for i, p in enumerate(dense):
        bits[i * width * 64 + docs[start[p]:start[p + 1]]] = True
    arrays["dense_posting"] = dense.astype(np.int32)
    arrays["bits"] = np.packbits(bits, bitorder="little").view(np.uint64)
    return arrays


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values of an ascending array: `np.unique`'s, without the import of numpy.ma (15 ms) that numpy 2's
    makes when first called."""
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if len(values) > 1 else values


def prefix_completions(vocabulary: list[str]) -> dict[str, list[str]]:
    """Every prefix of 2 to SHORT_PREFIX letters of the words in `vocabulary` (sorted), in order, with its
    PREFIX_FANOUT shortest completions (then alphabetical; the prefix itself among them if it is a word): the
    words from the prefix up to the next one, a slice of the vocabulary."""
    prefixes = set(chain.from_iterable(map(itemgetter(slice(size)), vocabulary) for size in range(2, SHORT_PREFIX + 1)))
    prefixes.difference_update([prefix for prefix in prefixes if len(prefix) < 2])
    found = {}
    for prefix in sorted(prefixes):
        start = bisect_left(vocabulary, prefix)
        found[prefix] = shortest(vocabulary[start:bisect_left(vocabulary, prefix + "\U0010ffff", start)])
    return found


def shortest(words: list[str]) -> list[str]:
    """The PREFIX_FANOUT shortest of `words` (in alphabetical order), then alphabetical."""
    return sorted(words, key=len)[:PREFIX_FANOUT]


def prefix_arrays(completions: dict[str, list[str]], term_id: dict[str, int]) -> dict[str, np.ndarray]:
    """The prefixes (`prefix_completions`) as a string table, with their completions' terms."""
    return {**strings("prefix", list(completions), hashed=True), **flat("prefix", list(completions.values()), term_id)}


def flat(name: str, lists: list[list[Any]], ids: dict[Any, int] | None = None) -> dict[str, np.ndarray]:
    """Lists of integers (or of keys of `ids`) as `<name>_start` (one more than lists) into `<name>_items`."""
    start = starts(lists)
    items = chain.from_iterable(lists)
    return {f"{name}_start": start, f"{name}_items": np.fromiter(items if ids is None else map(ids.__getitem__, items),
                                                                 dtype=np.int32, count=int(start[-1]))}


def shapes(name: str, values: list[str], ids: np.ndarray) -> dict[str, np.ndarray]:
    """Strings (not empty; their `ids`) by shape, (first letter, length), in the order given within a shape:
    `<name>_key` (ascending: code point << 32 | length), `<name>_start` into `<name>_items` (their ids), and each
    shape's strings joined by newlines (`<name>_text`, from `<name>_text_start`)."""
    key = np.fromiter(map(ord, map(itemgetter(0), values)), dtype=np.int64, count=len(values)) << 32
    key |= np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    by = np.argsort(key, kind="stable")
    key = key[by]
    firsts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1]))) if len(key) else by
    start = np.append(firsts, len(key)).astype(np.int64)
    ordered = list(map(values.__getitem__, by.tolist()))
    joined = ["\n".join(ordered[lo:hi]).encode() for lo, hi in pairwise(start.tolist())]
    return {f"{name}_key": key[firsts], f"{name}_start": start, f"{name}_items": ids[by].astype(np.int32),
            f"{name}_text": np.frombuffer(b"".join(joined), dtype=np.uint8), f"{name}_text_start": starts(joined)}


def title_arrays(docs: Sequence[list[str]]) -> dict[str, np.ndarray]:
    """The folded titles (`Honey Bunny` → `honey bunny`), each once, by shape, with their documents."""
    title_docs: dict[str, list[int]] = {}
    for doc, found in enumerate(words_each([title for _, title, _, _ in docs])):
        folded = " ".join(found)
        if folded:
            title_docs.setdefault(folded, []).append(doc)
    titles = list(title_docs)  # in the order of their first document
    return {**shapes("title", titles, np.arange(len(titles))), **flat("title_docs", list(title_docs.values()))}

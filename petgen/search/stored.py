"""The pack file's arrays as the query side sees them: posting lists (views into the file, in impact
order for long lists), the string tables, the documents. Read in place; nothing is copied per query."""

from __future__ import annotations

import bisect
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from petgen.search.packfile import Pack

HEAD = 64  # a top-k query first ranks the best HEAD documents of each long posting list (impact order) …
DENSE_SHARE = 32  # posting lists longer than 1/32 of the documents keep a bitmap for counting matches

POSTINGS_KEPT = 1_000_000  # postings of the lists read most recently kept decoded, per process (8 bytes each)
DOCUMENTS_KEPT = 4096  # documents' strings read most recently kept decoded, per process
FILTER_VALUES_KEPT = 1_000_000  # per-document values of the filters used most recently (/ask's facets, exclusions), per process
NEAR_KEPT = 100_000  # strings of the typo buckets read most recently kept decoded, per kind (words, titles) and process
KINDS = ("stems", "words", "parts")  # the three kinds of posting list a term can have
STEM, WORD, PART = range(3)
PACK_FORMAT = 1  # the version of the pack file's arrays (petgen/search/pack.py)
ENGINE_ROUTE = "/search/index.bin"  # the build routes its pack file here (the runtime maps the file it names)


class Posting:
    """One posting list: documents ascending with their field confidence; a long list also has its documents
    in impact order (confidence descending, then title order) and, when it is very long, a bitmap. A list of
    the index is a set of views of the mapped pack file; its confidences and levels are read when first used."""

    __slots__ = ("docs", "impact", "bits", "dense", "_conf", "_levels", "_pack", "_start", "_rank", "_best")

    def __init__(self, docs: np.ndarray, conf: np.ndarray | None) -> None:
        self.docs, self._conf = docs, conf
        self.impact: np.ndarray | None = None  # docs, best first (only for lists longer than HEAD)
        self.bits: np.ndarray | None = None  # membership bitmap over all documents, 64 per word
        self.dense: np.ndarray | None = None  # a list made at run time from values over all documents: those values
        self._levels: list[tuple[int, float]] | None = []
        self._pack: _Arrays | None = None  # a stored list: the pack, its first posting, its rank among the long lists
        self._start = self._rank = -1
        self._best: float | None = None

    @classmethod
    def stored(cls, pack: _Arrays, p: int) -> Posting:
        """Posting list `p` of the pack."""
        start, end = pack.post_start[p], pack.post_start[p + 1]
        posting = cls(pack.post_docs[start:end], None)
        posting._pack, posting._start = pack, start
        if end - start > HEAD:
            rank = bisect.bisect_left(pack.long_posting, p)
            impact = pack.impact_start[rank]
            posting.impact = pack.impact_docs[impact:impact + end - start]
            posting._levels, posting._rank = None, rank
            if (end - start) * DENSE_SHARE > pack.documents:
                dense = bisect.bisect_left(pack.dense_posting, p) * pack.width
                posting.bits = pack.bits[dense:dense + pack.width]
        return posting

    @property
    def conf(self) -> np.ndarray:
        if self._conf is None:
            pack, start = self._pack, self._start
            self._conf = pack.confidences[pack.post_conf[start:start + len(self.docs)]]
        return self._conf

    def conf_at(self, positions: np.ndarray) -> np.ndarray:
        """The confidences at some positions of the list (without reading the others of a stored list)."""
        if self._conf is None and self._pack is not None:
            return self._pack.confidences[self._pack.post_conf[self._start + positions]]
        return self.conf[positions]

    @property
    def levels(self) -> list[tuple[int, float]]:
        """(end in `impact`, confidence of the entries before it), best first; none for a short list."""
        if self._levels is None:
            pack, rank = self._pack, self._rank
            start, end = pack.level_start[rank], pack.level_start[rank + 1]
            self._levels = list(zip(pack.level_end_array[start:end].tolist(), pack.level_value_array[start:end].tolist()))
        return self._levels

    def __len__(self) -> int:
        return len(self.docs)

    def rank(self, order: np.ndarray, documents: int) -> None:
        """Prepare the impact order (and the bitmap) of a list made at run time (`SearchIndex.posting_of`)."""
        if len(self.docs) > HEAD:
            perm = np.lexsort((order[self.docs], -self.conf))
            self.impact = self.docs[perm]
            ranked = self.conf[perm]
            ends = np.flatnonzero(np.diff(ranked)) + 1
            self._levels = [(int(end), float(ranked[end - 1])) for end in [*ends, len(ranked)]]
        if len(self.docs) * DENSE_SHARE > documents:
            mask = np.zeros((documents + 63) // 64 * 64, dtype=bool)
            mask[self.docs] = True
            self.bits = np.packbits(mask, bitorder="little").view(np.uint64)

    def best(self) -> float:
        """The highest confidence in the list (read once: a list is kept decoded between queries)."""
        if self._best is None:
            levels = self.levels
            self._best = levels[0][1] if levels else float(self.conf.max())
        return self._best

    def confidence_at(self, position: int) -> float:
        """The confidence of the entry at `position` in impact order."""
        for end, value in self.levels:
            if position < end:
                return value
        return 0.0

    def tail_values(self, position: int) -> list[float]:
        """The confidences the entries from `position` on (in impact order) can have."""
        return [value for end, value in self.levels if end > position]




class _Arrays:
    """The pack file's arrays; the ones a query reads one element of at a time as memoryviews (a Python int
    per index, without a numpy scalar)."""

    def __init__(self, pack: Pack) -> None:
        self.pack = pack
        self.meta = pack.meta
        if self.meta.get("format") != PACK_FORMAT:
            raise ValueError(f"search index format {self.meta.get('format')}, expected {PACK_FORMAT}: run `petgen build`")
        self.documents = int(self.meta["documents"])
        self.width = (self.documents + 63) // 64
        for name in ("post_docs", "post_conf", "confidences", "impact_docs", "bits", "order", "vocabulary",
                     "term_chars", "shape_items", "title_items", "title_docs_items", "prefix_items"):
            setattr(self, name, pack[name])
        self.level_end_array, self.level_value_array = pack["level_end"], pack["level_value"]
        self.vocabulary_at = memoryview(self.vocabulary)
        for name in ("post_start", "long_posting", "impact_start", "dense_posting", "level_start", "term_posting", "prefix_start",
                     "shape_key", "shape_start", "shape_text_start", "title_key", "title_start", "title_text_start",
                     "title_docs_start"):
            setattr(self, name, memoryview(pack[name]))
        self.terms = StringTable(pack, "term")
        self.prefixes = StringTable(pack, "prefix")
        self.docs = Documents(StringTable(pack, "doc"))


class Buckets:
    """The strings of one kind (`shape`: indexed words, `title`: folded titles) in buckets of one first letter and
    one length, as the typo search reads them: decoded when first read and kept (`Recent`, NEAR_KEPT strings),
    each with the set of its characters (`letter_sets`), so that strings too far from a query word are dropped
    before they are compared with it."""

    def __init__(self, arrays: _Arrays, shapes: str) -> None:
        self.keys = getattr(arrays, f"{shapes}_key")
        self.starts, self.items = getattr(arrays, f"{shapes}_start"), getattr(arrays, f"{shapes}_items")
        self.text_start, self.base = getattr(arrays, f"{shapes}_text_start"), arrays.pack.offset(f"{shapes}_text")
        self.buffer = arrays.pack.buffer
        self.recent = Recent(NEAR_KEPT)

    def find(self, first: str, length: int) -> int:
        """The bucket of strings with this first letter and length, or -1."""
        key = ord(first) << 32 | length
        b = bisect.bisect_left(self.keys, key)
        return b if b < len(self.keys) and self.keys[b] == key else -1

    def __getitem__(self, b: int) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The strings of bucket `b`, their numbers (terms, titles) and their character sets."""
        found = self.recent.get(b)
        if found is None:
            text = self.buffer[self.base + self.text_start[b]:self.base + self.text_start[b + 1]].decode()
            strings = text.split("\n")
            found = self.recent.put(b, (strings, self.items[self.starts[b]:self.starts[b + 1]],
                                        letter_sets(text)), len(strings))
        return found  # type: ignore[no-any-return]


def letter_sets(text: str) -> np.ndarray:
    """For each line of `text`, the set of its characters as 64 bits (bit = code point mod 64). An edit changes
    such a set by at most one member each way, so a string whose set differs from a word's by more than d
    members either way is more than d edits from it (shared bits only ever hide a difference: still exact)."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    bits = np.append(np.left_shift(np.uint64(1), (codes & 63).astype(np.uint64)), np.uint64(0))
    breaks = np.flatnonzero(codes == 10)
    bits[breaks] = 0
    return np.bitwise_or.reduceat(bits, np.concatenate(([0], breaks + 1)))


def letter_set(word: str) -> np.uint64:
    """`letter_sets` of one word."""
    bits = 0
    for char in word:
        bits |= 1 << (ord(char) & 63)
    return np.uint64(bits)


def within(sets: np.ndarray, own: np.uint64, distance: int) -> np.ndarray:
    """Which character sets (`letter_sets`) may belong to strings within `distance` edits of a word whose
    characters are `own`."""
    return (np.bitwise_count(sets & ~own) <= distance) & (np.bitwise_count(own & ~sets) <= distance)


class StringTable:
    """Strings of the pack file by index, and (when the table is hashed) the index of a string."""

    def __init__(self, pack: Pack, name: str) -> None:
        self.buffer, self.base = pack.buffer, pack.offset(f"{name}_text")
        self.offsets = memoryview(pack[f"{name}_offsets"])
        self.size = len(self.offsets) - 1
        if f"{name}_hash" in pack.places:
            self.hashes, self.by_hash = memoryview(pack[f"{name}_hash"]), memoryview(pack[f"{name}_by_hash"])

    def __len__(self) -> int:
        return self.size

    def raw(self, i: int) -> bytes:
        return self.buffer[self.base + self.offsets[i]:self.base + self.offsets[i + 1]]

    def __getitem__(self, i: int) -> str:
        return self.raw(i).decode()

    def find(self, text: str) -> int:
        """The index of `text`, or -1."""
        raw = text.encode()
        h = zlib.crc32(raw)
        hashes = self.hashes
        i = bisect.bisect_left(hashes, h)
        while i < self.size and hashes[i] == h:
            found = self.by_hash[i]
            if self.raw(found) == raw:
                return found
            i += 1
        return -1


class Documents(Sequence[list[str]]):
    """[slug, title, meaning, url] of each document, read from the pack when asked for."""

    def __init__(self, table: StringTable) -> None:
        self.table = table
        self.recent = Recent(DOCUMENTS_KEPT)

    def __len__(self) -> int:
        return len(self.table) // 4

    def __getitem__(self, doc: int) -> list[str]:  # type: ignore[override]
        found = self.recent.get(doc)
        if found is None:
            if not 0 <= doc < len(self):
                raise IndexError(doc)
            found = self.recent.put(doc, [self.table[4 * doc + i] for i in range(4)])
        return found


class Recent:
    """A bounded cache of what queries read from the pack most recently (posting lists with their decoded
    confidences, documents' strings, typo buckets): building them per query cost more than the search at small
    sizes. Least recently used first out: a `get` that finds an entry makes it the newest, and the least recently
    used entries go once the summed weight of the kept ones would pass `limit` (an entry heavier than `limit` is
    not kept). Safe to share between threads: a `get` is one operation of the ordered dict (a step that finds its
    entry already taken by another thread is skipped), a `put` holds a lock, so that the summed weight never drifts
    from what is kept (a drifted sum evicted everything on every put: each query made its filters again)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.weight = limit, 0
        self.items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        found = self.items.get(key)
        if found is None:
            return None
        try:
            self.items.move_to_end(key)
        except KeyError:  # another thread evicted it meanwhile
            pass
        return found[0]

    def put(self, key: Any, value: Any, weight: int = 1) -> Any:
        if weight > self.limit:
            return value
        with self._lock:
            return self._put(key, value, weight)

    def _put(self, key: Any, value: Any, weight: int) -> Any:
        items = self.items
        old = items.pop(key, None)  # the same entry made twice (two threads): counted once
        if old is not None:
            self.weight -= old[1]
        while items and self.weight + weight > self.limit:
            try:
                self.weight -= items.popitem(last=False)[1][1]
            except KeyError:  # another thread emptied it first
                break
        items[key] = (value, weight)
        self.weight += weight
        return value

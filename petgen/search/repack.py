"""The pack file's tables of strings and terms patched where an update changed them, not made anew.

`pack` spends most of its time on what a one-entry edit barely changes: the documents' string table, the terms'
(their text, hashes, lengths, posting numbers), the words' (prefix completions, shapes). An `IndexState` keeps
those of its last pack (`Tables`: `pack`'s `tables`) with what changed since: the documents (`docs`) and the terms
whose presence in a kind may have (`terms`). `patched` turns the kept tables into those of the state as it is now:
every table is spliced where a document or term changed; the terms' numbers move by the terms added before them
and removed. The words' tables are made anew when the words changed (a few milliseconds), else only renumbered.
tests/petgen/test_search_update.py compares the packs of updated states with those built anew.
"""

from __future__ import annotations

import zlib
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from petgen.search.pack import Postings, shapes, starts, strings, term_postings
from petgen.search.scoring import SHORT_PREFIX
from petgen.search.stored import KINDS

Edit = tuple[int, int, list[str]]  # items lo:hi of a table replaced by these strings


@dataclass
class Tables:
    """`pack`'s tables of the state's last pack (None before its first), and what changed since."""

    arrays: dict[str, np.ndarray] | None = None
    docs: set[int] = field(default_factory=set)  # documents whose fields changed
    terms: set[str] = field(default_factory=set)  # terms that may have been added to or removed from a kind

    def changed(self, docs: Sequence[int], terms: set[str]) -> None:
        self.docs.update(docs)
        self.terms.update(terms)

    def current(self, docs: list[list[str]], kinds: dict[str, Postings],
                completions: dict[str, list[str]]) -> dict[str, np.ndarray] | None:
        """The tables of `docs` and `kinds` (whose words' completions are `completions`), if kept; kept as such."""
        if self.arrays is not None and (self.docs or self.terms):
            self.arrays = patched(self.arrays, docs, sorted(self.docs), kinds, completions, sorted(self.terms))
        self.docs.clear()
        self.terms.clear()
        return self.arrays


class _Strings:
    """A string table's strings, each decoded when read (to bisect it)."""

    def __init__(self, text: np.ndarray, offsets: np.ndarray) -> None:
        self.text, self.offsets = text, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> str:
        return self.text[self.offsets[i]:self.offsets[i + 1]].tobytes().decode()


def patched(arrays: dict[str, np.ndarray], docs: list[list[str]], changed: list[int], kinds: dict[str, Postings],
            completions: dict[str, list[str]], toggled: list[str]) -> dict[str, np.ndarray]:
    """`arrays` (`pack`'s tables) with the fields of the `changed` documents as in `docs` now and the terms of
    `kinds` now (`toggled`, sorted: those that may have been added to a kind or removed from one)."""
    found = dict(arrays)
    found["doc_text"], found["doc_offsets"] = _spliced_strings(
        arrays["doc_text"], arrays["doc_offsets"], [(4 * d, 4 * d + 4, docs[d]) for d in changed])
    old = _Strings(arrays["term_text"], arrays["term_offsets"])
    places = [bisect_left(old, term) for term in toggled]
    was = [at < len(old) and old[at] == term for at, term in zip(places, toggled)]
    now = [any(_has(kinds[kind].terms, term) for kind in KINDS) for term in toggled]
    edits: list[Edit] = [(at, at + 1, []) if before else (at, at, [term])
                         for at, term, before, after in zip(places, toggled, was, now) if before != after]
    if not edits:
        remap = None
    else:
        removed = np.asarray([lo for lo, hi, _ in edits if hi > lo], dtype=np.int64)
        inserted = np.asarray([lo for lo, hi, _ in edits if hi == lo], dtype=np.int64)
        every = np.arange(len(old), dtype=np.int64)
        remap = every - np.searchsorted(removed, every) + np.searchsorted(inserted, every, side="right")
        found["term_text"], found["term_offsets"] = _spliced_strings(arrays["term_text"], arrays["term_offsets"], edits)
        found["term_chars"] = _spliced(arrays["term_chars"], edits, len)
        hashes = np.empty_like(arrays["term_hash"])
        hashes[arrays["term_by_hash"]] = arrays["term_hash"]
        hashes = _spliced(hashes, edits, lambda term: zlib.crc32(term.encode()))
        by_hash = np.argsort(hashes, kind="stable")
        found["term_hash"], found["term_by_hash"] = hashes[by_hash], by_hash.astype(np.int32)
    new = _Strings(found["term_text"], found["term_offsets"])
    ids, moved = {}, {}
    for kind in KINDS:
        before = arrays[f"ids_{kind}"]
        was_in = [known and _in(before, at) for at, known in zip(places, was)]
        now_in = [_has(kinds[kind].terms, term) for term in toggled]
        gone = [at for at, inside, after in zip(places, was_in, now_in) if inside and not after]
        kept = before[~np.isin(before, gone)] if gone else before
        ids[kind] = kept if remap is None else remap[kept]
        added = [bisect_left(new, term) for term, inside, after in zip(toggled, was_in, now_in) if after and not inside]
        if added:
            ids[kind] = np.sort(np.concatenate((ids[kind], np.asarray(added, dtype=np.int64))))
        if len(ids[kind]) != len(kinds[kind].terms):
            raise AssertionError(f"the {kind} kept in the search state are not the index's")
        found[f"ids_{kind}"] = ids[kind]
        moved[kind] = [term for term, inside, after in zip(toggled, was_in, now_in) if inside != after]
    found["term_posting"] = term_postings(ids, len(new))
    found["vocabulary"] = vocabulary = ids["words"].astype(np.int32)
    if moved["words"]:
        found.update(_prefixes(arrays, completions, kinds["words"].terms, vocabulary, remap, moved["words"]))
        found.update(shapes("shape", kinds["words"].terms, vocabulary))
    elif remap is not None:
        found["prefix_items"] = remap[arrays["prefix_items"]].astype(np.int32)
        found["shape_items"] = remap[arrays["shape_items"]].astype(np.int32)
    return found


def _prefixes(arrays: dict[str, np.ndarray], completions: dict[str, list[str]], words: list[str],
              vocabulary: np.ndarray, remap: np.ndarray | None, moved: list[str]) -> dict[str, np.ndarray]:
    """`prefix_arrays` of `completions` now that the words `moved` were added or removed: the completions of the
    other prefixes are the last pack's, renumbered (as `update._complete` keeps them)."""
    old = _Strings(arrays["prefix_text"], arrays["prefix_offsets"])
    before = {old[i]: i for i in range(len(old))}
    touched = {word[:size] for word in moved for size in range(2, min(SHORT_PREFIX, len(word)) + 1)}
    numbers = vocabulary.tolist()
    start, items = arrays["prefix_start"], arrays["prefix_items"]
    lists = []
    for prefix, completed in completions.items():
        at = before.get(prefix)
        if at is None or prefix in touched:
            lists.append(np.asarray([numbers[bisect_left(words, word)] for word in completed], dtype=np.int64))
        else:
            kept = items[start[at]:start[at + 1]]
            lists.append(kept if remap is None else remap[kept])
    found = strings("prefix", list(completions), hashed=True) if list(completions) != list(before) else {
        name: arrays[name] for name in ("prefix_text", "prefix_offsets", "prefix_hash", "prefix_by_hash")}
    found["prefix_start"] = starts(lists)
    found["prefix_items"] = (np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64)).astype(np.int32)
    return found


def _has(terms: list[str], term: str) -> bool:
    at = bisect_left(terms, term)
    return at < len(terms) and terms[at] == term


def _in(ascending: np.ndarray, value: int) -> bool:
    at = int(np.searchsorted(ascending, value))
    return at < len(ascending) and int(ascending[at]) == value


def _spliced_strings(text: np.ndarray, offsets: np.ndarray, edits: list[Edit]) -> tuple[np.ndarray, np.ndarray]:
    """A string table (`strings`) with the `edits` (ascending, not overlapping) made."""
    if not edits:
        return text, offsets
    pieces, lengths, at = [], [], 0
    for lo, hi, values in edits:
        encoded = [value.encode() for value in values]
        pieces += [text[offsets[at]:offsets[lo]], np.frombuffer(b"".join(encoded), dtype=np.uint8)]
        lengths += [np.diff(offsets[at:lo + 1]), np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))]
        at = hi
    pieces.append(text[offsets[at]:])
    lengths.append(np.diff(offsets[at:]))
    spliced = np.zeros(len(offsets) + sum(len(values) - (hi - lo) for lo, hi, values in edits), dtype=offsets.dtype)
    np.cumsum(np.concatenate(lengths), out=spliced[1:])
    return np.concatenate(pieces).astype(text.dtype, copy=False), spliced


def _spliced(values: np.ndarray, edits: list[Edit], of: Callable[[str], int]) -> np.ndarray:
    """An array of one value per string with the `edits` made (`of` a string: its value)."""
    pieces, at = [], 0
    for lo, hi, made in edits:
        pieces += [values[at:lo], np.asarray(list(map(of, made)), dtype=values.dtype)]
        at = hi
    pieces.append(values[at:])
    return np.concatenate(pieces)

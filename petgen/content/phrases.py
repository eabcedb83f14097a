"""The repeated-phrase check (`validate.repeated_phrases`) updated from the last build's instead of made anew.

Counting every five-word phrase of 10,000 entries sorts some 600,000 hashes; a rebuild after one edit keeps,
in the build cache, what the last check counted (`PhraseState`: each entry's phrase hashes by its file key,
every phrase's count, and the entries of each phrase in more than MAX_PHRASE_ENTRIES entries) and changes
only what the removed and added entry files (an edit is both) change. The result is the same list, in the
same order, as `repeated_phrases` (tests/petgen/test_incremental.py compares the builds' warnings too). The
state (some 10 MB at 10,000 entries) is saved again only when more than KEEP_STATE entry files changed since it
was: until then each build updates the same saved state, a pure function of it and the current entries.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np

from petgen.build.files import dumps_state, loads_state, read_file, write_atomic
from petgen.content.model import Entry
from petgen.content.validate import (
    MAX_PHRASE_ENTRIES,
    _among,
    counted,
    phrase_counts,
    phrase_hashes,
    phrase_texts,
    users_of,
)

STATE = "phrases.state"
MOST_CHANGED = 0.05  # more changed entry files than this share (and than FEW_CHANGED): count every phrase anew
FEW_CHANGED = 64
KEEP_STATE = 16  # while no more entry files than this changed since the state was saved, it is not saved again
Found = list[tuple[str, Sequence[Entry]]]


@dataclass
class PhraseState:
    keys: list[str]  # the entry files' keys, in the order of the entries checked
    offsets: np.ndarray  # entry i's phrases are hashes[offsets[i]:offsets[i + 1]]
    hashes: np.ndarray  # every entry's phrase hashes, one after another
    values: np.ndarray  # every phrase hash, sorted
    counts: np.ndarray  # the number of entries each of `values` is in
    reported: dict[int, tuple[str, np.ndarray]]  # phrase in too many entries -> (its text, their positions)


class Users(Sequence[Entry]):
    """The entries of one phrase, by their positions (made into a list only as far as they are read)."""

    def __init__(self, entries: list[Entry], positions: np.ndarray) -> None:
        self.entries, self.positions = entries, positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return [self.entries[i] for i in self.positions[index].tolist()]
        return self.entries[int(self.positions[index])]

    def __iter__(self) -> Iterator[Entry]:
        return (self.entries[i] for i in self.positions.tolist())


def repeated(entries: list[Entry], keys: list[str] | None, root: Path | None) -> Found:
    """`repeated_phrases(entries)`, updated from the state kept in `root` (the build cache's directory of this
    content) where there is one and few entries changed; the state is kept for the next build. `keys`: each
    entry's file key (`petgen.build.files.entry_key`)."""
    if keys is None or len(keys) != len(entries) or len(set(keys)) != len(keys):
        return [(text, Users(entries, np.array(users))) for _, text, users in users_of(entries, *phrase_counts(entries))]
    state = _load(root) if root is not None else None
    made = _updated(state, entries, keys) if state is not None else None
    if made is not None and made[2] <= KEEP_STATE:
        return made[0]  # the state stays: the next build updates it again, with as few changes (it is big)
    found, state = made[:2] if made is not None else _counted(entries, keys)
    if root is not None and root.is_dir():
        with contextlib.suppress(OSError):
            write_atomic(root / STATE, dumps_state(state))
    return found


def _load(root: Path) -> PhraseState | None:
    with contextlib.suppress(Exception):  # missing or damaged: count anew
        state = loads_state(read_file(root / STATE))
        if isinstance(state, PhraseState):
            return state
    return None


def _concatenated(entries: list[Entry]) -> tuple[np.ndarray, np.ndarray]:
    """Every entry's phrase hashes one after another, and where each entry's start (one more: the end)."""
    blobs = [e.phrases or phrase_hashes(e) for e in entries]
    offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs)) // 8, out=offsets[1:])
    return np.frombuffer(b"".join(blobs), dtype=np.int64), offsets


def _spliced(state: PhraseState, entries: list[Entry], old_of_new: np.ndarray,
             added: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """`_concatenated(entries)` made from the state's hashes where an entry file is the same (`old_of_new`, in the
    state's order): only the `added` entries' phrases are read (an unchanged entry's stay in its chunk)."""
    lengths = np.empty(len(entries), dtype=np.int64)
    kept = old_of_new >= 0
    lengths[kept] = np.diff(state.offsets)[old_of_new[kept]]
    fresh = {j: np.frombuffer(entries[j].phrases or phrase_hashes(entries[j]), dtype=np.int64) for j in added}
    for j, found in fresh.items():
        lengths[j] = len(found)
    offsets = np.zeros(len(entries) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # Runs of kept entries whose files follow each other in the state too: one slice of its hashes each.
    breaks = np.flatnonzero(~kept[1:] | ~kept[:-1] | (np.diff(old_of_new) != 1)) + 1
    pieces = []
    for start, end in zip([0, *breaks.tolist()], [*breaks.tolist(), len(entries)]):
        if start == end:
            continue
        if kept[start]:
            first, last = int(old_of_new[start]), int(old_of_new[end - 1])
            pieces.append(state.hashes[state.offsets[first]:state.offsets[last + 1]])
        else:
            pieces.append(fresh[start])
    empty = np.zeros(0, dtype=np.int64)
    return (np.concatenate(pieces) if pieces else empty).astype(np.int64, copy=False), offsets


def _found(entries: list[Entry], reported: dict[int, tuple[str, np.ndarray]]) -> Found:
    """As `repeated_phrases` lists them: most widespread first, then by hash (`np.unique`'s order)."""
    return [(reported[value][0], Users(entries, reported[value][1]))
            for value in sorted(reported, key=lambda v: (-len(reported[v][1]), v))]


def _counted(entries: list[Entry], keys: list[str]) -> tuple[Found, PhraseState]:
    """Every phrase counted (`phrase_counts`), and the state for the next build."""
    hashes, owners, values, counts = phrase_counts(entries)
    reported = {value: (text, np.array(users, dtype=np.int64))
                for value, text, users in users_of(entries, hashes, owners, values, counts)}
    offsets = np.searchsorted(owners, np.arange(len(entries) + 1))
    return _found(entries, reported), PhraseState(list(keys), offsets, hashes, values, counts, reported)


def _updated(state: PhraseState, entries: list[Entry], keys: list[str]) -> tuple[Found, PhraseState, int] | None:
    """The state's count with the removed entry files' phrases taken out and the added ones' put in, and how many
    files that was; None when too much changed (or the entries are in another order) to be worth it."""
    old = {key: i for i, key in enumerate(state.keys)}
    old_of_new = np.fromiter((old.get(key, -1) for key in keys), dtype=np.int64, count=len(keys))
    kept = old_of_new >= 0
    if np.any(np.diff(old_of_new[kept]) <= 0):
        return None
    new_of_old = np.full(len(state.keys), -1, dtype=np.int64)
    new_of_old[old_of_new[kept]] = np.flatnonzero(kept)
    removed, added = np.flatnonzero(new_of_old < 0).tolist(), np.flatnonzero(~kept).tolist()
    if len(removed) + len(added) > max(FEW_CHANGED, MOST_CHANGED * len(keys)):
        return None
    values, counts = state.values, state.counts.copy()
    taken = [state.hashes[state.offsets[i]:state.offsets[i + 1]] for i in removed]
    if taken:
        gone, times = counted(np.concatenate(taken))
        at = np.searchsorted(values, gone)
        if np.any(at >= len(values)) or np.any(values[np.minimum(at, len(values) - 1)] != gone):
            return None  # not what the state counted
        counts[at] -= times
    hashes, offsets = _spliced(state, entries, old_of_new, added)
    put = {j: hashes[offsets[j]:offsets[j + 1]] for j in added}
    if put:
        new, times = counted(np.concatenate(list(put.values())))
        at = np.searchsorted(values, new)
        known = values[np.minimum(at, len(values) - 1)] == new if len(values) else np.zeros(len(new), dtype=bool)
        counts[at[known]] += times[known]
        values, counts = np.insert(values, at[~known], new[~known]), np.insert(counts, at[~known], times[~known])
    live = counts > 0
    values, counts = values[live], counts[live]
    often = set(values[counts > MAX_PHRASE_ENTRIES].tolist())
    reported: dict[int, tuple[str, np.ndarray]] = {}
    contains = [(j, set(found.tolist())) for j, found in put.items()]
    for value, (text, positions) in state.reported.items():
        if value in often:
            moved = new_of_old[positions]
            extra = [j for j, mine in contains if value in mine]
            moved = moved[moved >= 0]
            reported[value] = (text, np.sort(np.concatenate([moved, extra])) if extra else moved)
    fresh = sorted(often - reported.keys())
    if fresh:  # phrases that reach the limit in this build: their entries looked up in all
        wanted = np.array(fresh, dtype=np.int64)
        among, at = _among(hashes, wanted)
        owners = np.searchsorted(offsets, at, side="right") - 1
        by_value = {v: owners[among == v] for v in fresh}
        texts = phrase_texts(entries, [(int(by_value[v][0]), v) for v in fresh])
        reported.update((v, (texts[v], by_value[v])) for v in fresh)
    listed = np.array(list(reported), dtype=np.int64)
    sizes = np.fromiter((len(positions) for _, positions in reported.values()), dtype=np.int64, count=len(listed))
    if np.any(counts[np.searchsorted(values, listed)] != sizes):
        return None  # the state did not describe these entries
    return (_found(entries, reported), PhraseState(list(keys), offsets, hashes, values, counts, reported),
            len(removed) + len(added))

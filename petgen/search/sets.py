"""Sets of documents as the query side handles them (petgen/search/query.py): ascending arrays of document
numbers, merged, counted and probed with a few whole-array operations each.

numpy 2's `np.unique` hashes before it sorts and `np.nonzero` over floats branches per element; both cost
several times what a sort with a mask of the changes, or a comparison and a scan of booleans, costs on a
query's arrays, so neither is used here."""

from __future__ import annotations

from typing import Any

import numpy as np


def distinct(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct documents of some arrays, ascending."""
    if not parts:
        return np.zeros(0, dtype=np.int32)
    docs = np.sort(np.concatenate(parts)) if len(parts) != 1 else np.sort(parts[0])
    if len(docs) < 2:
        return docs
    keep = np.empty(len(docs), dtype=bool)
    keep[0] = True
    np.not_equal(docs[1:], docs[:-1], out=keep[1:])
    return docs[keep]


def positive(values: np.ndarray) -> np.ndarray:
    """The documents with a value above 0 in an array over all documents (a scratch array), ascending."""
    return np.flatnonzero(values > 0).astype(np.int32)


def union(touched: list[np.ndarray], values: np.ndarray) -> np.ndarray:
    """The distinct documents of several posting lists whose values were added into `values` (over all
    documents, positive where touched), ascending: a sort when they are few, one pass over `values` when
    they are many."""
    if len(touched) == 1:
        return touched[0]
    size = sum(len(t) for t in touched)
    if size * 8 < len(values):
        return distinct(touched)
    return positive(values)


def count(groups: list[list[tuple[Any, float, float]]]) -> int:
    """How many documents match any posting list of some word groups (lists of (posting, match, step)): very
    long lists as bitmaps OR-ed together, the others' documents checked against that bitmap."""
    postings = [posting for sources in groups for posting, _, _ in sources]
    dense = [p.bits for p in postings if p.bits is not None]
    sparse = [p.docs for p in postings if p.bits is None]
    if not dense:
        return len(sparse[0]) if len(sparse) == 1 else len(distinct(sparse))
    bits = dense[0].copy()
    for more in dense[1:]:
        bits |= more
    total = int(np.bitwise_count(bits).sum())
    if sparse:
        docs = np.concatenate(sparse)
        inside = (bits[docs >> 6] >> (docs & 63).astype(np.uint64)) & np.uint64(1)
        total += len(distinct([docs[inside == 0]]))
    return total


def probe(docs: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate, its position in `docs` (ascending) and whether it is there."""
    if not len(docs):
        return np.zeros(len(candidates), dtype=np.intp), np.zeros(len(candidates), dtype=bool)
    at = np.minimum(np.searchsorted(docs, candidates), len(docs) - 1)
    return at, docs[at] == candidates

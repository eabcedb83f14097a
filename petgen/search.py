"""The search engine: one module for both sides (ARCHITECTURE.md, contract 4).

The build calls `build_index` and writes the result as shards by term prefix (as Pagefind does);
the runtime reads the shards back into a `SearchIndex` and queries it. Queries and documents go
through the same `analyze`, so a query is normalised exactly as the documents were.

Normalisation: NFC, case folding, `ß→ss`, accents stripped, umlauts folded to their base letters
and the umlaut-less spellings `ae/oe/ue` too (`Bärchen`, `Baerchen`, `barchen` → `barchen`),
punctuation and hyphens split words. Each word is indexed as itself (for prefix and typo
matching), by its German and English Snowball stems (exact matching), and, for compounds, by the
known words it starts or ends with (`Zuckermaus` → `zucker`, `maus`).

Score (documented in the README): for each query word the best match in a document counts
`field weight × match quality`; a document's score is the sum over query words plus 100 for every
query word it matched without a typo and 10 more for every query word it matched as a whole word
(or its stem). So whole-word matches outrank prefix and compound matches, those outrank typo
matches, documents that match more query words rank higher, and ties are broken by the shorter
title, then alphabetically.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import snowballstemmer
from rapidfuzz.distance import OSA
from rapidfuzz.process import extract

from petgen.text import collation_key, strip_accents

INDEX_VERSION = 1
FIELDS = ("title", "variants", "keywords", "meaning")
WEIGHTS = {"title": 8.0, "variants": 5.0, "keywords": 3.0, "meaning": 1.0}
QUALITY = {"exact": 1.0, "stem": 0.9, "prefix": 0.7, "compound": 0.55, "typo1": 0.45, "typo2": 0.3}
ALTERNATIVE_STEP = 0.02  # in a word group, each later alternative counts 2 % less than the one before
NON_TYPO_BONUS = 100.0  # per query word matched without a typo
EXACT_BONUS = 10.0  # per query word matched as a whole word or stem (not a prefix or compound part)
PREFIX_FANOUT = 64  # at most this many indexed words complete one prefix

STOPWORDS = frozenset(
    "der die das des dem den ein eine einer einen einem eines und oder mit fur von zu zum zur im in am an auf "
    "ist sind es er sie ihr wir ich du mich dich sich als auch so wie the a an and or of to for with is are my "
    "me you your it its on in at be".split()
)

_WORD = re.compile(r"[^\W_]+")
_UMLAUT = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss"})
_DIGRAPHS = (("ae", "a"), ("oe", "o"), ("ue", "u"))
_german = snowballstemmer.stemmer("german")
_english = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def fold_word(word: str) -> str:
    """One lowercase word folded: umlauts and their ae/oe/ue spellings to base letters, no accents."""
    word = strip_accents(word.translate(_UMLAUT))
    for digraph, base in _DIGRAPHS:
        word = word.replace(digraph, base)
    return word


def words(text: str) -> list[str]:
    """The folded words of a text, in order."""
    return [fold_word(w) for w in _WORD.findall(unicodedata.normalize("NFC", text).casefold())]


@lru_cache(maxsize=65536)
def stems(word: str) -> tuple[str, ...]:
    """German and English Snowball stems of a folded word (one if they agree)."""
    german, english = _german.stemWord(word), _english.stemWord(word)
    return (german,) if german == english else (german, english)


def analyze(text: str) -> list[str]:
    """Words to search for: folded, without stopwords (unless nothing else is left)."""
    found = words(text)
    kept = [w for w in found if w not in STOPWORDS]
    return kept or found


# ---------------------------------------------------------------------------------------------
# Build side


@dataclass
class Document:
    slug: str
    title: str
    meaning: str
    url: str
    fields: dict[str, list[str]]  # field -> its texts
    terms: dict[str, float] | None = None  # `document_terms(fields)`, if computed already


def document_terms(fields: dict[str, list[str]]) -> dict[str, float]:
    """Each word of a document once, at the weight of the best field it occurs in."""
    seen: dict[str, float] = {}
    for name in FIELDS:
        weight = WEIGHTS[name]
        for text in fields.get(name, []):
            for word in analyze(text):
                if seen.get(word, 0.0) < weight:
                    seen[word] = weight
    return seen


def _add(postings: dict[str, dict[int, float]], term: str, doc: int, weight: float) -> None:
    row = postings.setdefault(term, {})
    if row.get(doc, 0.0) < weight:
        row[doc] = weight


def build_index(documents: list[Document]) -> dict[str, Any]:
    """Index documents; return {"docs", "stems", "words", "parts"}, postings as `[docs, weights]`."""
    stem_post: dict[str, dict[int, float]] = {}
    word_post: dict[str, dict[int, float]] = {}
    part_post: dict[str, dict[int, float]] = {}
    doc_words: list[dict[str, float]] = []
    for doc, document in enumerate(documents):
        seen = document.terms if document.terms is not None else document_terms(document.fields)
        for word, weight in seen.items():
            word_post.setdefault(word, {})[doc] = weight
            for stem in stems(word):
                row = stem_post.setdefault(stem, {})
                if row.get(doc, 0.0) < weight:
                    row[doc] = weight
        doc_words.append(seen)
    # Compound parts: known words (from titles, variants, keywords) a longer word starts or ends with,
    # and, for names (titles and variants), every tail of four letters or more (`Quatschkopf` → `kopf`).
    known = {w for w, postings in word_post.items() if len(w) >= 3 and
             any(weight > WEIGHTS["meaning"] for weight in postings.values())}
    parts_of: dict[tuple[str, bool], list[str]] = {}  # most words recur across documents
    for doc, seen in enumerate(doc_words):
        for word, weight in seen.items():
            if len(word) < 6:
                continue
            key = (word, weight >= WEIGHTS["variants"])
            parts = parts_of.get(key)
            if parts is None:
                parts = parts_of[key] = compound_parts(word, known, tails=key[1])
            for part in parts:
                _add(part_post, part, doc, weight)
    return {
        "docs": [[d.slug, d.title, d.meaning, d.url] for d in documents],
        "stems": _freeze(stem_post),
        "words": _freeze(word_post),
        "parts": _freeze(part_post),
    }


def compound_parts(word: str, known: set[str], *, tails: bool = False) -> list[str]:
    """Known words of three letters or more at the start or end of a longer word; with `tails`, also
    every ending of four letters or more after a head of three (the last part of a compound)."""
    if len(word) < 6:
        return []
    parts = {word[:i] for i in range(3, len(word) - 2) if word[:i] in known}
    parts |= {word[i:] for i in range(3, len(word) - 2) if word[i:] in known or (tails and len(word) - i >= 4)}
    return sorted(parts)


def _freeze(postings: dict[str, dict[int, float]]) -> dict[str, list[list[float]]]:
    """Postings as `[docs, weights]`: two flat lists, docs ascending (they were added in doc order)."""
    return {term: [list(row), list(row.values())] for term, row in postings.items()}


def shard_key(term: str) -> str:
    """Terms are sharded by their first two characters (one shard for very short terms)."""
    return term[:2] if len(term) >= 2 else "_"


def shard(index: dict[str, Any]) -> dict[str, dict[str, dict[str, list[list[float]]]]]:
    """Split the postings into shards: {key: {"stems": …, "words": …, "parts": …}}."""
    shards: dict[str, dict[str, dict[str, list[list[float]]]]] = {}
    for kind in ("stems", "words", "parts"):
        for term, postings in index[kind].items():
            shards.setdefault(shard_key(term), {"stems": {}, "words": {}, "parts": {}})[kind][term] = postings
    return dict(sorted(shards.items()))


# ---------------------------------------------------------------------------------------------
# Query side


@dataclass
class Hit:
    doc: int
    slug: str
    title: str
    meaning: str
    url: str
    score: float


Postings = tuple[np.ndarray, np.ndarray]  # (docs int32, weights float64)


@dataclass
class SearchIndex:
    """The index loaded for querying; scores are computed with numpy over all documents at once."""

    docs: list[list[str]]
    stems: dict[str, Postings]
    words: dict[str, Postings]
    parts: dict[str, Postings]
    vocabulary: list[str] = field(default_factory=list)
    by_initial: dict[str, list[str]] = field(default_factory=dict)
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # tie-break rank per doc

    @classmethod
    def from_shards(cls, docs: list[list[str]], shards: Iterable[dict[str, Any]]) -> SearchIndex:
        index = cls(docs=docs, stems={}, words={}, parts={})
        for data in shards:
            for kind in ("stems", "words", "parts"):
                target = getattr(index, kind)
                for term, (term_docs, weights) in data[kind].items():
                    target[term] = (np.asarray(term_docs, dtype=np.int32), np.asarray(weights, dtype=np.float64))
        index.vocabulary = sorted(index.words)
        for word in index.vocabulary:
            index.by_initial.setdefault(word[0], []).append(word)
        ranked = sorted(range(len(docs)), key=lambda d: (len(docs[d][1]), collation_key(docs[d][1])))
        index.order = np.empty(len(docs), dtype=np.int64)
        index.order[ranked] = np.arange(len(docs))
        return index

    @classmethod
    def from_index(cls, index: dict[str, Any]) -> SearchIndex:
        return cls.from_shards(index["docs"], shard(index).values())

    def _prefixed(self, prefix: str) -> list[str]:
        start = bisect.bisect_left(self.vocabulary, prefix)
        found = []
        for word in self.vocabulary[start:start + PREFIX_FANOUT]:
            if not word.startswith(prefix):
                break
            found.append(word)
        return found

    def _typos(self, word: str) -> list[tuple[str, int]]:
        """Indexed words within 1 edit (4+ letters) or 2 edits (8+ letters), same first letter."""
        if len(word) < 4:
            return []
        limit = 2 if len(word) >= 8 else 1
        candidates = self.by_initial.get(word[0], [])
        matches = extract(word, candidates, scorer=OSA.distance, score_cutoff=limit, limit=None)
        return [(found, int(distance)) for found, distance, _ in matches if distance > 0]

    def match_word(self, word: str, *, prefix: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Score every document for one query word: (best weighted quality per doc, matched as a whole
        word or stem, matched without a typo), each an array over all documents."""
        best = np.zeros(len(self.docs))

        def take(postings: Postings | None, quality: float) -> None:
            if postings is not None:
                docs, weights = postings
                best[docs] = np.maximum(best[docs], weights * quality)

        for stem in stems(word):
            take(self.stems.get(stem), QUALITY["stem"])
        take(self.words.get(word), QUALITY["exact"])
        whole = best > 0
        for stem in stems(word):
            take(self.parts.get(stem), QUALITY["compound"])
        take(self.parts.get(word), QUALITY["compound"])
        if prefix and len(word) >= 2:
            for completion in self._prefixed(word):
                if completion != word:
                    take(self.words[completion], QUALITY["prefix"])
        exact = best > 0
        for found, distance in self._typos(word):
            take(self.words[found], QUALITY["typo1" if distance == 1 else "typo2"])
        return best, whole, exact

    def search(self, query: str | list[str] | list[list[str]], *, boosts: dict[int, float] | None = None,
               allowed: set[int] | frozenset[int] | None = None) -> list[Hit]:
        """All matching documents, best first; `boosts` add to scores, `allowed` filters."""
        return self.top(query, None, boosts=boosts, allowed=allowed)[0]

    def top(self, query: str | list[str] | list[list[str]], limit: int | None, *,
            boosts: dict[int, float] | None = None,
            allowed: set[int] | frozenset[int] | None = None) -> tuple[list[Hit], int]:
        """The best `limit` matches (all when None) and the number of all matches.

        A query is text, a list of words, or a list of word groups: the words of a group are
        alternatives for one concept (`little mouse` → `mäuschen`, `mausi`) and count once.
        """
        if isinstance(query, str):
            groups = [[w] for w in analyze(query)]
        else:
            groups = [[g] if isinstance(g, str) else list(g) for g in query]
        size = len(self.docs)
        scores = np.zeros(size)
        matched = np.zeros(size, dtype=bool)
        seen: set[tuple[str, ...]] = set()
        for group in groups:
            if not group or tuple(group) in seen:
                continue
            seen.add(tuple(group))
            best = np.zeros(size)
            whole = np.zeros(size, dtype=bool)
            exact = np.zeros(size, dtype=bool)
            for position, word in enumerate(group):
                word_best, word_whole, word_exact = self.match_word(word)
                factor = 1.0 - ALTERNATIVE_STEP * position  # the first alternative is the preferred one
                np.maximum(best, word_best * factor, out=best)
                whole |= word_whole
                exact |= word_exact
            scores += best + NON_TYPO_BONUS * exact + EXACT_BONUS * whole
            matched |= best > 0
        if allowed is not None:
            mask = np.zeros(size, dtype=bool)
            mask[np.fromiter(allowed, dtype=np.int64, count=len(allowed))] = True
            matched &= mask
        if boosts:
            docs = np.fromiter(boosts, dtype=np.int64, count=len(boosts))
            scores[docs] += np.fromiter(boosts.values(), dtype=np.float64, count=len(boosts))
        return self._ranked(scores, matched, limit)

    def rank_docs(self, scores: dict[int, float], limit: int | None = None,
                  allowed: set[int] | frozenset[int] | None = None) -> tuple[list[Hit], int]:
        """Hits for given document scores, in the engine's order (when there is nothing to search)."""
        array = np.zeros(len(self.docs))
        matched = np.zeros(len(self.docs), dtype=bool)
        for doc, score in scores.items():
            if allowed is None or doc in allowed:
                array[doc] = score
                matched[doc] = True
        return self._ranked(array, matched, limit)

    def _ranked(self, scores: np.ndarray, matched: np.ndarray, limit: int | None) -> tuple[list[Hit], int]:
        candidates = np.flatnonzero(matched)
        total = len(candidates)
        rounded = np.round(scores[candidates], 6)
        if limit is not None and total > limit:
            # keep everything that scores at least the limit-th best, ties included, then sort those
            threshold = np.partition(rounded, total - limit)[total - limit]
            keep = rounded >= threshold
            candidates, rounded = candidates[keep], rounded[keep]
        ranked = candidates[np.lexsort((self.order[candidates], -rounded))]
        if limit is not None:
            ranked = ranked[:limit]
        return [self.hit(int(doc), float(scores[doc])) for doc in ranked], total

    def hit(self, doc: int, score: float) -> Hit:
        slug, title, meaning, url = self.docs[doc]
        return Hit(doc, slug, title, meaning, url, round(score, 3))

"""The query side of the search engine: the loaded index, confidences in 0..1, bounded cost.

The build writes shards (petgen/search.py); the runtime reads them into a `SearchIndex`. A query is
a list of word groups (the words of a group are alternatives for one concept and count once).

**Confidence.** Every match of a query word in a document has a confidence in 0..1:
`field × match`, with field title 1.0, variants 0.9, keywords 0.8, meaning 0.45, and match whole
word 1.0, stem 0.9, compound part 0.65, prefix 0.5 + 0.4 × (typed letters ÷ letters of the word),
one typo 0.6, two typos 0.5. A group counts its best match (each later alternative 2 % less); a
document's score is the mean over the query's groups that match anything at all (a group that
matches nothing is left out and reported). So 1.0 means every word named the title itself, and
the figure means the same whatever the query.

**Bounded cost** (the caps, tested in tests/petgen/test_search.py):
- a prefix expands to at most `PREFIX_FANOUT` indexed words, the shortest first (precomputed for
  prefixes of up to `SHORT_PREFIX` letters; a longer prefix looks at most at `PREFIX_SCAN` words);
- typos are looked for only when the word itself is not indexed, among at most `FUZZY_SCAN`
  candidates (same first letter, length within the edit distance) and keep the `FUZZY_MATCHES` nearest;
- each query word costs at most its postings, and the best `limit` are selected with a partition
  over the matches, never a sort of all of them.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rapidfuzz.distance import OSA
from rapidfuzz.process import extract

from petgen import search as analyzer
from petgen.search import QUALITY, shard, stems, words
from petgen.text import collation_key

FIELD_CONFIDENCE = ((1.0, 0.45), (3.0, 0.8), (5.0, 0.9), (8.0, 1.0))  # index weight -> confidence
MATCH = QUALITY  # whole word, stem, compound part, one and two typos (prefix: below)
PREFIX_BASE, PREFIX_COVERAGE = 0.5, 0.4  # prefix: 0.5 + 0.4 × typed share of the completed word
ALTERNATIVE_STEP = 0.02  # in a word group, each later alternative counts 2 % less than the one before
PREFIX_FANOUT = 32  # a prefix completes to at most this many indexed words (the shortest first)
SHORT_PREFIX = 3  # prefixes up to this length have their completions precomputed
PREFIX_SCAN = 512  # a longer prefix looks at no more than this many words in alphabetical order
FUZZY_SCAN = 3000  # typo candidates compared per query word, at most
FUZZY_MATCHES = 16  # typo matches kept per query word, the nearest first
SUGGESTIONS = 5  # "did you mean" titles, at most
SCORE_DIGITS = 4  # scores are compared at this precision; ties go to the engine's title order

Postings = tuple[np.ndarray, np.ndarray]  # (docs int32 ascending, confidence float64)
Group = tuple[np.ndarray, np.ndarray]  # (docs, best confidence per doc) of one word group


def confidence(weights: Any) -> np.ndarray:
    """Field confidences for index weights (8, 5, 3, 1 → 1.0, 0.9, 0.8, 0.45)."""
    xs, ys = zip(*FIELD_CONFIDENCE)
    return np.interp(np.asarray(weights, dtype=np.float64), xs, ys)


@dataclass
class Hit:
    doc: int
    slug: str
    title: str
    meaning: str
    url: str
    score: float


@dataclass
class SearchIndex:
    """The index loaded for querying."""

    docs: list[list[str]]
    stems: dict[str, Postings]
    words: dict[str, Postings]
    parts: dict[str, Postings]
    vocabulary: list[str] = field(default_factory=list)
    short_prefixes: dict[str, list[str]] = field(default_factory=dict)
    by_shape: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # (first letter, length) -> words
    titles_by_initial: dict[str, list[str]] = field(default_factory=dict)  # folded title -> via `title_docs`
    title_docs: dict[str, list[int]] = field(default_factory=dict)
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # tie-break rank per doc
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def from_shards(cls, docs: list[list[str]], shards: Iterable[dict[str, Any]]) -> SearchIndex:
        index = cls(docs=docs, stems={}, words={}, parts={})
        for data in shards:
            for kind in ("stems", "words", "parts"):
                target = getattr(index, kind)
                for term, (term_docs, weights) in data[kind].items():
                    target[term] = (np.asarray(term_docs, dtype=np.int32), confidence(weights))
        index.vocabulary = sorted(index.words)
        short: dict[str, list[str]] = {}
        for word in index.vocabulary:
            index.by_shape.setdefault((word[0], len(word)), []).append(word)
            for size in range(2, min(SHORT_PREFIX, len(word)) + 1):
                short.setdefault(word[:size], []).append(word)
        index.short_prefixes = {p: sorted(found, key=lambda w: (len(w), w))[:PREFIX_FANOUT]
                                for p, found in short.items()}
        for doc, (_, title, _, _) in enumerate(docs):
            folded = " ".join(words(title))
            if folded:
                if folded not in index.title_docs:
                    index.titles_by_initial.setdefault(folded[0], []).append(folded)
                index.title_docs.setdefault(folded, []).append(doc)
        ranked = sorted(range(len(docs)), key=lambda d: (len(docs[d][1]), collation_key(docs[d][1])))
        index.order = np.empty(len(docs), dtype=np.int64)
        index.order[ranked] = np.arange(len(docs))
        return index

    @classmethod
    def from_index(cls, index: dict[str, Any]) -> SearchIndex:
        return cls.from_shards(index["docs"], shard(index).values())

    # -- expansion, each bounded --------------------------------------------------------------

    def completions(self, prefix: str) -> list[str]:
        """Indexed words that start with `prefix` (not the prefix itself), at most PREFIX_FANOUT, shortest first."""
        if len(prefix) <= SHORT_PREFIX:
            found = self.short_prefixes.get(prefix, [])
        else:
            start = bisect.bisect_left(self.vocabulary, prefix)
            found = []
            for word in self.vocabulary[start:start + PREFIX_SCAN]:
                if not word.startswith(prefix):
                    break
                found.append(word)
            found = sorted(found, key=lambda w: (len(w), w))[:PREFIX_FANOUT + 1]
        return [w for w in found if w != prefix][:PREFIX_FANOUT]

    def fuzzy_candidates(self, word: str, distance: int) -> list[str]:
        """Indexed words with the same first letter and a length within `distance`, at most FUZZY_SCAN,
        the closest lengths first."""
        found: list[str] = []
        for delta in sorted(range(-distance, distance + 1), key=abs):
            found.extend(self.by_shape.get((word[0], len(word) + delta), ()))
            if len(found) >= FUZZY_SCAN:
                return found[:FUZZY_SCAN]
        return found

    def typos(self, word: str) -> list[tuple[str, int]]:
        """Indexed words within 1 edit (4+ letters) or 2 edits (8+ letters), same first letter, at most
        FUZZY_MATCHES (nearest first); none for a word that is itself indexed."""
        if len(word) < 4 or word in self.words:
            return []
        limit = 2 if len(word) >= 8 else 1
        matches = extract(word, self.fuzzy_candidates(word, limit), scorer=OSA.distance, score_cutoff=limit,
                          limit=FUZZY_MATCHES)
        return [(found, int(distance)) for found, distance, _ in matches if distance > 0]

    def postings(self, word: str, *, prefix: bool = True) -> Iterator[Postings]:
        """Every posting list one query word matches, with confidences already scaled by the match."""
        for stem in stems(word):
            if stem in self.stems:
                docs, conf = self.stems[stem]
                yield docs, conf * MATCH["stem"]
        if word in self.words:
            yield self.words[word]
        for term in {word, *stems(word)}:
            if term in self.parts:
                docs, conf = self.parts[term]
                yield docs, conf * MATCH["compound"]
        if prefix and len(word) >= 2:
            for completion in self.completions(word):
                docs, conf = self.words[completion]
                yield docs, conf * (PREFIX_BASE + PREFIX_COVERAGE * len(word) / len(completion))
        for found, distance in self.typos(word):
            docs, conf = self.words[found]
            yield docs, conf * MATCH["typo1" if distance == 1 else "typo2"]

    # -- scoring -------------------------------------------------------------------------------

    def _scratch(self) -> np.ndarray:
        """A zeroed array over all documents, one per thread, zeroed again after each use."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None or len(scratch) != len(self.docs):
            scratch = self._local.scratch = np.zeros(len(self.docs))
        return scratch

    def group(self, group: list[str], *, prefix: bool = True) -> Group:
        """The documents one word group matches and their best confidence (0..1)."""
        found = [(docs, conf * (1.0 - ALTERNATIVE_STEP * position))  # the first alternative is preferred
                 for position, word in enumerate(group) for docs, conf in self.postings(word, prefix=prefix)]
        if not found:
            return np.zeros(0, dtype=np.int32), np.zeros(0)
        if len(found) == 1:
            return found[0]
        best = self._scratch()
        touched: list[np.ndarray] = []
        for docs, conf in found:
            if touched:
                current = best[docs]
                np.maximum(current, conf, out=current)
                best[docs] = current
            else:
                best[docs] = conf
            touched.append(docs)
        docs = self._union(touched, best)
        values = best[docs]
        best[docs] = 0.0
        return docs, values

    @staticmethod
    def _union(touched: list[np.ndarray], values: np.ndarray) -> np.ndarray:
        """The distinct documents of several posting lists, ascending: a sort when they are few, one pass
        over the (positive) values of all documents when they are many."""
        if len(touched) == 1:
            return touched[0]
        size = sum(len(t) for t in touched)
        if size * 8 < len(values):
            return np.unique(np.concatenate(touched))
        return np.flatnonzero(values).astype(np.int32)

    def combine(self, groups: list[tuple[Group, float]]) -> tuple[np.ndarray, np.ndarray]:
        """Documents matching any group and their weighted mean confidence over the given groups."""
        weight = sum(w for _, w in groups)
        if not groups or weight <= 0:
            return np.zeros(0, dtype=np.int32), np.zeros(0)
        if len(groups) == 1:
            (docs, values), w = groups[0]
            return docs, values * (w / weight)
        total = self._scratch()
        touched = []
        for (docs, values), w in groups:
            total[docs] += values * w
            touched.append(docs)
        docs = self._union(touched, total)
        scores = total[docs] / weight
        total[docs] = 0.0
        return docs, scores

    @staticmethod
    def as_groups(query: str | list[str] | list[list[str]]) -> list[list[str]]:
        """Text, a list of words, or a list of word groups, as distinct word groups."""
        if isinstance(query, str):
            raw = [[w] for w in analyzer.analyze(query)]  # the build's analyzer, looked up at call time
        else:
            raw = [[g] if isinstance(g, str) else list(g) for g in query]
        found: list[list[str]] = []
        for g in raw:
            if g and g not in found:
                found.append(g)
        return found

    def scored(self, query: str | list[str] | list[list[str]], *,
               prefix: bool = True) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
        """(documents, scores, the groups that matched nothing) for a query."""
        matched, unmatched = [], []
        for g in self.as_groups(query):
            result = self.group(g, prefix=prefix)
            (matched.append((result, 1.0)) if len(result[0]) else unmatched.append(g))
        docs, scores = self.combine(matched)
        return docs, scores, unmatched

    def search(self, query: str | list[str] | list[list[str]]) -> list[Hit]:
        """All matching documents, best first."""
        return self.top(query, None)[0]

    def top(self, query: str | list[str] | list[list[str]], limit: int | None) -> tuple[list[Hit], int]:
        """The best `limit` matches (all when None) and the number of all matches."""
        docs, scores, _ = self.scored(query)
        return self.ranked(docs, scores, limit), len(docs)

    def ranked(self, docs: np.ndarray, scores: np.ndarray, limit: int | None,
               tiers: np.ndarray | None = None) -> list[Hit]:
        """Hits for documents and their scores: best score first, ties in title order (shorter, then
        alphabetical); with `tiers` (small integers), a higher tier first. The best `limit` are chosen
        by a partition over one integer key per document."""
        if len(docs) == 0:
            return []
        n = len(self.docs)
        key = np.round(scores * 10 ** SCORE_DIGITS).astype(np.int64) * n + (n - 1 - self.order[docs])
        if tiers is not None:
            key += tiers.astype(np.int64) * (10 ** SCORE_DIGITS + 1) * n
        if limit is not None and len(docs) > limit:
            keep = np.argpartition(key, len(docs) - limit)[len(docs) - limit:]
            docs, scores, key = docs[keep], scores[keep], key[keep]
        best = np.argsort(-key, kind="stable")
        if limit is not None:
            best = best[:limit]
        return [self.hit(int(docs[i]), float(scores[i])) for i in best]

    def hit(self, doc: int, score: float) -> Hit:
        slug, title, meaning, url = self.docs[doc]
        return Hit(doc, slug, title, meaning, url, round(min(1.0, max(0.0, score)), 3))

    # -- did you mean ----------------------------------------------------------------------------

    def suggest(self, text: str, limit: int = SUGGESTIONS) -> list[Hit]:
        """Titles near the words of a query that found nothing (typos of up to two edits, three for
        long words, any first letter of the same bucket), nearest first; at most FUZZY_SCAN compared."""
        found: dict[int, float] = {}
        folded = " ".join(words(text))
        for term in dict.fromkeys([folded, *words(text)]):
            if len(term) < 3:
                continue
            cutoff = 1 if len(term) < 5 else 2 if len(term) < 10 else 3
            candidates = self.titles_by_initial.get(term[0], [])[:FUZZY_SCAN]
            for title, distance, _ in extract(term, candidates, scorer=OSA.distance, score_cutoff=cutoff,
                                              limit=limit):
                for doc in self.title_docs[title]:
                    score = 1.0 - distance / max(len(term), len(title))
                    found[doc] = max(found.get(doc, 0.0), score)
        if not found:
            return []
        docs = np.fromiter(found, dtype=np.int32, count=len(found))
        return self.ranked(docs, np.fromiter(found.values(), dtype=np.float64, count=len(found)), limit)

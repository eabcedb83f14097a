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
from collections.abc import Callable, Iterable, Iterator
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
HEAD = 64  # a top-k query first ranks the best HEAD documents of each long posting list (impact order) …
HEAD_GROWTH = 8  # … and, while it cannot prove that nothing outside them ranks higher, 8 times as many …
MAX_HEAD = 4096  # … up to this many: beyond it, the top is chosen among these (a cap that rarely applies)
MAX_CANDIDATES = 8192  # … and to this many over all of a query's long lists (a query of many common words)
DENSE_SHARE = 32  # posting lists longer than 1/32 of the documents keep a bitmap for counting matches
SUGGESTIONS = 5  # "did you mean" titles, at most
SCORE_DIGITS = 4  # scores are compared at this precision; ties go to the engine's title order

# The ranking constants the page's search script (petgen/templates/search.js) reads from /search/index.json.
SCORING = {"field_confidence": [list(point) for point in FIELD_CONFIDENCE], "prefix": [PREFIX_BASE, PREFIX_COVERAGE],
           "prefix_fanout": PREFIX_FANOUT, "short_prefix": SHORT_PREFIX, "prefix_scan": PREFIX_SCAN, "typo_matches": FUZZY_MATCHES,
           "score_digits": SCORE_DIGITS}

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


class Posting:
    """One posting list: documents ascending with their field confidence; a long list also has its documents
    in impact order (confidence descending, then title order) and, when it is very long, a bitmap."""

    __slots__ = ("docs", "conf", "impact", "levels", "bits")

    def __init__(self, docs: np.ndarray, conf: np.ndarray) -> None:
        self.docs, self.conf = docs, conf
        self.impact: np.ndarray | None = None  # docs, best first (only for lists longer than HEAD)
        self.levels: list[tuple[int, float]] = []  # (end in `impact`, confidence of the entries before it)
        self.bits: np.ndarray | None = None  # membership bitmap over all documents, 64 per word

    def __len__(self) -> int:
        return len(self.docs)

    def rank(self, order: np.ndarray, documents: int) -> None:
        """Prepare the impact order (and the bitmap) once the index knows every document's title order."""
        if len(self.docs) > HEAD:
            perm = np.lexsort((order[self.docs], -self.conf))
            self.impact = self.docs[perm]
            ranked = self.conf[perm]
            ends = np.flatnonzero(np.diff(ranked)) + 1
            self.levels = [(int(end), float(ranked[end - 1])) for end in [*ends, len(ranked)]]
        if len(self.docs) * DENSE_SHARE > documents:
            mask = np.zeros((documents + 63) // 64 * 64, dtype=bool)
            mask[self.docs] = True
            self.bits = np.packbits(mask, bitorder="little").view(np.uint64)

    def best(self) -> float:
        """The highest confidence in the list."""
        return self.levels[0][1] if self.levels else float(self.conf.max())

    def confidence_at(self, position: int) -> float:
        """The confidence of the entry at `position` in impact order."""
        for end, value in self.levels:
            if position < end:
                return value
        return 0.0

    def tail_values(self, position: int) -> list[float]:
        """The confidences the entries from `position` on (in impact order) can have."""
        return [value for end, value in self.levels if end > position]


Source = tuple[Posting, float, float]  # a posting list with its match quality and its alternative's step
Weighted = tuple[list[Source], float, bool]  # a group's lists, its share of the score, whether it leads (see proven_top)
Scorer = Callable[[np.ndarray, list[np.ndarray]], tuple[np.ndarray, np.ndarray | None]]  # candidates, values -> scores, kept


@dataclass
class SearchIndex:
    """The index loaded for querying."""

    docs: list[list[str]]
    stems: dict[str, Posting]
    words: dict[str, Posting]
    parts: dict[str, Posting]
    vocabulary: list[str] = field(default_factory=list)
    short_prefixes: dict[str, list[str]] = field(default_factory=dict)
    by_shape: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # (first letter, length) -> words
    titles_by_shape: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # folded titles, as by_shape
    title_docs: dict[str, list[int]] = field(default_factory=dict)
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # tie-break rank per doc
    named: dict[Any, tuple[np.ndarray, Posting]] = field(default_factory=dict)  # see `posting_of`
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def from_shards(cls, docs: list[list[str]], shards: Iterable[dict[str, Any]]) -> SearchIndex:
        index = cls(docs=docs, stems={}, words={}, parts={})
        for data in shards:
            for kind in ("stems", "words", "parts"):
                target = getattr(index, kind)
                for term, (term_docs, weights) in data[kind].items():
                    target[term] = Posting(np.asarray(term_docs, dtype=np.int32), confidence(weights))
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
                    index.titles_by_shape.setdefault((folded[0], len(folded)), []).append(folded)
                index.title_docs.setdefault(folded, []).append(doc)
        ranked = sorted(range(len(docs)), key=lambda d: (len(docs[d][1]), collation_key(docs[d][1])))
        index.order = np.empty(len(docs), dtype=np.int64)
        index.order[ranked] = np.arange(len(docs))
        for kind in (index.stems, index.words, index.parts):
            for posting in kind.values():
                posting.rank(index.order, len(docs))
        return index

    @classmethod
    def from_index(cls, index: dict[str, Any]) -> SearchIndex:
        return cls.from_shards(index["docs"], shard(index).values())

    def posting_of(self, key: Any, make: Callable[[], np.ndarray]) -> tuple[np.ndarray, Posting]:
        """A value in 0..1 per document (from `make`, once per `key`: a filter such as a facet or category)
        and the same as a posting list in impact order, so that `proven_top` can rank and bound by it."""
        found = self.named.get(key)
        if found is None:
            values = make()
            docs = np.flatnonzero(values).astype(np.int32)
            posting = Posting(docs, values[docs].astype(np.float64))
            posting.rank(self.order, len(self.docs))
            found = self.named[key] = (values, posting)
        return found

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

    @staticmethod
    def nearby(buckets: dict[tuple[str, int], list[str]], word: str, distance: int) -> list[str]:
        """Strings of `buckets` with the first letter of `word` and a length within `distance` (no string
        further in length can be that near), at most FUZZY_SCAN, the closest lengths first."""
        found: list[str] = []
        for delta in sorted(range(-distance, distance + 1), key=abs):
            found.extend(buckets.get((word[0], len(word) + delta), ()))
            if len(found) >= FUZZY_SCAN:
                return found[:FUZZY_SCAN]
        return found

    def fuzzy_candidates(self, word: str, distance: int) -> list[str]:
        """Indexed words with the same first letter and a length within `distance`, at most FUZZY_SCAN,
        the closest lengths first."""
        return self.nearby(self.by_shape, word, distance)

    def typos(self, word: str) -> list[tuple[str, int]]:
        """Indexed words within 1 edit (4+ letters) or 2 edits (8+ letters), same first letter, at most
        FUZZY_MATCHES (nearest first); none for a word that is itself indexed."""
        if len(word) < 4 or word in self.words:
            return []
        limit = 2 if len(word) >= 8 else 1
        matches = extract(word, self.fuzzy_candidates(word, limit), scorer=OSA.distance, score_cutoff=limit,
                          limit=FUZZY_MATCHES)
        return [(found, int(distance)) for found, distance, _ in matches if distance > 0]

    def postings(self, word: str, *, prefix: bool = True) -> Iterator[tuple[Posting, float]]:
        """Every posting list one query word matches, with the quality of the match (its confidence factor)."""
        for stem in stems(word):
            if stem in self.stems:
                yield self.stems[stem], MATCH["stem"]
        if word in self.words:
            yield self.words[word], 1.0
        for term in {word, *stems(word)}:
            if term in self.parts:
                yield self.parts[term], MATCH["compound"]
        if prefix and len(word) >= 2:
            for completion in self.completions(word):
                yield self.words[completion], PREFIX_BASE + PREFIX_COVERAGE * len(word) / len(completion)
        for found, distance in self.typos(word):
            yield self.words[found], MATCH["typo1" if distance == 1 else "typo2"]

    def sources(self, group: list[str], *, prefix: bool = True) -> list[Source]:
        """The posting lists of one word group, each with its match quality and its alternative's factor
        (the first alternative is preferred: each later one counts ALTERNATIVE_STEP less)."""
        return [(posting, match, 1.0 - ALTERNATIVE_STEP * position)
                for position, word in enumerate(group) for posting, match in self.postings(word, prefix=prefix)]

    # -- scoring -------------------------------------------------------------------------------

    def _scratch(self) -> np.ndarray:
        """A zeroed array over all documents, one per thread, zeroed again after each use."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None or len(scratch) != len(self.docs):
            scratch = self._local.scratch = np.zeros(len(self.docs))
        return scratch

    def group(self, group: list[str], *, prefix: bool = True) -> Group:
        """The documents one word group matches and their best confidence (0..1)."""
        return self.group_of(self.sources(group, prefix=prefix))

    def group_of(self, sources: list[Source]) -> Group:
        """Every document of the posting lists and its best confidence among them."""
        if not sources:
            return np.zeros(0, dtype=np.int32), np.zeros(0)
        if len(sources) == 1:
            posting, match, step = sources[0]
            return posting.docs, posting.conf * match * step
        best = self._scratch()
        touched: list[np.ndarray] = []
        for posting, match, step in sources:
            docs, conf = posting.docs, posting.conf * match * step
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

    def matched(self, query: str | list[str] | list[list[str]], *,
                prefix: bool = True) -> tuple[list[list[Source]], list[list[str]]]:
        """The posting lists of each word group that matches anything, and the groups that match nothing."""
        matched, unmatched = [], []
        for g in self.as_groups(query):
            found = self.sources(g, prefix=prefix)
            (matched.append(found) if found else unmatched.append(g))
        return matched, unmatched

    def scored(self, query: str | list[str] | list[list[str]], *,
               prefix: bool = True) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
        """(documents, scores, the groups that matched nothing) for a query: every match scored."""
        matched, unmatched = self.matched(query, prefix=prefix)
        docs, scores = self.combine([(self.group_of(sources), 1.0) for sources in matched])
        return docs, scores, unmatched

    def search(self, query: str | list[str] | list[list[str]]) -> list[Hit]:
        """All matching documents, best first."""
        return self.top(query, None)[0]

    def top(self, query: str | list[str] | list[list[str]], limit: int | None) -> tuple[list[Hit], int]:
        """The best `limit` matches (all when None) and the number of all matches. A query whose posting
        lists are all short is scored in full; otherwise `bounded_top` ranks the heads of the long lists."""
        matched, _ = self.matched(query)
        if limit is not None and any(len(posting) > HEAD for sources in matched for posting, _, _ in sources):
            return self.bounded_top(matched, limit), self.count(matched)
        docs, scores = self.combine([(self.group_of(sources), 1.0) for sources in matched])
        return self.ranked(docs, scores, limit), len(docs)

    def count(self, groups: list[list[Source]]) -> int:
        """How many documents match any posting list: very long lists as bitmaps OR-ed together, the
        others' documents checked against that bitmap."""
        postings = [posting for sources in groups for posting, _, _ in sources]
        dense = [p.bits for p in postings if p.bits is not None]
        sparse = [p.docs for p in postings if p.bits is None]
        if not dense:
            return len(sparse[0]) if len(sparse) == 1 else len(np.unique(np.concatenate(sparse)))
        bits = dense[0].copy()
        for more in dense[1:]:
            bits |= more
        total = int(np.bitwise_count(bits).sum())
        if sparse:
            docs = np.concatenate(sparse)
            inside = (bits[docs >> 6] >> (docs & 63).astype(np.uint64)) & np.uint64(1)
            total += len(np.unique(docs[inside == 0]))
        return total

    def bounded_top(self, groups: list[list[Source]], limit: int) -> list[Hit]:
        """The best `limit` documents, looking only at the first `head` documents of each long posting list in
        impact order (all of a short one) and proving that no other document could rank higher.

        A document outside those heads scores at most the mean over the groups of the best confidence left
        in a group's lists (`bound`). If the `limit`-th candidate's ranking key (rounded score, then title
        order) beats the best key such a document could have, the answer is exact; otherwise the heads grow
        by HEAD_GROWTH, to MAX_HEAD at most and MAX_CANDIDATES over all long lists together (`head_cap`: then the
        best among those candidates are answered).
        """
        head, cap = max(HEAD, 4 * limit), self.head_cap(groups)
        while True:
            exact, hits = self._top_of_heads(groups, limit, head)
            if exact or head >= cap:
                return hits
            head = min(head * HEAD_GROWTH, cap)

    @staticmethod
    def head_cap(groups: list[list[Source]]) -> int:
        """How far the heads of a query's long lists may grow: MAX_HEAD each, and MAX_CANDIDATES over all of
        them (a query with many long lists grows each less), never below HEAD."""
        long = sum(1 for sources in groups for posting, _, _ in sources if posting.impact is not None)
        return max(HEAD, min(MAX_HEAD, MAX_CANDIDATES // max(1, long)))

    def _top_of_heads(self, groups: list[list[Source]], limit: int, head: int) -> tuple[bool, list[Hit]]:
        share = 1.0 / len(groups)

        def mean(candidates: np.ndarray, values: list[np.ndarray]) -> tuple[np.ndarray, None]:
            scores = np.zeros(len(candidates))
            for found in values:
                scores += found
            return scores / len(groups), None

        exact, docs, scores = self.proven_top([(sources, share, True) for sources in groups], limit, head, mean)
        return exact, self.ranked(docs, scores, limit)

    def proven_top(self, groups: list[Weighted], limit: int, head: int, score: Scorer
                   ) -> tuple[bool, np.ndarray, np.ndarray]:
        """Candidates from the first `head` documents (impact order) of each long list of the leading groups (all
        of a short one), their scores by `score` (which may also drop candidates: a filter), and whether that is
        proven to hold the best `limit` documents of all.

        `score` must not give any document more than the sum over the groups of share × the document's value in
        the group. A document outside the heads then scores at most that sum with the best value left in each
        group (`bound`). If the `limit`-th kept candidate's ranking key (rounded score, then title order) beats
        the best key such a document could have, the answer is exact.
        """
        leading = [sources for sources, _, lead in groups if lead]
        pieces = [posting.docs if posting.impact is None or len(posting) <= head else posting.impact[:head]
                  for sources in leading for posting, _, _ in sources]
        candidates = np.unique(np.concatenate(pieces)) if pieces else np.zeros(0, dtype=np.int32)
        scores, kept = score(candidates, [self._values_at(sources, candidates, head) for sources, _, _ in groups])
        if kept is not None:
            candidates, scores = candidates[kept], scores[kept]
        bound, gap, first_left, whole = 0.0, np.inf, 0, True
        for sources, share, lead in groups:
            left = self._left(sources, head if lead else 0, lead)
            if left is None:
                continue
            best, below, first = left
            whole = False
            bound += share * best
            gap = min(gap, share * (best - below))
            first_left = max(first_left, first)
        if whole:  # every list was taken whole
            return True, candidates, scores
        if len(candidates) < limit:
            return False, candidates, scores
        n = len(self.docs)
        unit = 10 ** SCORE_DIGITS
        key = np.round(scores * unit).astype(np.int64) * n + (n - 1 - self.order[candidates])
        kth = int(np.partition(key, len(key) - limit)[len(key) - limit])
        top_score = int(np.round((bound + 1e-9) * unit))
        below_score = int(np.round((bound - gap + 1e-9) * unit))
        # Scoring exactly `bound` needs the best value left in every group, which in each group only documents at
        # or after its first such document in title order have; any other outside document rounds lower (when
        # `gap` shows it).
        best_outside = top_score * n + (n - 1 - (first_left if below_score < top_score else 0))
        return kth >= best_outside, candidates, scores

    def _left(self, sources: list[Source], head: int, lead: bool) -> tuple[float, float, int] | None:
        """For documents outside the first `head` (impact order) of a group's lists: the best value one can have
        in the group, the next lower value, and the first title order a document with the best value can have.
        A leading group's short lists are taken whole (their documents are candidates): nothing is left."""
        levels: list[tuple[float, list[float], int]] = []  # per list: best left, lower values, first order
        for posting, match, step in sources:
            factor = match * step
            if posting.impact is not None and len(posting) > head:
                values = [v * factor for v in posting.tail_values(head)]
                levels.append((values[0], values[1:], int(self.order[posting.impact[head]])))
            elif not lead and len(posting):
                values = sorted({float(v) * factor for v in posting.conf}, reverse=True)
                top = posting.docs[posting.conf * factor == values[0]]
                levels.append((values[0], values[1:], int(self.order[top].min())))
        if not levels:
            return None
        best = max(level[0] for level in levels)
        lower = [v for first, rest, _ in levels for v in (first, *rest) if v < best]
        return best, max(lower, default=0.0), min(order for first, _, order in levels if first == best)

    def _values_at(self, sources: list[Source], candidates: np.ndarray, head: int) -> np.ndarray:
        """One group's best confidence for each candidate: a list no longer than a few times the candidates is
        scattered whole over the documents, a longer one probed for each candidate (binary search)."""
        values = np.zeros(len(candidates))
        best, touched = self._scratch(), []
        for posting, match, step in sources:
            docs = posting.docs
            if len(posting) <= max(head, 4 * len(candidates)):
                current = best[docs]
                np.maximum(current, posting.conf * match * step, out=current)
                best[docs] = current
                touched.append(docs)
            else:
                at = np.minimum(np.searchsorted(docs, candidates), len(docs) - 1)
                found = docs[at] == candidates
                np.maximum(values, np.where(found, posting.conf[at] * match * step, 0.0), out=values)
        if touched:
            np.maximum(values, best[candidates], out=values)
            for docs in touched:
                best[docs] = 0.0
        return values

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
        long words; same first letter, a length within the distance), nearest first; at most FUZZY_SCAN
        compared per word."""
        found: dict[int, float] = {}
        folded = " ".join(words(text))
        for term in dict.fromkeys([folded, *words(text)]):
            if len(term) < 3:
                continue
            cutoff = 1 if len(term) < 5 else 2 if len(term) < 10 else 3
            candidates = self.nearby(self.titles_by_shape, term, cutoff)
            for title, distance, _ in extract(term, candidates, scorer=OSA.distance, score_cutoff=cutoff,
                                              limit=limit):
                for doc in self.title_docs[title]:
                    score = 1.0 - distance / max(len(term), len(title))
                    found[doc] = max(found.get(doc, 0.0), score)
        if not found:
            return []
        docs = np.fromiter(found, dtype=np.int32, count=len(found))
        return self.ranked(docs, np.fromiter(found.values(), dtype=np.float64, count=len(found)), limit)

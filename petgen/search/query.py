"""The query side of the search engine: the loaded index, confidences in 0..1, bounded cost.

The build writes the index as one pack file of flat arrays (petgen/search/pack.py, besides the JSON
shards for browsers); a `SearchIndex` maps that file and reads the arrays in place: a term is found
by its hash, a prefix's completions by binary search over the sorted words, and a posting list is a
set of views into the file, made when a query needs it. A query is a list of word groups (the words
of a group are alternatives for one concept and count once).

**Confidence.** Every match of a query word in a document has a confidence in 0..1:
`field × match`, with field title 1.0, variants 0.9, keywords 0.8, meaning 0.45, and match whole
word 1.0, stem 0.9, compound part 0.65, prefix 0.5 + 0.4 × (typed letters ÷ letters of the word),
one typo 0.6, two typos 0.5. A group counts its best match (each later alternative 2 % less); a
document's score is the mean over the query's groups that match anything at all (a group that
matches nothing is left out and reported). So 1.0 means every word named the title itself, and
the figure means the same whatever the query.

**Bounded cost** (the caps, tested in tests/petgen/test_search.py):
- a prefix expands to at most `PREFIX_FANOUT` indexed words, the shortest first (precomputed for
  prefixes of up to `SHORT_PREFIX` letters; a longer prefix looks at most at `PREFIX_SCAN` words), and the
  words of one query share `QUERY_COMPLETIONS`: when n of its words are expanded as prefixes, each keeps
  its first `prefix_share(n)` = min(PREFIX_FANOUT, QUERY_COMPLETIONS // n) completions (a query of up to
  four words is not affected; twenty words keep six each);
- typos are looked for only when the word itself is not indexed, among at most `FUZZY_SCAN`
  candidates (same first letter, length within the edit distance) and keep the `FUZZY_MATCHES` nearest;
- each query word costs at most its postings, and the best `limit` are selected without scoring or sorting
  all matches (petgen/search/topk.py: MaxScore over word groups, then heads of the long lists in impact
  order, each with its caps).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz.distance import OSA
from rapidfuzz.process import extract

from petgen.search import index as analyzer
from petgen.search.index import QUALITY, stems, words
from petgen.search.packfile import Pack
from petgen.search.scoring import (
    FUZZY_MATCHES,
    PREFIX_BASE,
    PREFIX_COVERAGE,
    PREFIX_FANOUT,
    PREFIX_SCAN,
    QUERY_COMPLETIONS,
    SHORT_PREFIX,
)
from petgen.search.sets import count, positive, union
from petgen.search.stored import (
    FILTER_VALUES_KEPT,
    HEAD,
    PART,
    POSTINGS_KEPT,
    STEM,
    WORD,
    Buckets,
    Posting,
    Recent,
    _Arrays,
    letter_set,
    within,
)
from petgen.search.topk import SCORE_DIGITS, Group, Source, TopK

MATCH = QUALITY  # whole word, stem, compound part, one and two typos (prefix: below)
ALTERNATIVE_STEP = 0.02  # in a word group, each later alternative counts 2 % less than the one before
FUZZY_SCAN = 3000  # typo candidates compared per query word, at most
NEAR_FILTER = 64  # typo candidates of one length are filtered by their characters when there are more than this
SUGGESTIONS = 5  # "did you mean" titles, at most
SHORT_LISTS = 64  # a word group whose lists hold fewer postings than this on average is merged by one sort



def prefix_share(words: int) -> int:
    """How many completions each word of a query keeps when `words` of its words are expanded as prefixes: the
    query's QUERY_COMPLETIONS shared out, PREFIX_FANOUT at most (0 for a query of more words than that)."""
    return min(PREFIX_FANOUT, QUERY_COMPLETIONS // max(1, words))


def prefix_words(groups: list[list[str]]) -> int:
    """How many words of some word groups a query expands as prefixes (those of two letters or more)."""
    return sum(1 for group in groups for word in group if len(word) >= 2)


@dataclass
class Hit:
    doc: int
    slug: str
    title: str
    meaning: str
    url: str
    score: float



class SearchIndex(TopK):
    """The index loaded for querying: the arrays of a pack file (petgen/search/pack.py), mapped or in memory."""

    def __init__(self, pack: Pack) -> None:
        self.arrays = _Arrays(pack)
        self.docs = self.arrays.docs
        self.order = self.arrays.order  # tie-break rank per document (title order)
        self.named = Recent(FILTER_VALUES_KEPT)  # filters used most recently, weighed by their documents: see `posting_of`
        self.recent = Recent(POSTINGS_KEPT)  # the posting lists read most recently, weighed by their length
        self.near = {shapes: Buckets(self.arrays, shapes) for shapes in ("shape", "title")}  # see `_nearby`
        self._local = threading.local()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SearchIndex:
        """Map a pack file written by `petgen build` (the mapping stays valid if the build is swapped out)."""
        return cls(Pack.open(path))

    @classmethod
    def from_index(cls, index: dict[str, Any]) -> SearchIndex:
        """The engine over an index of `petgen.search.index.build_index`, packed in memory (tests, tools)."""
        from petgen.search.pack import pack_index  # the build side, which imports this module

        return cls(Pack(pack_index(index)))

    def matches_exactly(self, word: str) -> bool:
        """Whether `word` matches some entry as itself, by stem or as a compound part (not only as a prefix or typo)."""
        terms = self.arrays.terms
        if self.knows(word) or self._posting(PART, terms.find(word)) is not None:
            return True
        return any(self._posting(STEM, terms.find(stem)) is not None for stem in stems(word))

    def knows(self, word: str) -> bool:
        """Whether `word` is a word of some entry (not only a stem or a compound part)."""
        return self._posting(WORD, self.arrays.terms.find(word)) is not None

    def posting(self, kind: int, term: str) -> Posting | None:
        """The posting list of `term` as a stem, a word or a compound part (STEM, WORD, PART), or None."""
        t = self.arrays.terms.find(term)
        return self._posting(kind, t) if t >= 0 else None

    def _posting(self, kind: int, t: int) -> Posting | None:
        if t < 0:
            return None
        arrays = self.arrays
        p = int(arrays.term_posting[kind * len(arrays.terms) + t])
        if p < 0:
            return None
        found = self.recent.get(p)
        if found is None:
            found = Posting.stored(arrays, p)
            self.recent.put(p, found, len(found))
        return found

    def posting_of(self, key: Any, make: Callable[[], np.ndarray]) -> tuple[np.ndarray, Posting]:
        """A value in 0..1 per document (from `make`, once per `key`: a filter such as a facet or category)
        and the same as a posting list in impact order, so that `proven_top` can rank and bound by it. Kept for
        the next query with the same key, least recently used out: a key may hold words of a question (an
        exclusion), so their number is unbounded, their memory is not (FILTER_VALUES_KEPT values)."""
        found = self.named.get(key)
        if found is None:
            values = make()
            docs = np.flatnonzero(values).astype(np.int32)
            posting = Posting(docs, values[docs].astype(np.float64))
            posting.rank(self.order, len(self.docs))
            posting.dense = np.asarray(values, dtype=np.float64)  # looked up at candidates, not searched (`_values_at`)
            found = self.named.put(key, (values, posting), len(values))
        return found

    # -- expansion, each bounded --------------------------------------------------------------

    def completions(self, prefix: str) -> list[str]:
        """Indexed words that start with `prefix` (not the prefix itself), at most PREFIX_FANOUT, shortest first."""
        return [self.arrays.terms[t] for t in self._completions(prefix)]

    def _completions(self, prefix: str) -> list[int]:
        """`completions` as term numbers: the PREFIX_FANOUT shortest words of those starting with `prefix`
        (then in alphabetical order); for a prefix longer than SHORT_PREFIX, of the first PREFIX_SCAN words
        from the prefix on in alphabetical order."""
        arrays = self.arrays
        if len(prefix) <= SHORT_PREFIX:
            p = arrays.prefixes.find(prefix)
            found = arrays.prefix_items[arrays.prefix_start[p]:arrays.prefix_start[p + 1]].tolist() if p >= 0 else []
        else:
            raw = prefix.encode()
            terms, vocabulary = arrays.terms, arrays.vocabulary_at
            lo, hi = 0, len(vocabulary)
            while lo < hi:  # the first word not before the prefix
                mid = (lo + hi) // 2
                if terms.raw(vocabulary[mid]) < raw:
                    lo = mid + 1
                else:
                    hi = mid
            start, hi = lo, min(lo + PREFIX_SCAN, len(vocabulary))
            if lo < hi and not terms.raw(vocabulary[lo]).startswith(raw):
                hi = lo  # no word starts with it
            while lo < hi:  # the words that start with it follow one another: find the first that does not
                mid = (lo + hi) // 2
                if terms.raw(vocabulary[mid]).startswith(raw):
                    lo = mid + 1
                else:
                    hi = mid
            ids = arrays.vocabulary[start:lo]
            found = ids[np.lexsort((ids, arrays.term_chars[ids]))[:PREFIX_FANOUT + 1]].tolist()
        own = arrays.terms.find(prefix) if found else -1
        return [t for t in found if t != own][:PREFIX_FANOUT]

    def _nearby(self, shapes: str, word: str, distance: int, *, near: bool = False) -> tuple[list[str], np.ndarray]:
        """Strings of one kind (`shape`: indexed words, `title`: folded titles) with the first letter of `word`
        and a length within `distance` (no string further in length can be that near), at most FUZZY_SCAN,
        the closest lengths first; with their numbers (terms, titles). With `near`, of a bucket (one length) of more
        than NEAR_FILTER strings only those whose characters allow `distance` edits (`stored.within`), in the same
        order (a smaller bucket is compared whole: filtering it costs more than comparing the few it would drop)."""
        buckets = self.near[shapes]
        found: list[str] = []
        ids: list[np.ndarray] = []
        left, own = FUZZY_SCAN, letter_set(word)
        for delta in sorted(range(-distance, distance + 1), key=abs):
            b = buckets.find(word[0], len(word) + delta) if len(word) + delta >= 0 else -1
            if b < 0:
                continue
            strings, items, sets = buckets[b]
            take = min(len(strings), left)
            if near and take > NEAR_FILTER:
                keep = np.flatnonzero(within(sets[:take], own, distance))
                found.extend([strings[i] for i in keep.tolist()])
                ids.append(items[:take][keep])
            else:
                found.extend(strings[:take])
                ids.append(items[:take])
            left -= take
            if left <= 0:
                break
        return found, np.concatenate(ids) if ids else np.zeros(0, dtype=np.int32)

    def fuzzy_candidates(self, word: str, distance: int) -> list[str]:
        """Indexed words with the same first letter and a length within `distance`, at most FUZZY_SCAN,
        the closest lengths first."""
        return self._nearby("shape", word, distance)[0]

    def typos(self, word: str) -> list[tuple[str, int]]:
        """Indexed words within 1 edit (4+ letters) or 2 edits (8+ letters), same first letter, at most
        FUZZY_MATCHES (nearest first); none for a word that is itself indexed."""
        return [(found, distance) for found, _, distance in self._typos(word)]

    def _typos(self, word: str, own: int | None = None) -> list[tuple[str, int, int]]:
        """`typos` with each word's term number (`own`: the word's own term number, if looked up already)."""
        if len(word) < 4:
            return []
        own = self.arrays.terms.find(word) if own is None else own
        if own >= 0 and self.arrays.term_posting[WORD * len(self.arrays.terms) + own] >= 0:
            return []
        limit = 2 if len(word) >= 8 else 1
        candidates, ids = self._nearby("shape", word, limit, near=True)
        matches = extract(word, candidates, scorer=OSA.distance, score_cutoff=limit, limit=FUZZY_MATCHES)
        return [(found, int(ids[at]), int(distance)) for found, distance, at in matches if distance > 0]

    def postings(self, word: str, *, prefix: bool = True, fanout: int = PREFIX_FANOUT,
                 typos: bool = True) -> Iterator[tuple[Posting, float]]:
        """Every posting list one query word matches, with the quality of the match (its confidence factor): the
        first `fanout` of its completions (`prefix_share`), and its typos unless it is known to be spelt right."""
        terms = self.arrays.terms
        own = terms.find(word)
        word_stems = stems(word)
        for stem in word_stems:
            found = self._posting(STEM, own if stem == word else terms.find(stem))
            if found is not None:
                yield found, MATCH["stem"]
        found = self._posting(WORD, own)
        if found is not None:
            yield found, 1.0
        for term in {word, *word_stems}:
            found = self._posting(PART, own if term == word else terms.find(term))
            if found is not None:
                yield found, MATCH["compound"]
        if prefix and len(word) >= 2 and fanout > 0:
            chars = self.arrays.term_chars
            for t in self._completions(word)[:fanout]:
                yield self._posting(WORD, t), PREFIX_BASE + PREFIX_COVERAGE * len(word) / int(chars[t])
        for _, t, distance in self._typos(word, own) if typos else ():
            yield self._posting(WORD, t), MATCH["typo1" if distance == 1 else "typo2"]

    def sources(self, group: list[str], *, prefix: bool = True, fanout: int = PREFIX_FANOUT, typos: bool = True) -> list[Source]:
        """The posting lists of one word group, each with its match quality and its alternative's factor
        (the first alternative is preferred: each later one counts ALTERNATIVE_STEP less); each word's first
        `fanout` completions and its typos (see `postings`)."""
        return [(posting, match, 1.0 - ALTERNATIVE_STEP * position) for position, word in enumerate(group)
                for posting, match in self.postings(word, prefix=prefix, fanout=fanout, typos=typos)]

    # -- scoring -------------------------------------------------------------------------------

    def _scratch(self) -> np.ndarray:
        """A zeroed array over all documents, one per thread, zeroed again after each use."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None or len(scratch) != len(self.docs):
            scratch = self._local.scratch = np.zeros(len(self.docs))
        return scratch

    def group(self, group: list[str], *, prefix: bool = True) -> Group:
        """The documents one word group matches and their best confidence (0..1)."""
        return self.group_of(self.sources(group, prefix=prefix, fanout=prefix_share(prefix_words([group]))))

    def group_of(self, sources: list[Source]) -> Group:
        """Every document of the posting lists and its best confidence among them."""
        if not sources:
            return np.zeros(0, dtype=np.int32), np.zeros(0)
        if len(sources) == 1:
            posting, match, step = sources[0]
            return posting.docs, posting.conf * match * step
        sizes = [len(posting) for posting, _, _ in sources]
        total = sum(sizes)
        # Few postings (against the documents, or per list: many short lists, as a prefix brings): one sort and
        # one reduction over all of them, instead of four array operations per list.
        if total * 8 < len(self.docs) or total < SHORT_LISTS * len(sources):
            docs = np.concatenate([posting.docs for posting, _, _ in sources])
            conf = (np.concatenate([posting.conf for posting, _, _ in sources])
                    * np.repeat([match for _, match, _ in sources], sizes) * np.repeat([step for _, _, step in sources], sizes))
            order = np.argsort(docs, kind="stable")
            docs, conf = docs[order], conf[order]
            starts = np.flatnonzero(np.diff(docs) != 0) + 1
            starts = np.concatenate(([0], starts)) if len(docs) else starts
            return docs[starts], np.maximum.reduceat(conf, starts) if len(docs) else conf
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
        docs = positive(best)
        values = best[docs]
        best[docs] = 0.0
        return docs, values

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
        docs = union(touched, total)
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
        """The posting lists of each word group that matches anything, and the groups that match nothing; the
        query's words share QUERY_COMPLETIONS completions (`prefix_share`)."""
        matched, unmatched = [], []
        groups = self.as_groups(query)
        fanout = prefix_share(prefix_words(groups))
        for g in groups:
            found = self.sources(g, prefix=prefix, fanout=fanout)
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
            return self.bounded_top(matched, limit), count(matched)
        docs, scores = self.combine([(self.group_of(sources), 1.0) for sources in matched])
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
        long words; same first letter, a length within the distance), nearest first; at most FUZZY_SCAN
        compared per word."""
        found: dict[int, float] = {}
        folded = " ".join(words(text))
        arrays = self.arrays
        for term in dict.fromkeys([folded, *words(text)]):
            if len(term) < 3:
                continue
            cutoff = 1 if len(term) < 5 else 2 if len(term) < 10 else 3
            candidates, ids = self._nearby("title", term, cutoff, near=True)
            for title, distance, at in extract(term, candidates, scorer=OSA.distance, score_cutoff=cutoff,
                                               limit=limit):
                t = int(ids[at])
                for doc in arrays.title_docs_items[arrays.title_docs_start[t]:arrays.title_docs_start[t + 1]].tolist():
                    score = 1.0 - distance / max(len(term), len(title))
                    found[doc] = max(found.get(doc, 0.0), score)
        if not found:
            return []
        docs = np.fromiter(found, dtype=np.int32, count=len(found))
        return self.ranked(docs, np.fromiter(found.values(), dtype=np.float64, count=len(found)), limit)

"""A brute-force reading of the engine's documented rules (petgen/search/query.py), for tests: straight from
`build_index`'s postings, every document scored, no pack file, no heads, no bounds. Slow and simple."""

from __future__ import annotations

import bisect
from typing import Any

from rapidfuzz.distance import OSA
from rapidfuzz.process import extract

import petgen.search.query as engine
from petgen.content.text import collation_key
from petgen.search import topk
from petgen.search.index import QUALITY, analyze, stems, words
from petgen.search.scoring import confidence
from petgen.search.stored import KINDS

Ranked = list[tuple[int, float]]  # (document, score rounded as a hit shows it)


class Reference:
    def __init__(self, index: dict[str, Any]) -> None:
        self.docs = index["docs"]
        self.kinds = {kind: {term: dict(zip(docs, confidence(weights).tolist()))
                             for term, (docs, weights) in index[kind].items()} for kind in KINDS}
        self.vocabulary = sorted(self.kinds["words"])
        n = len(self.docs)
        ranked = sorted(range(n), key=lambda d: (len(self.docs[d][1]), collation_key(self.docs[d][1])))
        self.order = {doc: rank for rank, doc in enumerate(ranked)}

    def completions(self, prefix: str) -> list[str]:
        """The shortest words starting with the prefix (a long prefix: among PREFIX_SCAN words from it on)."""
        if len(prefix) < 2:
            return []
        if len(prefix) <= engine.SHORT_PREFIX:
            found = [w for w in self.vocabulary if w.startswith(prefix)]
        else:
            start = bisect.bisect_left(self.vocabulary, prefix)
            window = self.vocabulary[start:start + engine.PREFIX_SCAN]
            found = [w for w in window[:next((i for i, w in enumerate(window) if not w.startswith(prefix)), len(window))]]
        found = sorted(found, key=lambda w: (len(w), w))[:engine.PREFIX_FANOUT + (len(prefix) > engine.SHORT_PREFIX)]
        return [w for w in found if w != prefix][:engine.PREFIX_FANOUT]

    @staticmethod
    def nearby(strings: list[str], word: str, distance: int) -> list[str]:
        """Same first letter, length within `distance`, the closest lengths first, at most FUZZY_SCAN."""
        found: list[str] = []
        for delta in sorted(range(-distance, distance + 1), key=abs):
            found += [s for s in strings if s[0] == word[0] and len(s) == len(word) + delta]
        return found[:engine.FUZZY_SCAN]

    def typos(self, word: str) -> list[tuple[str, int]]:
        if len(word) < 4 or word in self.kinds["words"]:
            return []
        limit = 2 if len(word) >= 8 else 1
        matches = extract(word, self.nearby(self.vocabulary, word, limit), scorer=OSA.distance, score_cutoff=limit,
                          limit=engine.FUZZY_MATCHES)
        return [(found, int(distance)) for found, distance, _ in matches if distance > 0]

    def matches(self, word: str, fanout: int = engine.PREFIX_FANOUT) -> list[tuple[dict[int, float], float]]:
        """Every posting list (document -> confidence) the word matches, with the match's quality; of its
        completions, the first `fanout` (its share of the query's QUERY_COMPLETIONS)."""
        stems_, words_, parts = (self.kinds[kind] for kind in KINDS)
        found = [(stems_[s], QUALITY["stem"]) for s in stems(word) if s in stems_]
        found += [(words_[word], 1.0)] if word in words_ else []
        found += [(parts[t], QUALITY["compound"]) for t in {word, *stems(word)} if t in parts]
        if len(word) >= 2:
            found += [(words_[c], engine.PREFIX_BASE + engine.PREFIX_COVERAGE * len(word) / len(c))
                      for c in self.completions(word)[:fanout]]
        found += [(words_[t], QUALITY["typo1" if d == 1 else "typo2"]) for t, d in self.typos(word)]
        return found

    def scores(self, query: str | list[list[str]]) -> dict[int, float]:
        """Each matching document's mean over the matching groups of its best confidence in the group."""
        groups = [[w] for w in analyze(query)] if isinstance(query, str) else query
        groups = [g for i, g in enumerate(groups) if g and g not in groups[:i]]
        words_ = sum(1 for group in groups for word in group if len(word) >= 2)  # expanded as prefixes
        fanout = min(engine.PREFIX_FANOUT, engine.QUERY_COMPLETIONS // max(1, words_))
        values: list[dict[int, float]] = []
        for group in groups:
            best: dict[int, float] = {}
            for position, word in enumerate(group):
                step = 1.0 - engine.ALTERNATIVE_STEP * position
                for posting, match in self.matches(word, fanout):
                    for doc, conf in posting.items():
                        best[doc] = max(best.get(doc, 0.0), conf * match * step)
            if best:
                values.append(best)
        total: dict[int, float] = {}
        for best in values:
            for doc, value in best.items():
                total[doc] = total.get(doc, 0.0) + value
        return {doc: value / len(values) for doc, value in total.items()}

    def ranked(self, scores: dict[int, float], limit: int | None) -> Ranked:
        unit, n = 10 ** topk.SCORE_DIGITS, len(self.docs)
        key = {doc: round(score * unit) * n + (n - 1 - self.order[doc]) for doc, score in scores.items()}
        best = sorted(scores, key=lambda doc: -key[doc])[:limit]
        return [(doc, round(min(1.0, max(0.0, scores[doc])), 3)) for doc in best]

    def top(self, query: str | list[list[str]], limit: int | None) -> tuple[Ranked, int]:
        scores = self.scores(query)
        return self.ranked(scores, limit), len(scores)

    def suggest(self, text: str, limit: int = engine.SUGGESTIONS) -> Ranked:
        titles: dict[str, list[int]] = {}
        for doc, (_, title, _, _) in enumerate(self.docs):
            folded = " ".join(words(title))
            if folded:
                titles.setdefault(folded, []).append(doc)
        found: dict[int, float] = {}
        for term in dict.fromkeys([" ".join(words(text)), *words(text)]):
            if len(term) < 3:
                continue
            cutoff = 1 if len(term) < 5 else 2 if len(term) < 10 else 3
            for title, distance, _ in extract(term, self.nearby(list(titles), term, cutoff), scorer=OSA.distance,
                                              score_cutoff=cutoff, limit=limit):
                for doc in titles[title]:
                    found[doc] = max(found.get(doc, 0.0), 1.0 - distance / max(len(term), len(title)))
        return self.ranked(found, limit)

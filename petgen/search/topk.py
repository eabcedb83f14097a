"""Top-k selection with bounded cost: the best `limit` documents of a query without scoring every match.

The methods of `TopK` are the search index's (petgen/search/query.py, `SearchIndex`, which provides the
documents, their title order, `group_of`, `ranked` and a scratch array); /ask's ranking uses them too
(runtime/understanding.py). Two ways, both exact unless a cap applies:
- `pruned_top` (MaxScore over word groups): a query of several word groups whose expensive groups (more
  postings than 1/`SMALL_GROUP` of the documents) cannot together lift a document into the top is answered
  from its cheap groups: at most `MAX_MERGED` postings merged in all, the expensive groups' lists
  binary-searched at `PROBES` documents for a floor of the top and then at the documents that can still
  reach it;
- `bounded_top`, else: the first `HEAD` documents of each long list (impact order) are the candidates, the
  heads growing by `HEAD_GROWTH` to `MAX_HEAD` per list and `MAX_CANDIDATES` per query while the answer
  cannot be proven (beyond those caps the best among the candidates are answered); each group's short lists
  are merged once per query, not once per growth round.
The best `limit` are chosen by a partition over one integer key per document, never a sort of all matches.
"""

from __future__ import annotations

from collections.abc import Callable, Sized
from typing import TYPE_CHECKING

import numpy as np

from petgen.search.sets import distinct, probe, union
from petgen.search.stored import HEAD, Posting

if TYPE_CHECKING:
    from petgen.search.query import Hit

HEAD_GROWTH = 8  # the heads grow 8 times at a time while the answer cannot be proven …
MAX_HEAD = 4096  # … up to this many documents per list: beyond it, the top is chosen among these (rarely applies)
MAX_CANDIDATES = 8192  # … and to this many over all of a query's long lists (a query of many common words)
SMALL_GROUP = 8  # pruned_top: a word group with at most 1/8 of the documents' postings is merged whole …
PROBES = 256  # … the documents with the best sums over those are scored exactly, for a floor of the top …
MAX_MERGED = 65536  # … and no more than this many postings are merged in all (else the heads answer)
SCORE_DIGITS = 4  # scores are compared at this precision; ties go to the engine's title order

Group = tuple[np.ndarray, np.ndarray]  # (docs, best confidence per doc) of one word group
Memo = dict[int, tuple[int, np.ndarray, np.ndarray]]  # per group: up to which length its lists were merged, and the merge
Source = tuple[Posting, float, float]  # a posting list with its match quality and its alternative's step
Weighted = tuple[list[Source], float, bool]  # a group's lists, its share of the score, whether it leads (see proven_top)
Scorer = Callable[[np.ndarray, list[np.ndarray]], tuple[np.ndarray, np.ndarray | None]]  # candidates, values -> scores, kept


class TopK:
    """The top-k methods of a search index; the index provides what they read (see the module's docstring)."""

    docs: Sized  # the documents (their number is what these methods read)
    order: np.ndarray  # tie-break rank per document (title order)
    group_of: Callable[[list[Source]], Group]
    ranked: Callable[..., list[Hit]]
    _scratch: Callable[[], np.ndarray]

    def bounded_top(self, groups: list[list[Source]], limit: int) -> list[Hit]:
        """The best `limit` documents, looking only at the first `head` documents of each long posting list in
        impact order (all of a short one) and proving that no other document could rank higher.

        A document outside those heads scores at most the mean over the groups of the best confidence left
        in a group's lists (`bound`). If the `limit`-th candidate's ranking key (rounded score, then title
        order) beats the best key such a document could have, the answer is exact; otherwise the heads grow
        by HEAD_GROWTH, to MAX_HEAD at most and MAX_CANDIDATES over all long lists together (`head_cap`: then the
        best among those candidates are answered).
        """
        pruned = self.pruned_top(groups, limit)
        if pruned is not None:
            return pruned
        head, cap = max(HEAD, 4 * limit), self.head_cap(groups)
        memo: Memo = {}  # per group, its short lists merged in the first round
        while True:
            exact, hits = self._top_of_heads(groups, limit, head, memo)
            if exact or head >= cap:
                return hits
            head = min(head * HEAD_GROWTH, cap)

    def pruned_top(self, groups: list[list[Source]], limit: int) -> list[Hit] | None:
        """`pruned` for a search query: every word group counts the same (the mean of their values)."""
        found = self.pruned([(sources, 1.0 / len(groups), True) for sources in groups], limit, self.mean(len(groups)))
        return None if found is None else self.ranked(*found, limit)

    @staticmethod
    def mean(count: int) -> Scorer:
        """The score of a search query: the mean of its groups' values, added up in group order."""
        def score(candidates: np.ndarray, values: list[np.ndarray]) -> tuple[np.ndarray, None]:
            scores = np.zeros(len(candidates))
            for found in values:
                scores += found
            return scores / count, None

        return score

    def pruned(self, groups: list[Weighted], limit: int, score: Scorer) -> tuple[np.ndarray, np.ndarray] | None:
        """The candidates and scores that hold the best `limit` documents of a query of several groups, some of
        them cheap (no more postings than a `SMALL_GROUP` share of the documents) and some expensive, when the
        expensive ones together cannot lift a document into the top: MaxScore over groups. None when that does
        not apply. `score` (candidates, each group's values -> scores, the candidates kept) must not give a
        document more than the sum over the groups of share × its value (as in `proven_top`); it may drop
        candidates (a filter, a floor). Used by search (`pruned_top`) and by /ask's ranking.

        1. The cheap groups are merged whole (`group_of`); the `PROBES` documents with the best partial sum
           over them are scored exactly (every list of the other groups probed at them): the `limit`-th kept of
           those is a score the answer's `limit`-th reaches (`floor`).
        2. The expensive groups, the most postings first, are left out (`skipped`) while the sum of their
           best values (each group's best confidence times its share) rounds below that floor: a document
           only they match cannot reach the top. The others are merged too, at most `MAX_MERGED` postings in
           all (else None: the heads of `bounded_top` answer).
        3. The candidates are the merged groups' documents whose partial sum plus the skipped groups' best
           values still reaches the floor; each is scored exactly, the skipped groups' lists probed at it."""
        n, count = len(self.docs), len(groups)
        costs = [sum(len(posting) for posting, _, _ in sources) for sources, _, _ in groups]
        cheap = [i for i in range(count) if costs[i] * SMALL_GROUP <= n]
        if count < 2 or not cheap or len(cheap) == count or sum(costs[i] for i in cheap) > MAX_MERGED:
            return None
        shares = [share for _, share, _ in groups]
        merged: dict[int, Group] = {i: self.group_of(groups[i][0]) for i in cheap}
        docs, partial = self._partial(merged, shares)
        wanted = max(PROBES, limit)
        if len(docs) < limit:
            return None
        probes = docs if len(docs) <= wanted else np.sort(docs[np.argpartition(-partial, wanted)[:wanted]])
        memo: Memo = {}  # the other groups' shorter lists, merged once (`_values_at`)
        scores, kept = self._exact(groups, merged, probes, memo, score)
        if kept is not None:
            scores = scores[kept]
        if len(scores) < limit:
            return None
        unit = 10 ** SCORE_DIGITS
        key = np.round(scores * unit).astype(np.int64)
        floor = (int(np.partition(key, len(key) - limit)[len(key) - limit]) - 0.5) / unit  # a score rounding lower
        best = {i: shares[i] * max((posting.best() * match * step for posting, match, step in groups[i][0]), default=0.0)
                for i in range(count) if i not in merged}
        skipped, ceiling, spent = [], 0.0, sum(costs[i] for i in cheap)
        for i in sorted((i for i in range(count) if i not in merged), key=lambda i: -costs[i]):
            if ceiling + best[i] + 1e-9 < floor:
                skipped.append(i)
                ceiling += best[i]
            else:
                spent += costs[i]
                if spent > MAX_MERGED:
                    return None
                merged[i] = self.group_of(groups[i][0])
        if not skipped:
            return None
        # the cheap groups' sums of step 1 stand unless an expensive group was merged too
        candidates, partial = self._partial(merged, shares) if len(merged) > len(cheap) else (docs, partial)
        probed: dict[int, np.ndarray] = {}
        for i in [*skipped, None]:  # the skipped groups probed one by one, the candidates fewer after each
            keep = partial + ceiling + 1e-9 >= floor
            candidates, partial = candidates[keep], partial[keep]
            probed = {j: values[keep] for j, values in probed.items()}
            if i is not None:
                probed[i] = self._values_at(groups[i][0], candidates, 0, memo, i)
                partial, ceiling = partial + shares[i] * probed[i], ceiling - best[i]
        scores, kept = self._exact(groups, merged, candidates, memo, score, probed)
        return (candidates, scores) if kept is None else (candidates[kept], scores[kept])

    def _partial(self, merged: dict[int, Group], shares: list[float]) -> tuple[np.ndarray, np.ndarray]:
        """The documents of some merged groups and the sum of their values times the groups' shares."""
        total = self._scratch()
        touched = []
        for i, (docs, values) in merged.items():
            total[docs] += values * shares[i]
            touched.append(docs)
        docs = union(touched, total)
        partial = total[docs]
        total[docs] = 0.0
        return docs, partial

    def _exact(self, groups: list[Weighted], merged: dict[int, Group], candidates: np.ndarray, memo: Memo,
               score: Scorer, probed: dict[int, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """`score` of the candidates from each group's value: taken from `probed` (values per candidate), looked
        up in the merged groups, or the group's lists probed."""
        values = []
        for i, (sources, _, _) in enumerate(groups):
            if probed is not None and i in probed:
                values.append(probed[i])
            elif i in merged:
                docs, found = merged[i]
                at, inside = probe(docs, candidates)
                values.append(np.where(inside, found[at], 0.0) if len(docs) else np.zeros(len(candidates)))
            else:
                values.append(self._values_at(sources, candidates, 0, memo, i))
        return score(candidates, values)

    @staticmethod
    def head_cap(groups: list[list[Source]]) -> int:
        """How far the heads of a query's long lists may grow: MAX_HEAD each, and MAX_CANDIDATES over all of
        them (a query with many long lists grows each less), never below HEAD."""
        long = sum(1 for sources in groups for posting, _, _ in sources if posting.impact is not None)
        return max(HEAD, min(MAX_HEAD, MAX_CANDIDATES // max(1, long)))

    def _top_of_heads(self, groups: list[list[Source]], limit: int, head: int,
                      memo: Memo | None = None) -> tuple[bool, list[Hit]]:
        share = 1.0 / len(groups)
        exact, docs, scores = self.proven_top([(sources, share, True) for sources in groups], limit, head,
                                              self.mean(len(groups)), memo)
        return exact, self.ranked(docs, scores, limit)

    def proven_top(self, groups: list[Weighted], limit: int, head: int, score: Scorer,
                   memo: Memo | None = None) -> tuple[bool, np.ndarray, np.ndarray]:
        """Candidates from the first `head` documents (impact order) of each long list of the leading groups (all
        of a short one), their scores by `score` (which may also drop candidates: a filter), and whether that is
        proven to hold the best `limit` documents of all.

        `score` must not give any document more than the sum over the groups of share × the document's value in
        the group. A document outside the heads then scores at most that sum with the best value left in each
        group (`bound`). If the `limit`-th kept candidate's ranking key (rounded score, then title order) beats
        the best key such a document could have, the answer is exact. With `memo` (kept between the rounds of
        one query as its heads grow), each group's short lists are merged once, in the first round.
        """
        leading = [sources for sources, _, lead in groups if lead]
        pieces = [posting.docs if posting.impact is None or len(posting) <= head else posting.impact[:head]
                  for sources in leading for posting, _, _ in sources]
        candidates = distinct(pieces) if pieces else np.zeros(0, dtype=np.int32)
        values = [self._values_at(sources, candidates, head, memo, i) for i, (sources, _, _) in enumerate(groups)]
        scores, kept = score(candidates, values)
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

    def values_at(self, sources: list[Source], candidates: np.ndarray) -> np.ndarray:
        """One group's best confidence for each candidate, as `group_of` gives it to the documents it matches."""
        return self._values_at(sources, candidates, 0)

    def _values_at(self, sources: list[Source], candidates: np.ndarray, head: int,
                   memo: Memo | None = None, key: int = 0) -> np.ndarray:
        """One group's best confidence for each candidate: the lists no longer than a few times the candidates
        merged (`group_of`) and looked up, a longer one probed for each candidate (binary search). With `memo`,
        the lists merged in the first round stay merged in `memo[key]`: a later round only probes the others."""
        merged = memo.get(key) if memo is not None else None
        if merged is None:
            short = max(head, 4 * len(candidates))
            merged = (short, *self.group_of([source for source in sources if len(source[0]) <= short]))
            if memo is not None:
                memo[key] = merged
        short, docs, conf = merged
        at, found = probe(docs, candidates)
        values = np.where(found, conf[at], 0.0) if len(docs) else np.zeros(len(candidates))
        for posting, match, step in sources:
            if len(posting) <= short:
                continue
            if posting.dense is not None:  # a filter's values over all documents: read at the candidates
                np.maximum(values, posting.dense[candidates] * match * step, out=values)
            else:
                at, found = probe(posting.docs, candidates)
                np.maximum(values, np.where(found, posting.conf_at(at) * match * step, 0.0), out=values)
        return values

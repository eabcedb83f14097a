"""The "did you mean" of hints and 404s: the choice most like a word, as difflib finds it, found fast among many."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CLOSE_ENOUGH = 0.6  # difflib's similarity ratio from which a choice is a likely typo of a word


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The most similar choice, if one is similar enough to be a likely typo: what
    `difflib.get_close_matches(word, sorted(choices), n=1, cutoff=CLOSE_ENOUGH)` returns (the highest ratio; of
    equal ones the greatest choice), without comparing `word` with every choice in Python (a 404's suggestion
    among 50,000 slugs held the event loop for a fifth of a second: bench/not_found.py).

    rapidfuzz's `fuzz.ratio` (in C) is 2·LCS/(len(a)+len(b)); difflib's ratio counts the characters of matching
    blocks that form a common subsequence, never more than the longest one. So the choices are tried in descending
    order of that bound, and the search ends where the bound falls below the best ratio found."""
    if not word:
        matches = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=CLOSE_ENOUGH)
        return matches[0] if matches else None
    from rapidfuzz import fuzz, process  # imported on the first typo, not by every build and server start

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)  # as get_close_matches: the choice is the first sequence, the word the second
    best: str | None = None
    best_ratio = CLOSE_ENOUGH
    slack = 1e-6  # the bound is a float percentage: never cut off a choice at the boundary by rounding
    # What `sorted` reads of the choices (a mapping's keys), in a collection rapidfuzz takes as it is.
    pool = choices if isinstance(choices, (list, tuple, set, frozenset)) else list(choices)
    for choice, bound, _ in process.extract(word, pool, scorer=fuzz.ratio, limit=None,
                                            score_cutoff=100 * best_ratio - slack):
        if bound < 100 * best_ratio - slack:
            break  # sorted by the bound: no later choice can reach the best ratio
        matcher.set_seq1(choice)
        if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio >= best_ratio and (best is None or (ratio, choice) > (best_ratio, best)):
            best, best_ratio = choice, ratio
    return best


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    match = closest(word, choices)
    return f"did you mean '{match}'?" if match else None

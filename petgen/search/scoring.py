"""The engine's ranking constants that the index carries: the pack file's prefix completions and confidences
(petgen/search/pack.py), and those the page's search script reads from /search/index.json (`SCORING`).

Apart from the query engine (petgen/search/query.py) so that a build making an index imports neither it nor
its typo matching (rapidfuzz).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from petgen.search.topk import SCORE_DIGITS

FIELD_CONFIDENCE = ((1.0, 0.45), (3.0, 0.8), (5.0, 0.9), (8.0, 1.0))  # index weight -> confidence
PREFIX_BASE, PREFIX_COVERAGE = 0.5, 0.4  # prefix: 0.5 + 0.4 × typed share of the completed word
PREFIX_FANOUT = 32  # a prefix completes to at most this many indexed words (the shortest first)
SHORT_PREFIX = 3  # prefixes up to this length have their completions precomputed
PREFIX_SCAN = 512  # a longer prefix looks at no more than this many words in alphabetical order
QUERY_COMPLETIONS = 4 * PREFIX_FANOUT  # the completions of all of a query's words together, at most (`prefix_share`)
FUZZY_MATCHES = 16  # typo matches kept per query word, the nearest first

# The ranking constants the page's search script (petgen/emit/templates/search.js) reads from /search/index.json.
SCORING = {"field_confidence": [list(point) for point in FIELD_CONFIDENCE], "prefix": [PREFIX_BASE, PREFIX_COVERAGE],
           "prefix_fanout": PREFIX_FANOUT, "query_completions": QUERY_COMPLETIONS, "short_prefix": SHORT_PREFIX,
           "prefix_scan": PREFIX_SCAN, "typo_matches": FUZZY_MATCHES, "score_digits": SCORE_DIGITS}


def confidence(weights: Any) -> np.ndarray:
    """Field confidences for index weights (8, 5, 3, 1 → 1.0, 0.9, 0.8, 0.45)."""
    xs, ys = zip(*FIELD_CONFIDENCE)
    return np.interp(np.asarray(weights, dtype=np.float64), xs, ys)

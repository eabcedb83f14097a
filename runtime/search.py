"""`GET /api/search?q=&limit=`: SearchResults from the shared search engine."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from petgen.content import closest
from petgen.search import Hit, analyze
from runtime.ask import understand
from runtime.dist import Dist

SEARCH_PARAMS = ("q", "limit")
DEFAULT_LIMIT = 10
MAX_LIMIT = 50


class BadSearch(Exception):
    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_search_query(query_string: str) -> tuple[str, int]:
    """Validate `q` (required, 2+ characters after trimming) and `limit` (1..50, default 10)."""
    seen: dict[str, str] = {}
    for name, value in parse_qsl(query_string, keep_blank_values=True):
        if name not in SEARCH_PARAMS:
            match = closest(name, SEARCH_PARAMS)
            raise BadSearch(f"Unknown parameter '{name}'.",
                            f"did you mean '{match}'?" if match else "allowed parameters: q, limit")
        if name in seen:
            raise BadSearch(f"Parameter '{name}' is given more than once.", f"send '{name}' once")
        seen[name] = value
    if "q" not in seen:
        raise BadSearch("The parameter 'q' is required.", "search like /api/search?q=bärchen")
    q = " ".join(seen["q"].split())
    if len(q) < 2:
        raise BadSearch("The query 'q' must have at least 2 characters after trimming.",
                        "type at least two letters, e.g. /api/search?q=ma")
    if len(q) > 200:
        raise BadSearch("The query 'q' must not be longer than 200 characters.", "shorten the query")
    limit = DEFAULT_LIMIT
    if "limit" in seen:
        try:
            limit = int(seen["limit"])
        except ValueError:
            raise BadSearch(f"'limit' must be a whole number from 1 to {MAX_LIMIT}, not '{seen['limit']}'.",
                            "for example limit=10") from None
        if not 1 <= limit <= MAX_LIMIT:
            raise BadSearch(f"'limit' must be from 1 to {MAX_LIMIT}, not {limit}.",
                            f"use limit={max(1, min(limit, MAX_LIMIT))}")
    return q, limit


def hit_item(hit: Hit) -> dict[str, Any]:
    return {"slug": hit.slug, "title": hit.title, "meaning": hit.meaning, "url": hit.url, "score": hit.score}


def search_results(q: str, limit: int, dist: Dist) -> dict[str, Any]:
    """Words as /ask reads them (question words dropped, English mapped to German through the
    lexicon), searched without /ask's category filters."""
    groups = understand(q, dist.lexicon_index, dist.title_words).words or [[w] for w in analyze(q)]
    hits, total = dist.search.top(groups, limit)
    return {"query": q, "items": [hit_item(h) for h in hits], "total": total, "limit": limit,
            "license": dict(dist.site.license)}

"""`GET /api/search?q=&limit=`: SearchResults from the shared search engine."""

from __future__ import annotations

from typing import Any

from petgen.contract.limits import SEARCH_DEFAULT_LIMIT as DEFAULT_LIMIT
from petgen.contract.limits import SEARCH_MAX_LIMIT as MAX_LIMIT
from petgen.contract.limits import SEARCH_MAX_QUERY as MAX_QUERY
from petgen.contract.limits import SEARCH_MIN_QUERY as MIN_QUERY
from petgen.contract.resources import license_of
from petgen.search.query import Hit
from runtime.builds.dist import Dist
from runtime.http.params import BadRequest, query_params, whole_number
from runtime.reading import understand

SEARCH_PARAMS = ("q", "limit")


def parse_search_query(query_string: str) -> tuple[str, int]:
    """Validate `q` (required, 2+ characters after trimming) and `limit` (1..50, default 10)."""
    seen = query_params(query_string, SEARCH_PARAMS)
    if "q" not in seen:
        raise BadRequest("The parameter 'q' is required.", "search like /api/search?q=bärchen")
    q = " ".join(seen["q"].split())
    if len(q) < MIN_QUERY:
        raise BadRequest(f"The query 'q' must have at least {MIN_QUERY} characters after trimming.",
                        "type at least two letters, e.g. /api/search?q=ma")
    if len(q) > MAX_QUERY:
        raise BadRequest(f"The query 'q' must not be longer than {MAX_QUERY} characters.", "shorten the query")
    limit = whole_number("limit", seen["limit"], 1, MAX_LIMIT, DEFAULT_LIMIT) if "limit" in seen else DEFAULT_LIMIT
    return q, limit


def hit_item(hit: Hit) -> dict[str, Any]:
    return {"slug": hit.slug, "title": hit.title, "meaning": hit.meaning, "url": hit.url, "score": hit.score}


def search_results(q: str, limit: int, dist: Dist) -> dict[str, Any]:
    """Words as /ask reads them (question words dropped, English mapped to German through the
    lexicon, the words that come with an intent kept), searched without /ask's filters; with no
    match, `suggestions` lists the titles nearest to the query (did you mean)."""
    meaning = understand(q, dist.lexicon_index, dist.title_words)
    groups = meaning.search_groups() or q
    hits, total = dist.search.top(groups, limit)
    body: dict[str, Any] = {"query": q, "items": [hit_item(h) for h in hits], "total": total, "limit": limit}
    if not hits:
        body["suggestions"] = [hit_item(h) for h in dist.search.suggest(q)]
    return {**body, **license_of(dist.site)}

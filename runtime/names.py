"""`/api/names` with any valid filter and page, and slug canonicalisation for `/api/names/{slug}`.

Precomputed pages are served as they are; any other valid combination is computed from the
loaded summaries with the same builder the build uses, so both give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from petgen.content import closest
from petgen.resources import (
    DEFAULT_LIMIT, MAX_LIMIT, encode, filter_summaries, license_of, list_route, name_list,
)
from petgen.text import slugify
from runtime.dist import Dist, StaticFile
from runtime.errors import error_response
from runtime.params import BadRequest, query_params, shown, whole_number

__all__ = ["BadRequest", "ListQuery", "list_page", "parse_list_query", "unknown_or_redirect"]

LIST_PARAMS = ("category", "mood", "limit", "offset")
MAX_OFFSET = 1_000_000_000  # far past any list; keeps numbers within JSON's safe integer range


@dataclass(frozen=True)
class ListQuery:
    category: str | None
    mood: str | None
    limit: int
    offset: int

    @property
    def route(self) -> str:
        return list_route(self.category, self.mood, self.limit, self.offset)


def parse_list_query(query_string: str, dist: Dist) -> ListQuery:
    """Validate `category`, `mood`, `limit`, `offset`; raise BadRequest with a hint."""
    seen = query_params(query_string, LIST_PARAMS)
    category, mood = seen.get("category") or None, seen.get("mood") or None
    if "category" in seen and category not in dist.categories:
        raise BadRequest(f"Unknown category '{shown(seen['category'])}'.", _vocabulary_hint(
            seen["category"], dist.categories, "/api/categories"))
    if "mood" in seen and mood not in dist.moods:
        raise BadRequest(f"Unknown mood '{shown(seen['mood'])}'.", _vocabulary_hint(seen["mood"], dist.moods,
                         "/api/categories"))
    limit = whole_number("limit", seen["limit"], 1, MAX_LIMIT, 20) if "limit" in seen else DEFAULT_LIMIT
    offset = whole_number("offset", seen["offset"], 0, MAX_OFFSET, 0) if "offset" in seen else 0
    return ListQuery(category, mood, limit, offset)


def _vocabulary_hint(value: str, known: list[str], where: str) -> str:
    match = closest(value, known)
    listed = ", ".join(known)
    return f"did you mean '{match}'? Valid values: {listed}" if match else f"valid values: {listed} (see {where})"


def list_page(query: ListQuery, dist: Dist) -> StaticFile | bytes:
    """The precomputed file for this query, or the page computed now."""
    precomputed = dist.routes.get(query.route)
    if precomputed is not None:
        return precomputed
    matching = filter_summaries(dist.items, query.category, query.mood)
    return encode(name_list(matching, category=query.category, mood=query.mood, limit=query.limit,
                            offset=query.offset, base_url=dist.site.base_url, license=license_of(dist.site)))


def unknown_or_redirect(request: Request, dist: Dist, slug: str, prefix: str, suffix: str = "") -> Response:
    """301 to the canonical spelling of a slug (`Bärchen` → `baerchen`), else 404 naming the closest slug."""
    canonical = slugify(slug)
    if canonical and canonical != slug and canonical in dist.slugs:
        location = f"{prefix}{quote(canonical)}{suffix}"
        if request.url.query:
            location += f"?{request.url.query}"
        return RedirectResponse(location, status_code=301)
    shown = slug if len(slug) <= 80 else slug[:77] + "…"
    suggestion = closest(canonical or slug, dist.slugs) if len(slug) <= 80 else None
    words = " ".join(slug.replace("-", " ").split())[:80]
    hint = f"search with /api/search?q={quote(words)} or list all names at /api/names"
    if suggestion:
        hint = f"did you mean '{suggestion}' ({prefix}{suggestion}{suffix})? Or {hint}"
    return error_response(404, f"No name with the slug '{shown}'.", hint)

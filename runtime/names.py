"""`/api/names` with any valid filter and page, and slug canonicalisation for `/api/names/{slug}`.

Precomputed pages are served as they are; any other valid combination is computed from the
loaded summaries with the same builder the build uses, so both give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from petgen.content import closest
from petgen.resources import DEFAULT_LIMIT, MAX_LIMIT, encode, filter_summaries, list_route, name_list
from petgen.text import slugify
from runtime.dist import Dist, StaticFile
from runtime.errors import error_response

LIST_PARAMS = ("category", "mood", "limit", "offset")
MAX_OFFSET = 1_000_000_000  # far past any list; keeps numbers within JSON's safe integer range


class BadRequest(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class ListQuery:
    category: str | None
    mood: str | None
    limit: int
    offset: int

    @property
    def route(self) -> str:
        return list_route(self.category, self.mood, self.limit, self.offset)


def _int_param(name: str, raw: str, low: int, high: int) -> int:
    bounds = f"from {low} to {high}"
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"'{name}' must be a whole number {bounds}, not '{raw}'.",
                         f"for example {name}={low if name == 'offset' else 20}") from None
    if value < low or (high is not None and value > high):
        raise BadRequest(f"'{name}' must be {bounds}, not {value}.", f"use {name}={max(low, min(value, high))}")
    return value


def parse_list_query(query_string: str, dist: Dist) -> ListQuery:
    """Validate `category`, `mood`, `limit`, `offset`; raise BadRequest with a hint."""
    seen: dict[str, str] = {}
    for name, value in parse_qsl(query_string, keep_blank_values=True):
        if name not in LIST_PARAMS:
            hint = closest(name, LIST_PARAMS)
            raise BadRequest(f"Unknown parameter '{name}'.", f"did you mean '{hint}'?" if hint else
                             f"allowed parameters: {', '.join(LIST_PARAMS)}")
        if name in seen:
            raise BadRequest(f"Parameter '{name}' is given more than once.", f"send '{name}' once")
        seen[name] = value
    category, mood = seen.get("category") or None, seen.get("mood") or None
    if "category" in seen and category not in dist.categories:
        raise BadRequest(f"Unknown category '{seen['category']}'.", _vocabulary_hint(seen["category"], dist.categories,
                         "/api/categories"))
    if "mood" in seen and mood not in dist.moods:
        raise BadRequest(f"Unknown mood '{seen['mood']}'.", _vocabulary_hint(seen["mood"], dist.moods,
                         "/api/categories"))
    limit = _int_param("limit", seen["limit"], 1, MAX_LIMIT) if "limit" in seen else DEFAULT_LIMIT
    offset = _int_param("offset", seen["offset"], 0, MAX_OFFSET) if "offset" in seen else 0
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
                            offset=query.offset, base_url=dist.site.base_url, license=dict(dist.site.license)))


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

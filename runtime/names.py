"""`/api/names` with any valid filter and page, and slug canonicalisation for `/api/names/{slug}`.

Precomputed pages are served as they are; any other valid combination is computed from the
loaded summaries with the same builder the build uses, so both give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from petgen.content.nearest import closest
from petgen.content.text import slugify
from petgen.contract.limits import MAX_OFFSET
from petgen.contract.limits import SEARCH_MIN_QUERY as MIN_QUERY
from petgen.contract.resources import (
    DEFAULT_LIMIT,
    LIST_FILTERS,
    LIST_PARAMS,
    MAX_LIMIT,
    encode,
    license_of,
    list_route,
    name_list,
)
from runtime.builds.dist import Dist, LargeFile, StaticFile
from runtime.http.errors import error_response
from runtime.http.params import BadRequest, query_params, shown, whole_number

__all__ = ["MAX_OFFSET", "BadRequest", "ListQuery", "check_filters", "computed_page", "list_page", "parse_list_query",
           "unknown_or_redirect"]


@dataclass(frozen=True)
class ListQuery:
    filters: dict[str, str]  # category, mood and facets: name -> value, in LIST_FILTERS order
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    @property
    def route(self) -> str:
        return list_route(self.filters, self.limit, self.offset)


def vocabulary(name: str, dist: Dist) -> list[str]:
    """The valid values of a list filter."""
    if name == "category":
        return dist.categories
    if name == "mood":
        return dist.moods
    return dist.facets.get(name, [])


def check_filters(filters: dict[str, str | None], dist: Dist) -> dict[str, str]:
    """The filters that are set, in LIST_FILTERS order, each a known value; raise BadRequest naming the
    closest valid value otherwise."""
    checked: dict[str, str] = {}
    for name in LIST_FILTERS:
        if name not in filters or filters[name] is None:
            continue
        value = filters[name] or ""
        known = vocabulary(name, dist)
        if value not in known:
            raise BadRequest(f"Unknown {name} '{shown(value)}'.", _vocabulary_hint(value, known, "/api/categories"))
        checked[name] = value
    return checked


def parse_list_query(query_string: str, dist: Dist) -> ListQuery:
    """Validate the filters (category, mood, relationship, gender, region, language), `limit` and `offset`;
    raise BadRequest with a hint."""
    seen = query_params(query_string, LIST_PARAMS)
    filters = check_filters({name: seen[name] for name in LIST_FILTERS if name in seen}, dist)
    limit = whole_number("limit", seen["limit"], 1, MAX_LIMIT, 20) if "limit" in seen else DEFAULT_LIMIT
    offset = whole_number("offset", seen["offset"], 0, MAX_OFFSET, 0) if "offset" in seen else 0
    return ListQuery(filters, limit, offset)


def _vocabulary_hint(value: str, known: list[str], where: str) -> str:
    match = closest(value, known)
    listed = ", ".join(known)
    return f"did you mean '{match}'? Valid values: {listed}" if match else f"valid values: {listed} (see {where})"


def list_page(query: ListQuery, dist: Dist) -> StaticFile | LargeFile | bytes:
    """The precomputed file for this query, or the page computed now."""
    precomputed = dist.routes.serve(query.route)
    return precomputed if precomputed is not None else computed_page(query, dist)


def computed_page(query: ListQuery, dist: Dist) -> bytes:
    """The page for this query, computed from the loaded summaries as the build computes it."""
    matching = dist.items.select(query.filters)
    return encode(name_list(matching, filters=query.filters, limit=query.limit, offset=query.offset,
                            base_url=dist.site.base_url, license=license_of(dist.site)))


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
    search = _search_link(slug)
    hint = (f"search with {search} or " if search else "") + "list all names at /api/names"
    if suggestion:
        hint = f"did you mean '{suggestion}' ({prefix}{suggestion}{suffix})? Or {hint}"
    return error_response(404, f"No name with the slug '{shown}'.", hint)


def unknown_category(request: Request, dist: Dist, slug: str) -> Response:
    """301 to the canonical spelling of a category slug (`Tiere`, `für-sie` → `tiere`, `fuer-sie`), else 404
    naming the slug, the closest category and where to search and list (contract, error rule 2)."""
    canonical = slugify(slug)
    if canonical and canonical != slug and f"/api/categories/{canonical}" in dist.routes:
        return RedirectResponse(f"/api/categories/{quote(canonical)}" + (f"?{request.url.query}" if request.url.query
                                                                         else ""), status_code=301)
    shown = slug if len(slug) <= 80 else slug[:77] + "…"
    suggestion = closest(canonical or slug, dist.categories) if len(slug) <= 80 else None
    search = _search_link(slug)
    hint = (f"list the categories at /api/categories ({', '.join(dist.categories)})"
            + (f", or search names with {search}" if search else ""))
    if suggestion:
        hint = f"did you mean '{suggestion}' (/api/categories/{suggestion})? Or {hint}"
    return error_response(404, f"No category with the slug '{shown}'.", hint)


def _search_link(slug: str) -> str | None:
    """/api/search for the words of an unknown slug, if they make a query it takes (at least MIN_QUERY characters:
    `/api/names/x` is no reason to send anyone to a 400)."""
    words = " ".join(slug.replace("-", " ").split())[:80]
    return f"/api/search?q={quote(words)}" if len(words) >= MIN_QUERY else None


def canonical_page(path: str, routes: Mapping[str, object]) -> str | None:
    """The page a path names in another spelling (upper case, umlauts: `/categories/Für-Sie/`), if there is one."""
    if len(path) > 200:
        return None
    canonical = "/".join(slugify(part) if part else part for part in path.split("/"))
    for candidate in (canonical, canonical.rstrip("/") + "/"):
        if candidate != path and candidate in routes:
            return quote(candidate)
    return None

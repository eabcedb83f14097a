"""The API's resources as JSON-ready dicts: one builder per resource, used by build and runtime.

Key order is the order written here (insertion order), so output is stable without sorting.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson

from petgen.content.model import FILTER_FACETS, Category, Entry, Facets, Mood, Site, facet_matches
from petgen.contract.limits import NAMES_DEFAULT_LIMIT, NAMES_MAX_LIMIT

DEFAULT_LIMIT = NAMES_DEFAULT_LIMIT
MAX_LIMIT = NAMES_MAX_LIMIT
LIST_FILTERS = ("category", "mood", *FILTER_FACETS)  # the filters of /api/names, in the order routes name them
Aliases = dict[str, tuple[str, str]]  # alias category slug -> (facet, value)
LIST_PARAMS = (*LIST_FILTERS, "limit", "offset")  # the query parameters of /api/names, in route order


def encode(data: Any) -> bytes:
    """Serialise a resource: compact UTF-8 JSON, keys in insertion order."""
    return orjson.dumps(data)


def license_of(site: Site) -> dict[str, str]:
    """The `license` (its label, e.g. `CC BY 4.0`, as the contract shows it) and `licenseUrl` fields."""
    return {"license": site.license["name"], "licenseUrl": site.license["url"]}


def entry_url(site: Site, slug: str) -> str:
    return f"{site.base_url}/names/{slug}/"


def category_url(site: Site, slug: str) -> str:
    return f"{site.base_url}/categories/{slug}/"


def name_resource(entry: Entry, site: Site) -> dict[str, Any]:
    """The full Name resource of `/api/names/{slug}`."""
    return {
        "slug": entry.slug,
        "title": entry.title,
        "pronunciation": entry.pronunciation,
        "ipa": entry.ipa,
        "meaning": entry.meaning,
        "origin": entry.origin,
        "usage": entry.usage,
        "examples": list(entry.examples),
        "variants": list(entry.variants),
        "categories": list(entry.categories),
        "moods": list(entry.moods),
        **facets_of(entry),
        **({"genderNote": entry.genderNote} if entry.genderNote else {}),
        **({"caution": entry.caution} if entry.caution else {}),
        "originCertainty": entry.originCertainty,
        "keywords": list(entry.keywords),
        "related": list(entry.related),
        "faq": [{"question": f["question"], "answer": f["answer"]} for f in entry.faq],
        "datePublished": entry.datePublished,
        "lastReviewed": entry.lastReviewed,
        "url": entry_url(site, entry.slug),
        **license_of(site),
    }


def facets_of(entry: Entry) -> dict[str, Any]:
    """The filterable facets: relationship, gender, region (lists or one slug) and language."""
    return {"relationship": list(entry.relationship), "gender": entry.gender, "region": list(entry.region),
            "language": entry.language}


def name_summary(entry: Entry, site: Site) -> dict[str, Any]:
    """A NameList item: enough to show a list and to follow `url`."""
    return {
        "slug": entry.slug,
        "title": entry.title,
        "meaning": entry.meaning,
        "categories": list(entry.categories),
        "moods": list(entry.moods),
        **facets_of(entry),
        "url": entry_url(site, entry.slug),
    }


def list_route(filters: dict[str, str] | None = None, limit: int = DEFAULT_LIMIT, offset: int = 0) -> str:
    """The canonical path+query of a list page: filters in LIST_FILTERS order, defaults left out."""
    query: list[tuple[str, str | int]] = [(name, filters[name]) for name in LIST_FILTERS if (filters or {}).get(name)]
    if limit != DEFAULT_LIMIT:
        query.append(("limit", limit))
    if offset:
        query.append(("offset", offset))
    return "/api/names" + (f"?{urlencode(query)}" if query else "")


def in_category(item: dict[str, Any], category: str, aliases: Aliases) -> bool:
    """Whether a summary belongs to a category; an alias category holds the items with its facet value."""
    alias = aliases.get(category)
    return facet_matches(alias, item[alias[0]]) if alias else category in item["categories"]


def matches(item: dict[str, Any], filters: dict[str, str], aliases: Aliases) -> bool:
    """Whether a summary passes every filter (category, mood, or a facet's value)."""
    for name, value in filters.items():
        if name == "category":
            if not in_category(item, value, aliases):
                return False
        elif name == "mood":
            if value not in item["moods"]:
                return False
        elif not facet_matches((name, value), item[name]):
            return False
    return True


def filter_summaries(items: list[dict[str, Any]], filters: dict[str, str], aliases: Aliases) -> list[dict[str, Any]]:
    return [item for item in items if matches(item, filters, aliases)] if filters else items


def name_list(matching: list[dict[str, Any]], *, filters: dict[str, str] | None = None, limit: int, offset: int,
              base_url: str, license: dict[str, str]) -> dict[str, Any]:
    """One NameList page over the already filtered, ordered summaries; `license` is `license_of(site)`."""
    total = len(matching)
    next_offset = offset + limit
    next_url = base_url + list_route(filters, limit, next_offset) if next_offset < total else None
    return {
        "items": matching[offset:next_offset],
        "total": total,
        "limit": limit,
        "offset": offset,
        "nextUrl": next_url,
        **license,
    }


def category_summary(category: Category, count: int, site: Site) -> dict[str, Any]:
    summary = {
        "slug": category.slug,
        "title": category.title,
        "emoji": category.emoji,
        "description": category.description,
        "moods": list(category.moods),
        "count": count,
        "url": category_url(site, category.slug),
    }
    if category.facet is not None:  # an alias kept for published URLs: the facet it stands for
        summary["facet"] = {"name": category.facet[0], "value": category.facet[1]}
    return summary


def category_resource(category: Category, names: list[dict[str, Any]], site: Site) -> dict[str, Any]:
    """The Category resource of `/api/categories/{slug}`, with all its names."""
    return {**category_summary(category, len(names), site), "names": names, **license_of(site)}


def category_list(items: list[dict[str, Any]], moods: list[Mood], site: Site, facets: Facets | None = None,
                  facet_counts: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
    """The categories, the mood vocabulary and each facet's vocabulary with its counts."""
    counts = facet_counts or {}
    return {
        "items": items,
        "total": len(items),
        "moods": [{"slug": m.slug, "title": m.title, "description": m.description} for m in moods],
        "facets": {name: [{"slug": v.slug, "title": v.title, "description": v.description,
                           "count": counts.get(name, {}).get(v.slug, 0)} for v in values]
                   for name, values in (facets.values.items() if facets else ())},
        **license_of(site),
    }


def status_resource(*, site: Site, status: str, timestamp: str, names: int, categories: int, moods: int,
                    content_hash: str, checks: dict[str, dict[str, str]] | None = None,
                    facets: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
    """The Status resource: static copy at build time, answered live by the runtime.

    `status` is `ok`, `degraded` (serving, but a check failed: see `checks`) or `down` (nothing to serve).
    """
    return {
        "status": status,
        "timestamp": timestamp,
        "version": site.api_version,
        "names": names,
        "categories": categories,
        "moods": moods,
        "facets": facets or {},
        "service": site.name,
        "site": site.site,
        "contentHash": content_hash,
        "checks": checks or {},
        **license_of(site),
    }

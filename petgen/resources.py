"""The API's resources as JSON-ready dicts: one builder per resource, used by build and runtime.

Key order is the order written here (insertion order), so output is stable without sorting.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson

from petgen.content import Category, Entry, Mood, Site

DEFAULT_LIMIT = 200
MAX_LIMIT = 200
LIST_PARAMS = ("category", "mood", "limit", "offset")  # the query parameters of /api/names, in route order


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
        "keywords": list(entry.keywords),
        "related": list(entry.related),
        "faq": [{"question": f["question"], "answer": f["answer"]} for f in entry.faq],
        "datePublished": entry.datePublished,
        "lastReviewed": entry.lastReviewed,
        "url": entry_url(site, entry.slug),
        **license_of(site),
    }


def name_summary(entry: Entry, site: Site) -> dict[str, Any]:
    """A NameList item: enough to show a list and to follow `url`."""
    return {
        "slug": entry.slug,
        "title": entry.title,
        "meaning": entry.meaning,
        "categories": list(entry.categories),
        "moods": list(entry.moods),
        "url": entry_url(site, entry.slug),
    }


def list_route(category: str | None = None, mood: str | None = None, limit: int = DEFAULT_LIMIT,
               offset: int = 0) -> str:
    """The canonical path+query of a list page: defaults left out, parameters in a fixed order."""
    query: list[tuple[str, str | int]] = []
    if category:
        query.append(("category", category))
    if mood:
        query.append(("mood", mood))
    if limit != DEFAULT_LIMIT:
        query.append(("limit", limit))
    if offset:
        query.append(("offset", offset))
    return "/api/names" + (f"?{urlencode(query)}" if query else "")


def filter_summaries(items: list[dict[str, Any]], category: str | None, mood: str | None) -> list[dict[str, Any]]:
    return [
        item for item in items
        if (category is None or category in item["categories"]) and (mood is None or mood in item["moods"])
    ]


def name_list(matching: list[dict[str, Any]], *, category: str | None, mood: str | None, limit: int, offset: int,
              base_url: str, license: dict[str, str]) -> dict[str, Any]:
    """One NameList page over the already filtered, ordered summaries; `license` is `license_of(site)`."""
    total = len(matching)
    next_offset = offset + limit
    next_url = base_url + list_route(category, mood, limit, next_offset) if next_offset < total else None
    return {
        "items": matching[offset:next_offset],
        "total": total,
        "limit": limit,
        "offset": offset,
        "nextUrl": next_url,
        **license,
    }


def category_summary(category: Category, count: int, site: Site) -> dict[str, Any]:
    return {
        "slug": category.slug,
        "title": category.title,
        "emoji": category.emoji,
        "description": category.description,
        "moods": list(category.moods),
        "count": count,
        "url": category_url(site, category.slug),
    }


def category_resource(category: Category, names: list[dict[str, Any]], site: Site) -> dict[str, Any]:
    """The Category resource of `/api/categories/{slug}`, with all its names."""
    return {**category_summary(category, len(names), site), "names": names, **license_of(site)}


def category_list(items: list[dict[str, Any]], moods: list[Mood], site: Site) -> dict[str, Any]:
    return {
        "items": items,
        "total": len(items),
        "moods": [{"slug": m.slug, "title": m.title, "description": m.description} for m in moods],
        **license_of(site),
    }


def status_resource(*, site: Site, status: str, timestamp: str, names: int, categories: int, moods: int,
                    content_hash: str, checks: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
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
        "service": site.name,
        "site": site.site,
        "contentHash": content_hash,
        "checks": checks or {},
        **license_of(site),
    }

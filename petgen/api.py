"""Emit the static JSON API: names, list pages for every filter, categories, status."""

from __future__ import annotations

from petgen.bots import runtime_bots
from petgen.content import Entry, Site
from petgen.dist import DistWriter
from petgen.kb import KnowledgeBase
from petgen.resources import (
    DEFAULT_LIMIT, category_list, category_resource, category_summary, encode, license_of,
    list_route, name_list, name_resource, name_summary, status_resource,
)

DATA_FILE = "_data/index.json"


def list_filters(kb: KnowledgeBase, summaries: list[dict]) -> dict[tuple[str | None, str | None], list[dict]]:
    """Every precomputed filter with its matching summaries, in list order: none, each category, each
    mood, each non-empty category×mood pair. One pass over the summaries, not one per filter."""
    filters: dict[tuple[str | None, str | None], list[dict]] = {(None, None): summaries}
    filters.update({(c.slug, None): [] for c in kb.categories})
    filters.update({(None, m.slug): [] for m in kb.moods})
    pairs: dict[tuple[str | None, str | None], list[dict]] = {}
    for item in summaries:
        for c in item["categories"]:
            filters[c, None].append(item)
            for m in item["moods"]:
                pairs.setdefault((c, m), []).append(item)
        for m in item["moods"]:
            filters[None, m].append(item)
    filters.update({(c.slug, m.slug): pairs[c.slug, m.slug] for c in kb.categories for m in kb.moods
                    if (c.slug, m.slug) in pairs})
    return filters


def list_stem(category: str | None, mood: str | None, offset: int) -> str:
    parts = [f"category-{category}" if category else "", f"mood-{mood}" if mood else "",
             f"offset-{offset}" if offset else ""]
    return "api/names/list/" + (".".join(p for p in parts if p) or "all")


def emit_name(entry: Entry, site: Site, writer: DistWriter) -> None:
    """Write one entry's Name resource (called per entry by `emit_entries`)."""
    writer.add_hashed(f"/api/names/{entry.slug}", f"api/names/{entry.slug}", encode(name_resource(entry, site)))


def emit_api(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Write the list pages for every filter, categories, status and the runtime's data file."""
    site, license_ = kb.site, license_of(kb.site)
    summaries = [name_summary(e, site) for e in kb.entries]

    filters = list_filters(kb, summaries)
    for (category, mood), matching in filters.items():
        for offset in range(0, max(len(matching), 1), DEFAULT_LIMIT):
            page = name_list(matching, category=category, mood=mood, limit=DEFAULT_LIMIT, offset=offset,
                             base_url=site.base_url, license=license_)
            writer.add_hashed(list_route(category, mood, DEFAULT_LIMIT, offset), list_stem(category, mood, offset),
                              encode(page))

    items = []
    for category in kb.categories:
        names = filters[category.slug, None]
        items.append(category_summary(category, len(names), site))
        writer.add_hashed(f"/api/categories/{category.slug}", f"api/categories/{category.slug}",
                          encode(category_resource(category, names, site)))
    writer.add_hashed("/api/categories", "api/categories", encode(category_list(items, kb.moods, site)))

    status = status_resource(site=site, status="ok", timestamp=f"{kb.newest_review}T00:00:00Z",
                             names=len(kb.entries), categories=len(kb.categories), moods=len(kb.moods),
                             content_hash=kb.source_hash)
    writer.add_hashed("/api/status", "api/status", encode(status))

    data = {
        "site": site.__dict__,
        "sourceHash": kb.source_hash,
        "newestReview": kb.newest_review,
        "categories": [c.slug for c in kb.categories],
        "moods": [m.slug for m in kb.moods],
        "items": summaries,
        "lexicon": kb.lexicon,
        "bots": runtime_bots(kb.bots),
    }
    writer.add_file(None, DATA_FILE, encode(data), "application/json")

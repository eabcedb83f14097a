"""Emit the static JSON API: names, list pages for every filter, categories, status."""

from __future__ import annotations

import hashlib
from functools import partial

import orjson

from petgen.build.dist import DistWriter, unit_key
from petgen.build.distpack import SUMMARY_PACK, summary_pack
from petgen.content.bots import runtime_bots
from petgen.content.kb import KnowledgeBase
from petgen.content.model import FILTER_FACETS, Category, Entry, Site
from petgen.contract.resources import (
    DEFAULT_LIMIT,
    category_list,
    category_resource,
    category_summary,
    encode,
    in_category,
    license_of,
    list_route,
    name_list,
    name_resource,
    name_summary,
    status_resource,
)

DATA_FILE = "_data/index.json"


Filter = tuple[tuple[str, str], ...]  # ((name, value), …) in LIST_FILTERS order


def list_filters(kb: KnowledgeBase, summaries: list[dict]) -> dict[Filter, list[dict]]:
    """Every precomputed filter with its matching summaries, in list order: none, each category (aliases
    included), each mood, each non-empty category×mood pair, each facet value. One pass over the summaries."""
    aliases = kb.aliases
    filters: dict[Filter, list[dict]] = {(): summaries}
    filters.update({(("category", c.slug),): [] for c in kb.categories})
    filters.update({(("mood", m.slug),): [] for m in kb.moods})
    for name in FILTER_FACETS:
        filters.update({((name, value),): [] for value in kb.facets.slugs(name)})
    pairs: dict[Filter, list[dict]] = {}
    for item in summaries:
        categories = [c.slug for c in kb.categories if in_category(item, c.slug, aliases)]
        for c in categories:
            filters[("category", c),].append(item)
            for m in item["moods"]:
                pairs.setdefault((("category", c), ("mood", m)), []).append(item)
        for m in item["moods"]:
            filters[("mood", m),].append(item)
        for name in FILTER_FACETS:
            value = item[name]
            for v in value if isinstance(value, list) else [value]:
                filters.setdefault(((name, v),), []).append(item)
    filters.update({key: pairs[key] for c in kb.categories for m in kb.moods
                    if (key := (("category", c.slug), ("mood", m.slug))) in pairs})
    return filters


def list_stem(filters: Filter, offset: int) -> str:
    parts = [f"{name}-{value}" for name, value in filters] + ([f"offset-{offset}"] if offset else [])
    return "api/names/list/" + (".".join(parts) or "all")


def emit_name(entry: Entry, site: Site, writer: DistWriter) -> None:
    """Write one entry's Name resource (called per entry by `emit_entries`)."""
    writer.add_hashed(f"/api/names/{entry.slug}", f"api/names/{entry.slug}", encode(name_resource(entry, site)))


def emit_api(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Write the list pages for every filter, categories, status and the runtime's data file."""
    site, license_ = kb.site, license_of(kb.site)
    summaries = [name_summary(e, site) for e in kb.entries]

    filters = list_filters(kb, summaries)
    # Each summary is encoded once and written into every list as is (an `orjson.Fragment`: the same bytes).
    encoded = [encode(item) for item in summaries]
    fragments = {item["slug"]: orjson.Fragment(raw) for item, raw in zip(summaries, encoded)}
    # Each list page and category resource is a unit (`DistWriter.unit`) keyed by its list's size and the
    # summaries it shows: an edit that changes no summary renders none of them again.
    digests = {item["slug"]: hashlib.blake2b(raw, digest_size=12).hexdigest() for item, raw in zip(summaries, encoded)}

    def emit_page(key: Filter, matching: list[dict], offset: int) -> None:
        query = dict(key)
        page = name_list(matching, filters=query, limit=DEFAULT_LIMIT, offset=offset, base_url=site.base_url,
                         license=license_)
        page["items"] = [fragments[item["slug"]] for item in page["items"]]
        writer.add_hashed(list_route(query, DEFAULT_LIMIT, offset), list_stem(key, offset), encode(page))

    for key, matching in filters.items():
        for offset in range(0, max(len(matching), 1), DEFAULT_LIMIT):
            writer.unit(list_stem(key, offset), unit_key(str(len(matching)), *(
                digests[item["slug"]] for item in matching[offset:offset + DEFAULT_LIMIT])),
                partial(emit_page, key, matching, offset))

    def emit_category(category: Category, names: list[dict]) -> None:
        writer.add_hashed(f"/api/categories/{category.slug}", f"api/categories/{category.slug}",
                          encode(category_resource(category, [fragments[n["slug"]] for n in names], site)))

    items = []
    for category in kb.categories:
        names = filters[("category", category.slug),]
        items.append(category_summary(category, len(names), site))
        writer.unit(f"api/categories/{category.slug}", unit_key(*(digests[n["slug"]] for n in names)),
                    partial(emit_category, category, names))
    facet_counts = kb.facet_counts()
    writer.add_hashed("/api/categories", "api/categories",
                      encode(category_list(items, kb.moods, site, kb.facets, facet_counts)))

    status = status_resource(site=site, status="ok", timestamp=f"{kb.newest_review}T00:00:00Z",
                             names=len(kb.entries), categories=len(kb.categories), moods=len(kb.moods),
                             content_hash=kb.source_hash, facets=facet_counts)
    writer.add_hashed("/api/status", "api/status", encode(status))

    data = {
        "site": site.__dict__,
        "sourceHash": kb.source_hash,
        "newestReview": kb.newest_review,
        "categories": [c.slug for c in kb.categories],
        "aliases": {slug: list(facet) for slug, facet in kb.aliases.items()},
        "moods": [m.slug for m in kb.moods],
        "facets": {name: kb.facets.slugs(name) for name in FILTER_FACETS},
        "facetCounts": facet_counts,
        "items": summaries,
        "lexicon": kb.lexicon,
        "bots": runtime_bots(kb.bots),
    }
    writer.add_file(None, DATA_FILE, encode({**data, "items": list(fragments.values())}), "application/json")
    writer.add_file(None, SUMMARY_PACK, summary_pack(data, encoded), "application/octet-stream")  # what the runtime maps

"""Emit the static JSON API: names, list pages for every filter, categories, status."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from functools import partial

import orjson

from petgen.build.cache import EntryMemo
from petgen.build.dist import DistWriter, unit_key
from petgen.build.distpack import SUMMARY_PACK, citations, summary_pack
from petgen.content.bots import runtime_bots
from petgen.content.kb import KnowledgeBase
from petgen.content.model import FILTER_FACETS, Category, Entry, Site, facet_matches
from petgen.contract.resources import (
    DEFAULT_LIMIT,
    LIST_FILTERS,
    Aliases,
    category_list,
    category_resource,
    category_summary,
    encode,
    license_of,
    list_route,
    name_list,
    name_resource,
    name_summary,
    status_resource,
)
from petgen.emit.listindex import ListIndex

DATA_FILE = "_data/index.json"
LIST_INDEX = "api-lists.index"  # the last build's list filters, in the build cache (`ListIndex`)


# The fields of an entry `emit_api` reads besides its facets (a worker that writes the API keeps these and the facets
# only: petgen/build/pipeline.py, `ApiEntry`).
API_FIELDS = ("slug", "title", "meaning", "categories", "moods", *FILTER_FACETS, "related", "lastReviewed")

Filter = tuple[tuple[str, str], ...]  # ((name, value), …) in LIST_FILTERS order
Encoded = tuple[bytes, str, tuple[Filter, ...]]  # a summary as JSON, its digest, its `memberships`


class Memberships:
    """The filters a summary belongs to, in the order `list_filters` appends it to their lists: each of its
    categories (aliases included, in the order of `categories`) with the category×mood pairs, each mood, each
    facet value. Each filter is one shared tuple (`shared`), which the memo's pickle stores once."""

    def __init__(self, categories: list[str], aliases: Aliases) -> None:
        self.categories = categories
        self.themes = {c: i for i, c in enumerate(categories) if c not in aliases}
        self.aliases = [(i, aliases[c]) for i, c in enumerate(categories) if c in aliases]
        self.shared: dict[Filter, Filter] = {}
        self.parts: dict[tuple, tuple[Filter, ...]] = {}  # categories and moods -> their filters
        self.facets: dict[tuple, tuple[list[int], tuple[Filter, ...]]] = {}  # facet values -> their aliases, filters

    def __call__(self, item: dict) -> tuple[Filter, ...]:
        # Many entries share their categories and moods, more their facet values: each part made once. An alias is
        # a facet value (`_alias`: of a filter facet), so the aliases an entry is in are kept by its facet values.
        values = tuple([tuple(v) if isinstance(v := item[name], list) else v for name in FILTER_FACETS])
        by_facets = self.facets.get(values)
        if by_facets is None:
            by_facets = self.facets[values] = (
                [i for i, facet in self.aliases if facet_matches(facet, item[facet[0]])],
                self._shared([((name, v),) for name, value in zip(FILTER_FACETS, values)
                              for v in (value if isinstance(value, tuple) else [value])]))
        aliased, facets = by_facets
        themes = self.themes
        found = {themes[c] for c in item["categories"] if c in themes}  # `in_category`, without a loop over all
        found.update(aliased)
        taxonomy = (*sorted(found), None, *item["moods"])
        made = self.parts.get(taxonomy)
        if made is None:
            made = self.parts[taxonomy] = self._shared(self._taxonomy(sorted(found), item["moods"]))
        return made + facets

    def _taxonomy(self, found: list[int], moods: list[str]) -> list[Filter]:
        keys: list[Filter] = []
        for c in map(self.categories.__getitem__, found):
            keys.append((("category", c),))
            keys += [(("category", c), ("mood", m)) for m in moods]
        return keys + [(("mood", m),) for m in moods]

    def _shared(self, keys: list[Filter]) -> tuple[Filter, ...]:
        shared = self.shared
        return tuple([shared.setdefault(key, key) for key in keys])


def list_filters(kb: KnowledgeBase, members: list[tuple[Filter, ...]],
                 index: ListIndex | None = None) -> dict[Filter, list[int]]:
    """Every precomputed filter with the documents (positions in list order) it selects: none, each category
    (aliases included), each mood, each non-empty category×mood pair, each facet value; from each document's
    `memberships`, or from the last build's filters patched where documents changed (`index`, which then holds
    this build's)."""
    filters: dict[Filter, list[int]] = {(): list(range(len(members)))}
    filters.update({(("category", c.slug),): [] for c in kb.categories})
    filters.update({(("mood", m.slug),): [] for m in kb.moods})
    for name in FILTER_FACETS:
        filters.update({((name, value),): [] for value in kb.facets.slugs(name)})
    if index is not None and index.patched:
        found = {key: docs for key, docs in index.patch(members.__getitem__).items() if docs}
    else:
        found = {}
        for doc, keys in enumerate(members):
            for key in keys:
                selected = found.get(key)
                if selected is None:
                    found[key] = [doc]
                else:
                    selected.append(doc)
        if index is not None:
            index.members = found.copy()
    pairs = {key: found.pop(key) for key in [key for key in found if len(key) == 2]}
    for key, selected in found.items():  # the vocabulary's order first, then values outside it as first found
        filters[key] = selected
    filters.update({key: pairs[key] for c in kb.categories for m in kb.moods
                    if (key := (("category", c.slug), ("mood", m.slug))) in pairs})
    return filters


def listed_counts(kb: KnowledgeBase, filters: dict[Filter, list[int]]) -> dict[str, dict[str, int]]:
    """The entries per value of each filter facet that has a vocabulary, as `KnowledgeBase.facet_counts` has them:
    the sizes of its lists (`list_filters`), without a look at an entry. The checks let an entry list no value
    outside such a vocabulary, nor one twice, so each of its entries is in the list of each of its values once."""
    return {name: {value: len(filters[((name, value),)]) for value in values}
            for name in FILTER_FACETS if (values := kb.facets.slugs(name))}


def list_stem(filters: Filter, offset: int) -> str:
    parts = [f"{name}-{value}" for name, value in filters] + ([f"offset-{offset}"] if offset else [])
    return "api/names/list/" + (".".join(parts) or "all")


def emit_name(entry: Entry, site: Site, writer: DistWriter) -> None:
    """Write one entry's Name resource (called per entry by `emit_entries`)."""
    writer.add_hashed(f"/api/names/{entry.slug}", f"api/names/{entry.slug}", encode(name_resource(entry, site)))


def summaries_memo(kb: KnowledgeBase) -> EntryMemo:
    """Each entry's summary as JSON, its digest and `memberships`, kept in the cache between builds."""
    context = unit_key(kb.site.base_url, *(f"{c.slug}={c.facet}" for c in kb.categories))
    return EntryMemo(kb.cache_root, "summaries", context)


def encoded_summary(entry: Entry, site: Site, member: Memberships, keyed: bool = True) -> Encoded:
    """An entry's `Encoded` summary (without its digest unless `keyed`)."""
    item = name_summary(entry, site)
    raw = encode(item)
    return raw, hashlib.blake2b(raw, digest_size=12).hexdigest() if keyed else "", member(item)


def emit_api(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Write the list pages for every filter, categories, status and the runtime's data file."""
    site, license_ = kb.site, license_of(kb.site)
    memo = summaries_memo(kb)
    keyed = kb.cache_root is not None  # without a cache no build after this one looks at the units' keys
    make = partial(encoded_summary, site=site, member=Memberships([c.slug for c in kb.categories], kb.aliases),
                   keyed=keyed)
    # Each summary is encoded once (or taken from the last build's) and written into every list as is (an
    # `orjson.Fragment`: the same bytes).
    entries = kb.entries
    slugs = [e.slug for e in entries]
    files = list(map(kb.keys.get, slugs))  # the key of each entry's file, by position
    found: list[Encoded] = memo.get_all(files, lambda i: make(entries[i]))
    memo.save()
    encoded, digests, memberships = map(list, zip(*found)) if found else ([], [], [])
    fragments = list(map(orjson.Fragment, encoded))
    index = ListIndex(kb.cache_root / LIST_INDEX, writer.context, files
                      ) if kb.cache_root is not None and writer.context else None
    filters = list_filters(kb, memberships, index)
    # Each list page and category resource is a unit (`DistWriter.unit`) keyed by its list's size and the
    # summaries it shows: an edit that changes no summary renders none of them again.

    def emit_page(key: Filter, matching: list[int], offset: int) -> None:
        query = dict(key)
        page = name_list(matching, filters=query, limit=DEFAULT_LIMIT, offset=offset, base_url=site.base_url,
                         license=license_)
        page["items"] = list(map(fragments.__getitem__, page["items"]))
        writer.add_hashed(list_route(query, DEFAULT_LIMIT, offset), list_stem(key, offset), encode(page))

    def key_of(name: str, key: Filter, start: int, stop: int, *size: str) -> str:
        """A unit's key: as the last build's if no document it shows changed (`ListIndex.unchanged`)."""
        if not keyed:
            return ""
        kept = index.unchanged(name, key, start, stop, filters[key]) if index is not None else None
        made = kept or unit_key(*size, *map(digests.__getitem__, filters[key][start:stop]))
        return index.key(name, made) if index is not None else made

    def pages() -> Iterator[tuple[str, str, Callable[[], None]]]:
        for key, matching in filters.items():
            for offset in range(0, max(len(matching), 1), DEFAULT_LIMIT):
                stem = list_stem(key, offset)
                yield (stem, key_of(stem, key, offset, offset + DEFAULT_LIMIT, str(len(matching))),
                       partial(emit_page, key, matching, offset))

    writer.units_of(pages())  # the pages taken over one after another, at once

    def emit_category(category: Category, names: list[int]) -> None:
        writer.add_hashed(f"/api/categories/{category.slug}", f"api/categories/{category.slug}",
                          encode(category_resource(category, list(map(fragments.__getitem__, names)), site)))

    items = []
    for category in kb.categories:
        names = filters[("category", category.slug),]
        items.append(category_summary(category, len(names), site))
        name = f"api/categories/{category.slug}"
        writer.unit(name, key_of(name, (("category", category.slug),), 0, len(names)),
                    partial(emit_category, category, names))
    if index is not None:
        index.save()
    facet_counts = kb.facet_counts(known=listed_counts(kb, filters))
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
        "items": fragments,
        "lexicon": kb.lexicon,
        "bots": runtime_bots(kb.bots),
        "cited": citations(entries, slugs),  # per entry, how many others name it as related (petgen/build/distpack.py)
    }
    writer.add_file(None, DATA_FILE, encode(data), "application/json")
    # What `filter_documents` finds in the data file, from the filters (an entry lists a value once).
    vocabulary = {"category": data["categories"], "mood": data["moods"], **data["facets"]}
    docs = {(name, value): filters.get(((name, value),), []) for name in LIST_FILTERS
            for value in vocabulary.get(name, [])}
    known = (slugs, [e.title for e in entries], docs)
    # What the runtime maps (as it would make it from the data file).
    writer.add_file(None, SUMMARY_PACK, summary_pack(data, encoded, known=known), "application/octet-stream")

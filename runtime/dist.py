"""The built dist/, loaded into memory once: every route's bytes with its headers ready to send."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from petgen.content import Site, facet_matches
from petgen.dist import IMMUTABLE, MANIFEST, REVALIDATE
from petgen.lexicon import Lexicon
from petgen.resources import in_category
from petgen.search import words
from petgen.searchquery import SearchIndex
from petgen.security import RAW_SECURITY_HEADERS

Headers = list[tuple[bytes, bytes]]


class DistNotFound(Exception):
    """dist/ is missing or incomplete: run `petgen build`."""


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    etag: bytes  # quoted, as sent
    headers: Headers  # content-type, etag, cache-control, content-length, the security headers


def prepared_file(body: bytes, etag: str, content_type: str, cache_control: str,
                  extra: dict[str, str] | None = None) -> StaticFile:
    quoted = f'"{etag}"'.encode()
    return StaticFile(body, quoted, [
        (b"content-type", content_type.encode()),
        (b"etag", quoted),
        (b"cache-control", cache_control.encode()),
        (b"content-length", str(len(body)).encode()),
        *RAW_SECURITY_HEADERS,
        *((name.lower().encode(), value.encode()) for name, value in (extra or {}).items()),
    ])


@dataclass
class Dist:
    root: Path
    manifest: dict[str, Any]
    site: Site
    routes: dict[str, StaticFile]  # clean routes (path or path?query) and hashed file paths
    items: list[dict[str, Any]]  # name summaries in list order
    categories: list[str]
    moods: list[str]
    aliases: dict[str, tuple[str, str]]  # alias category -> (facet, value)
    facets: dict[str, list[str]]  # filterable facet -> its values
    facet_counts: dict[str, dict[str, int]]
    source_hash: str
    newest_review: str
    not_found_html: bytes
    search: SearchIndex
    lexicon_index: Lexicon
    bots: list[dict[str, Any]] = field(default_factory=list)  # name, quota, keys (kid, x): see petgen/bots.py

    @cached_property
    def slugs(self) -> set[str]:
        return {item["slug"] for item in self.items}

    @cached_property
    def in_category(self) -> dict[str, frozenset[int]]:
        """Category slug -> documents (indexes into items and the search index's docs); an alias
        category's documents are those with its facet value."""
        return {c: frozenset(d for d, item in enumerate(self.items) if in_category(item, c, self.aliases))
                for c in self.categories}

    def in_facet(self, name: str, value: str) -> frozenset[int]:
        """Documents with a facet value (`relationship` `partner`)."""
        key = (name, value)
        found = self._in_facet.get(key)
        if found is None:
            found = self._in_facet[key] = frozenset(
                d for d, item in enumerate(self.items) if facet_matches(key, item[name]))
        return found

    @cached_property
    def _in_facet(self) -> dict[tuple[str, str], frozenset[int]]:
        return {}

    def mask(self, kind: str, value: str) -> np.ndarray:
        """Documents as a boolean array over all documents: `kind` is "mood", "category" or a facet."""
        key = (kind, value)
        found = self._masks.get(key)
        if found is None:
            docs = (self.in_mood.get(value, frozenset()) if kind == "mood" else
                    self.in_category.get(value, frozenset()) if kind == "category" else self.in_facet(kind, value))
            found = np.zeros(len(self.items), dtype=bool)
            found[np.fromiter(docs, dtype=np.int64, count=len(docs))] = True
            self._masks[key] = found
        return found

    @cached_property
    def _masks(self) -> dict[tuple[str, str], np.ndarray]:
        return {}

    @cached_property
    def classic_mask(self) -> np.ndarray:
        """1.0 for the classics (category klassiker), 0.0 for the others."""
        return self.mask("category", "klassiker").astype(np.float64)

    @cached_property
    def in_mood(self) -> dict[str, frozenset[int]]:
        return {m: frozenset(d for d, item in enumerate(self.items) if m in item["moods"]) for m in self.moods}

    @cached_property
    def docs_by_title(self) -> dict[str, list[int]]:
        """Entry titles as folded words (`Honey Bunny` → `honey bunny`) -> their documents."""
        found: dict[str, list[int]] = {}
        for doc, item in enumerate(self.items):
            found.setdefault(" ".join(words(item["title"])), []).append(doc)
        return found

    @cached_property
    def title_words(self) -> frozenset[str]:
        return frozenset(self.docs_by_title)

    @classmethod
    def load(cls, root: Path) -> Dist:
        """Read the manifest and every file it names; raise DistNotFound if dist is unusable."""
        try:
            manifest = orjson.loads((root / MANIFEST).read_bytes())
            data = orjson.loads((root / manifest["data"]).read_bytes())
            routes: dict[str, StaticFile] = {}
            for route, info in manifest["routes"].items():
                body = (root / info["file"]).read_bytes()
                routes[route] = prepared_file(body, info["etag"], info["type"], REVALIDATE, info.get("headers"))
                if info["hashed"]:
                    routes["/" + info["file"]] = prepared_file(body, info["etag"], info["type"], IMMUTABLE)
            not_found = (root / manifest["notFound"]).read_bytes()
            search = load_search_index(root, manifest)
        except (OSError, KeyError, ValueError) as exc:
            raise DistNotFound(f"{root} is not a complete build ({exc}); run `petgen build`") from exc
        return cls(root=root, manifest=manifest, site=Site(**data["site"]), routes=routes, items=data["items"],
                   categories=data["categories"], moods=data["moods"],
                   aliases={slug: (facet[0], facet[1]) for slug, facet in data["aliases"].items()},
                   facets=data["facets"], facet_counts=data["facetCounts"], source_hash=data["sourceHash"],
                   newest_review=data["newestReview"], not_found_html=not_found, search=search,
                   lexicon_index=Lexicon.from_data(data.get("lexicon", {})), bots=data.get("bots", []))


def load_search_index(root: Path, manifest: dict[str, Any]) -> SearchIndex:
    """Read the index manifest and every shard it lists (the same files a browser could fetch)."""
    index = orjson.loads((root / manifest["search"].lstrip("/")).read_bytes())
    shards = (orjson.loads((root / path.lstrip("/")).read_bytes()) for path in index["shards"].values())
    return SearchIndex.from_shards(index["docs"], shards)

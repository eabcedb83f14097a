"""The built dist/ as the runtime holds it: the route table, the name summaries and the search index.

The files themselves stay on disk and are read when a request needs them (runtime/builds/files.py); every
file of a build is read through the directory handle this build was loaded from, so a reload sees
one build only, even while `petgen build` swaps the next one in.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from petgen.build.dist import MANIFEST
from petgen.build.distpack import ROUTE_HASH, ROUTE_PACK, SUMMARY_PACK, route_pack, summary_pack
from petgen.content.lexicon import Lexicon
from petgen.content.model import Site
from petgen.content.text import initial, length_class
from petgen.search.index import words
from petgen.search.packfile import Pack
from petgen.search.query import SearchIndex
from petgen.search.stored import ENGINE_ROUTE, Recent
from runtime.builds.files import BuildDir, Headers, LargeFile, Routes, StaticFile, prepared_file
from runtime.builds.routes import RouteTable
from runtime.builds.summaries import Summaries

__all__ = ["Dist", "DistNotFound", "Headers", "LargeFile", "StaticFile", "load_search_index", "prepared_file"]

TITLE_MASKS = 64  # title masks kept ("ohne Maus": the titles containing a word)
STATIC_CACHE = 16 * 1024 * 1024  # bytes of small files kept in memory per build (PETGEN_STATIC_CACHE_MB)


class DistNotFound(Exception):
    """dist/ is missing or incomplete: run `petgen build`."""


@dataclass
class Dist:
    root: Path
    manifest: dict[str, Any]
    site: Site
    routes: Routes  # clean routes (path or path?query) and hashed file paths
    items: Summaries  # name summaries in list order
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
    bots: list[dict[str, Any]] = field(default_factory=list)  # name, quota, keys (kid, x): see petgen/content/bots.py

    @cached_property
    def slugs(self) -> set[str]:
        return set(self.items.slugs())

    def mask(self, kind: str, value: str) -> np.ndarray:
        """Documents as a boolean array over all documents: `kind` is "mood", "category", a facet, "letter" or
        "length"."""
        key = (kind, value)
        found = self._masks.get(key)
        if found is None:
            if kind == "letter":  # the A–Z letter of the title, as the /a-z/ pages group them
                found = self._initials == value
            elif kind == "length":  # how long the title is to say (petgen.content.text.length_class)
                found = np.isin(self._lengths, ["einsilbig", "kurz"] if value == "kurz" else [value])
            else:
                found = np.zeros(len(self.items), dtype=bool)
                found[self.items.with_value(kind, value)] = True  # the summaries' filter index (builds/summaries.py)
            self._masks[key] = found
        return found

    @cached_property
    def _initials(self) -> np.ndarray:
        """Every title's A–Z letter, computed once for all the letters a question may ask for."""
        return np.array([initial(title) for title in self.items.titles()], dtype="<U1")

    @cached_property
    def _lengths(self) -> np.ndarray:
        return np.array([length_class(title) for title in self.items.titles()], dtype="<U9")

    @cached_property
    def _masks(self) -> dict[tuple[str, str], np.ndarray]:
        return {}

    @cached_property
    def classic_mask(self) -> np.ndarray:
        """1.0 for the classics (category klassiker), 0.0 for the others."""
        return self.mask("category", "klassiker").astype(np.float64)

    @cached_property
    def cited_share(self) -> np.ndarray:
        """Per document, 0..1: how many other entries name it as related, on a log scale against the most named
        (a sign of how common a name is: Schatz, Maus, Bär)."""
        cited = np.log1p(self.items.cited.astype(np.float64))
        top = float(cited.max()) if len(cited) else 0.0
        return cited / top if top > 0 else cited

    @cached_property
    def docs_by_title(self) -> dict[str, list[int]]:
        """Entry titles as folded words (`Honey Bunny` → `honey bunny`) -> their documents."""
        found: dict[str, list[int]] = {}
        for doc, title in enumerate(self.items.titles()):
            found.setdefault(" ".join(words(title)), []).append(doc)
        return found

    @cached_property
    def _title_text(self) -> tuple[str, np.ndarray, list[list[int]]]:
        """Every folded title, each after a newline, in one string: a word is found in all titles by one scan."""
        titles = list(self.docs_by_title)
        text = "".join(f"\n{t}" for t in titles)
        starts = np.cumsum([0] + [len(t) + 1 for t in titles[:-1]]) if titles else np.zeros(0, dtype=np.int64)
        return text, starts, [self.docs_by_title[t] for t in titles]

    @cached_property
    def _title_masks(self) -> Recent:
        return Recent(TITLE_MASKS)

    def titles_with(self, word: str, *, at_start: bool = False) -> np.ndarray:
        """Documents whose folded title contains `word` (or starts with it), as a boolean array; the last
        TITLE_MASKS asked for are kept."""
        key = hash((word, at_start))
        found = self._title_masks.get(key)
        if found is None or found[0] != (word, at_start):
            text, starts, docs = self._title_text
            found_docs = np.zeros(len(self.items), dtype=bool)
            if word and "\n" not in word:
                pattern = re.compile(("\n" if at_start else "") + re.escape(word))
                hits = {int(np.searchsorted(starts, m.start(), side="right")) - 1 for m in pattern.finditer(text)}
                for title in hits:
                    found_docs[docs[title]] = True
            found = self._title_masks.put(key, ((word, at_start), found_docs))
        return found[1]

    @cached_property
    def title_words(self) -> frozenset[str]:
        return frozenset(self.docs_by_title)

    @classmethod
    def load(cls, root: Path, static_cache: int = STATIC_CACHE) -> Dist:
        """Map the route table, the summaries and the search index (not the files the routes name); raise
        DistNotFound if dist is unusable."""
        try:
            build = BuildDir(root)
            table = RouteTable(mapped(build, ROUTE_PACK, lambda: route_pack_of(build)))
            if table.pack.meta.get("manifestSize") not in (None, build.size(MANIFEST)):
                raise ValueError(f"{MANIFEST} is not the one written with {ROUTE_PACK}")
            if table.pack.meta.get("routeHash") != ROUTE_HASH:  # written by an earlier petgen: made again, in memory
                table = RouteTable(route_pack_of(build))
            manifest = dict(table.manifest)
            search = SearchIndex.load(build.path / table.file_of(ENGINE_ROUTE))  # through the handle: the same build
            summaries = mapped(build, SUMMARY_PACK, lambda: Pack(summary_pack(orjson.loads(build.read(manifest["data"])))))
            data = summaries.meta["data"]
            aliases = {slug: (facet[0], facet[1]) for slug, facet in data["aliases"].items()}
            items = Summaries(summaries)
            not_found = build.read(manifest["notFound"])
        except (OSError, KeyError, ValueError) as exc:
            raise DistNotFound(f"{root} is not a complete build ({exc}); run `petgen build`") from exc
        routes = Routes(build, table, static_cache)
        return cls(root=root, manifest=manifest, site=Site(**data["site"]), routes=routes, items=items,
                   categories=data["categories"], moods=data["moods"],
                   aliases=aliases,
                   facets=data["facets"], facet_counts=data["facetCounts"], source_hash=data["sourceHash"],
                   newest_review=data["newestReview"], not_found_html=not_found, search=search,
                   lexicon_index=Lexicon.from_data(data.get("lexicon", {})), bots=data.get("bots", []))


M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_malloc_arenas(arenas: int = 2) -> None:
    """At most `arenas` malloc arenas (glibc makes up to 8 per core, one per thread that allocates while
    another does, each reserving 64 MB of address space and fragmenting apart). The runtime's threads
    (the MCP import, webhook and reload workers) take turns under the GIL anyway; with one arena each,
    a process limited in address space (`ulimit -v`) aborted in the MCP import. Like MALLOC_ARENA_MAX=2,
    which, when set, wins."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # not glibc
        pass


def mapped(build: BuildDir, name: str, otherwise: Callable[[], Pack]) -> Pack:
    """The pack file `name` of the build, mapped into memory; for a build written before there were
    such files, `otherwise()`: the same arrays made from its JSON, in memory."""
    try:
        return Pack.open(build.path / name)
    except FileNotFoundError:
        return otherwise()


def route_pack_of(build: BuildDir) -> Pack:
    manifest = orjson.loads(build.read(MANIFEST))
    return Pack(route_pack(manifest.pop("routes"), manifest))


def load_search_index(root: Path, manifest: dict[str, Any]) -> SearchIndex:
    """Map the build's compact search index (the file its manifest routes at ENGINE_ROUTE) into memory:
    nothing is parsed or copied, and every worker shares the file's pages through the OS page cache. The
    mapping stays valid when a later build swaps this one out and deletes it."""
    return SearchIndex.load(root / manifest["routes"][ENGINE_ROUTE]["file"])

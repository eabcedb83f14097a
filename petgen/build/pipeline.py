"""`petgen build`: content/ → dist/, a pure function of the content (see ARCHITECTURE.md)."""

from __future__ import annotations

import gc
import os
import pickle
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from petgen import __version__
from petgen.build.dist import (
    DistWriter,
    Routes,
    Unit,
    manifest_stamp,
    new_build_dir,
    retire,
    swap_in,
    sweep,
    trim_heap,
)
from petgen.build.forked import Forked, worker_pool
from petgen.build.incremental import (
    BuildState,
    Layered,
    Marshalled,
    Target,
    TreeWriter,
    load_state,
    recycling,
    release,
    save_state,
    search_state_path,
    spare_path,
    target_tree,
)
from petgen.build.routelayout import LastRules, Layout, last_records, stored_layout
from petgen.build.routeparts import RouteParts
from petgen.content.kb import PARALLEL_THRESHOLD as PARSE_THRESHOLD
from petgen.content.kb import KnowledgeBase, load_knowledge_base
from petgen.content.model import Entry
from petgen.emit.api import API_FIELDS, DATA_FILE, emit_api
from petgen.emit.entries import PARALLEL_THRESHOLD as EMIT_THRESHOLD
from petgen.emit.entries import Result as EntriesResult
from petgen.emit.entries import (
    emit_changed_entries,
    emit_entries,
    entries_context,
    entry_keys,
    entry_routes,
    shared_claims,
    submit_entries,
)
from petgen.emit.searchindex import INDEX_ROUTE, Documents, documents, emit_search_index, entry_digests
from petgen.emit.site import PageRenderer, compile_templates, emit_site
from petgen.emit.sitemap import emit_sitemap
from petgen.emit.templating import keep_compiled_templates

if TYPE_CHECKING:  # concurrent.futures: not imported by an incremental build (petgen/build/forked.py)
    from concurrent.futures import Executor, Future

    from petgen.build.files import Scanned

MANIFEST_VERSION = 1
WriterResult = tuple[Routes, dict[str, str], dict[str, Unit]]  # what a writer in a worker wrote, to `merge`
PICKLED_SLICE = 1000  # values per pickle handed to a worker's task (`_pickled`)
INCREMENTAL_ENTRIES = 200  # an incremental build renders up to this many entries (or a tenth of them)


@dataclass
class BuildResult:
    kb: KnowledgeBase
    out: Path
    files: int
    routes: int
    seconds: float
    changed: int | None = None  # files written, linked or removed by an incremental build (None: a full build)
    units: int = 0  # groups of files keyed by their inputs (`DistWriter.unit`): list pages, the search index
    reused: int = 0  # of these, taken over from the last build unchanged

    def summary(self) -> str:
        warnings = len(self.kb.warnings)
        how = f", {self.changed} changed" if self.changed is not None else ""
        return (f"Built {len(self.kb.entries)} names, {len(self.kb.categories)} categories, "
                f"{len(self.kb.moods)} moods → {self.routes} routes, {self.files} files{how} in {self.out} "
                f"({self.seconds:.2f} s{f', {warnings} warnings' if warnings else ''})")


def build(content_dir: Path, out_dir: Path, *, base_url: str | None = None, strict: bool = False,
          cache_dir: Path | None = None, progress: Callable[[int], None] | None = None,
          runtime_origin: str | None = None, signed_proxies: bool = False,
          workers: int | None = None, scanning: Forked[Scanned] | None = None) -> BuildResult:
    """Load, validate, emit everything into a tree that no runtime reads, then swap it in for `out_dir`.

    `cache_dir` holds parsed entries between builds (petgen/build/cache.py) and the state that lets the next
    build rewrite only what changed (petgen/build/incremental.py); None parses every file and writes every file.
    `runtime_origin` (scheme://host[:port]) is where the CDN's `_redirects` send what only the runtime answers;
    `signed_proxies` has Netlify sign those requests (petgen/emit/redirects.py, SIGNING_SECRET_ENV).
    `progress`, if given, is called with counts of entries done: once while loading, once while writing.
    `workers` caps the worker processes (None: one per core; 1: everything in this process; the output is the
    same bytes either way). `scanning`: the entry files' scan, begun already (`petgen.build.files.prescan`).
    """
    started = time.perf_counter()
    keep_compiled_templates(cache_dir / "templates" if cache_dir is not None else None)
    state = load_state(cache_dir, out_dir)
    workers = workers if workers is not None else (os.cpu_count() or 1)
    with collector_paused(), early_workers(content_dir, full=state is None, workers=workers) as pool:
        begun: list[Begun] = []
        edits: list[Edit] = []

        def begin(kb: KnowledgeBase) -> None:  # the workers write while this process checks across entries
            begun.append(Begun.start(Outputs(kb, cache_dir, runtime_origin, signed_proxies, out_dir), out_dir,
                                     PageRenderer(kb), pool, workers))

        def begin_edit(kb: KnowledgeBase) -> None:  # a child writes part of an incremental build meanwhile
            assert state is not None
            edits.append(Edit.start(Outputs(kb, cache_dir, runtime_origin, signed_proxies, out_dir), out_dir, state))

        try:
            kb = load_knowledge_base(content_dir, base_url=base_url, strict=strict, progress=progress,
                                     cache_dir=cache_dir, pool=pool, workers=workers,
                                     before_checks=begin if pool is not None else
                                     begin_edit if state is not None and cache_dir is not None else None,
                                     while_parsing=compile_templates if pool is not None else None,
                                     scanning=scanning)
        except BaseException:
            for early in begun:
                early.abandon()
            for edit in edits:
                edit.abandon()
            raise
        edit = edits[0] if edits else None
        outputs = (begun[0].outputs if begun else edit.outputs if edit else
                   Outputs(kb, cache_dir, runtime_origin, signed_proxies, out_dir))
        pages = begun[0].pages if begun else edit.pages if edit else PageRenderer(kb)
        keys = edit.entry_keys() if edit else entry_keys(kb, pages) if cache_dir is not None else {}
        if edit is not None and edit.writer is not None:
            writer: DistWriter = edit.finish()
            changed: int | None = cast(TreeWriter, writer).changed
            if progress:
                progress(len(kb.entries))
        else:
            writer, changed = build_full(outputs, out_dir, pages, keys, state, progress, pool, workers,
                                         begun[0] if begun else None), None
    return BuildResult(kb, out_dir, writer.files, len(writer.routes), time.perf_counter() - started, changed,
                       len(writer.units), writer.reused)


@dataclass
class Begun:
    """The first steps of a full build: a fresh tree, and (with a pool) its workers handed the search index and
    every entry to write. Taken as soon as the entries are parsed, before the checks across entries, which
    this process then runs while the workers write (`load_knowledge_base`'s `before_checks`); if the checks
    fail, `abandon` discards it all."""

    outputs: Outputs
    pages: PageRenderer
    tmp: Path
    writer: DistWriter
    search: Future[WriterResult] | None
    entries: list[Future[EntriesResult]] | None
    api: Future[WriterResult] | None = None

    @classmethod
    def start(cls, outputs: Outputs, out_dir: Path, pages: PageRenderer, pool: Executor | None,
              workers: int = 1) -> Begun:
        """Every worker of `pool` (`workers` of them) is handed two chunks of entries at once, then the search index
        (the longest single task of the emit stage: handed out early, it does not finish last) and the JSON API
        (`api_in`), the rest of the entries after them to whichever is free. The index's documents and the API's
        rows take a fifth of a second to make and pickle at 10,000 entries, a second at 50,000, which the
        workers spend on those chunks (handed out first, they had kept the workers waiting as long)."""
        tmp = new_build_dir(out_dir)
        begun = cls(outputs, pages, tmp, DistWriter(tmp, context=pages.context_key), None, None)
        try:
            if pool is not None:
                kb, context = outputs.kb, entries_context(outputs.kb, begun.writer, pages)
                begun.entries = submit_entries(pool, context, kb.packed[:2 * workers])
                begun.search = outputs.search_in(pool, begun.writer)
                begun.api = outputs.api_in(pool, begun.writer)
                begun.entries += submit_entries(pool, context, kb.packed[2 * workers:], 2 * workers)
        except BaseException:
            begun.abandon()
            raise
        return begun

    def abandon(self) -> None:
        """Stop the workers' part (what has not started is cancelled, what has is waited for) and remove the tree."""
        futures = [f for f in [self.search, self.api, *(self.entries or [])] if f is not None]
        from concurrent.futures import wait

        for future in futures:
            future.cancel()
        wait(futures)
        shutil.rmtree(self.tmp, ignore_errors=True)


@dataclass
class Outputs:
    """What a build emits besides the entries' own files, with the options that shape it."""

    kb: KnowledgeBase
    cache_dir: Path | None
    runtime_origin: str | None
    signed_proxies: bool
    out_dir: Path

    @property
    def search_state(self) -> Path | None:
        """Where the cache keeps the search index with what it was made of (petgen/search/update.py)."""
        return search_state_path(self.cache_dir, self.out_dir) if self.cache_dir is not None else None

    def emit_rest(self, writer: DistWriter, searching: bool = False, api: bool = True) -> None:
        """The list pages, search index, site and discovery documents (while the entries are written); the
        search index only if not `searching` elsewhere (`search_in`), the JSON API only if `api` (not `api_in`)."""
        from petgen.emit.discovery import emit_openapi_and_discovery  # see `_emit_child_part`

        if not searching:
            emit_search_index(self.kb, writer, state=self.search_state)
        if api:
            emit_api(self.kb, writer)
        emit_openapi_and_discovery(self.kb, writer)
        emit_site(self.kb, writer)

    def search_in(self, pool: Executor | None, writer: DistWriter) -> Future[WriterResult] | None:
        """Have a worker of `pool` (the early workers, which parsed the entries and are about to write them)
        build and write the search index, handed its documents, between chunks of entries; None without a
        pool. A 50,000-entry index costs seconds of CPU that would otherwise follow the list pages on this
        process's critical path, while the workers' share of the writing is the lighter one."""
        if pool is None:
            return None
        return pool.submit(_emit_search_task, writer.root, writer.context, _pickled(documents(self.kb)),
                           self.search_state)

    def api_in(self, pool: Executor | None, writer: DistWriter) -> Future[WriterResult] | None:
        """Have a worker of `pool` write the JSON API (`emit_api`), handed the knowledge base without its entries
        and of each entry the fields the API reads (`ApiEntry`, a tenth of what the entry pickles to); None without
        a pool. The API is a second of CPU at 10,000 entries, which would otherwise be this process's: with the
        checks across entries, the site and the discovery documents it had the longest share of a full build,
        while the workers' share (the entries, the search index) left room for it."""
        if pool is None:
            return None
        return pool.submit(_emit_api_task, writer.root, writer.context, api_handoff(self.kb))

    def emit_index_files(self, writer: DistWriter, pool: Executor | None = None) -> None:
        """The files that list all others, once they are written: the sitemap, then the manifest with
        `_redirects` and `_headers` (those two by the idle workers of `pool`, if any)."""
        emit_sitemap(self.kb, writer)
        self.emit_manifest(writer, pool=pool)

    def emit_manifest(self, writer: DistWriter, parts: RouteParts | None = None, pool: Executor | None = None,
                      last: LastRules | None = None) -> Layout | None:
        """The manifest with `_redirects` and `_headers`, once every other file is written (`parts`: of some routes,
        made ahead; `last`: the last build's files, to patch)."""
        return emit_manifest(self.kb, writer, self.runtime_origin, self.signed_proxies, parts, pool, last)


def _pickled(values: list) -> list[bytes]:
    """`values` pickled a slice at a time, for a worker's task that unpickles them itself (`_emit_search_task`,
    `_emit_api_task`), so that nothing else holds them once the task is done with them. One pickle of the whole list
    would hold the interpreter lock as long as it takes (half a second at 50,000 entries), and the executor's
    threads could not hand the workers their chunks of entries meanwhile: they ran out of work."""
    return [pickle.dumps(values[i:i + PICKLED_SLICE], protocol=pickle.HIGHEST_PROTOCOL)
            for i in range(0, len(values), PICKLED_SLICE)]


def _unpickled(slices: list[bytes]) -> list:
    """The values `_pickled` made `slices` of."""
    return [value for blob in slices for value in pickle.loads(blob)]


def api_handoff(kb: KnowledgeBase) -> tuple[bytes, list[bytes]]:
    """What `_emit_api_task` is handed, pickled: `kb` without its entries with the fields the API reads (`ApiEntry`),
    and each entry's values of them, in list order."""
    fields = ApiEntry.fields(kb)
    rows = [tuple([getattr(entry, name) for name in fields]) for entry in kb.entries]
    return pickle.dumps((replace(kb, entries=[], packed=[], warnings=[]), fields)), _pickled(rows)


def _emit_search_task(root: Path, context: str, docs: list[bytes], state: Path | None) -> WriterResult:
    """`emit_search_index` in a worker, into the build's tree, of the `_pickled` documents; the routes, files and unit
    go back to the build."""
    writer = DistWriter(root, context=context)
    emit_search_index(None, writer, _unpickled(docs), state=state)
    return _handed_back(writer)


def _emit_api_task(root: Path, context: str, handed: tuple[bytes, list[bytes]]) -> WriterResult:
    """`emit_api` in a worker, into the build's tree, of `api_handoff`: the knowledge base with the entries whose
    fields are the rows (in list order); the routes, files and units go back to the build."""
    writer = DistWriter(root, context=context)
    kb, fields = pickle.loads(handed[0])
    kb = replace(kb, entries=cast(list[Entry], [ApiEntry(dict(zip(fields, row))) for row in _unpickled(handed[1])]))
    emit_api(kb, writer)
    del kb
    return _handed_back(writer)


def _handed_back(writer: DistWriter) -> WriterResult:
    """What a worker's task wrote, for the build; the memory the task freed is given back to the system first.
    Python keeps freed memory for its next objects, and the worker goes on to write entries, which need far less
    than an index or the API did (at 10,000 entries, 75 and 40 MB of the 190 and 110 MB they had held)."""
    trim_heap()
    return writer.routes, writer.written, writer.units


class ApiEntry:
    """An entry's fields that `emit_api` reads (`fields`): reading another raises AttributeError (unlike an `Entry`
    without it, which a dataclass default would stand in for)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    @staticmethod
    def fields(kb: KnowledgeBase) -> tuple[str, ...]:
        """`API_FIELDS` and the facets of `kb` (which `KnowledgeBase.facet_counts` counts)."""
        return tuple(dict.fromkeys([*API_FIELDS, *kb.facets.values]))


def few_changed(kb: KnowledgeBase, context: str, state: BuildState) -> bool:
    """Whether few enough entries changed for an incremental build (it renders them in this process; a full
    build renders in parallel): the entry files changed or added, if the context of every page is the same
    (`PageRenderer.context_key`). Counted by their files, not by the keys of their pages (`entry_keys`, made after
    the child is forked, which needs none of them): the entries that link to a changed title are rendered in this
    process too."""
    before = state.sources
    changed = sum(1 for slug, key in kb.keys.items() if before.get(slug) != key)
    return context == state.context and changed <= max(INCREMENTAL_ENTRIES, len(kb.keys) // 10)


def build_full(outputs: Outputs, out_dir: Path, pages: PageRenderer, keys: dict[str, str],
               state: BuildState | None, progress: Callable[[int], None] | None,
               pool: Executor | None = None, workers: int | None = None, begun: Begun | None = None) -> DistWriter:
    """Write every file into a fresh directory and swap it in; with a cache, keep the old tree as the spare.
    `begun`: the fresh directory made and the workers' part handed to `pool` already (`Begun.start`)."""
    begun = begun or Begun.start(outputs, out_dir, pages, pool, workers or 1)
    spare = spare_path(out_dir)
    writer, search, api = begun.writer, begun.search, begun.api
    try:
        emit_entries(outputs.kb, writer, progress=progress, pages=pages,
                     meanwhile=lambda: outputs.emit_rest(writer, searching=search is not None, api=api is None),
                     pool=pool, workers=workers, submitted=begun.entries)
        if search is not None:
            writer.merge(*search.result())
        if api is not None:
            writer.merge(*api.result())
        outputs.emit_index_files(writer, pool)
        swap_in(begun.tmp, out_dir, keep=spare if state is not None else None)
    except BaseException:
        begun.abandon()
        raise
    if outputs.cache_dir is not None:
        if state is None and spare.exists():
            retire(spare)  # a tree of an unknown build
        sweep(out_dir)
        save_state(outputs.cache_dir, out_dir, BuildState(
            live=Marshalled(writer.written), live_stamp=manifest_stamp(out_dir),
            spare=state.live if state else None, spare_stamp=state.live_stamp if state else None,
            keys=keys, routes=Layered(Marshalled({slug: entry_routes(slug, writer.routes) for slug in keys})),
            units=writer.units, sources=outputs.kb.keys, context=pages.context_key))
    return writer


@dataclass
class Edit:
    """An incremental build (petgen/build/incremental.py), begun as soon as the entries are loaded, before the
    checks across entries (`load_knowledge_base`'s `before_checks`): the spare tree (or a clone of the live one)
    is taken, and a forked child writes the search index (if its inputs changed: updated from the last build's) and the
    discovery documents into it while this process runs the checks, then writes the changed entries, the site and the
    JSON API (`finish`). If the checks fail, `abandon` stops the child and gives up the tree
    (the spare is marked as changing first, so no state describes it). `writer` is None when too many entries
    changed: the caller builds in full."""

    outputs: Outputs
    pages: PageRenderer
    keys: dict[str, str] | None = None  # `entry_keys`, made when first needed
    state: BuildState | None = None  # the last build's, when few entries changed since (then `writer` is set)
    target: Target | None = None
    writer: TreeWriter | None = None
    child: Forked[ChildResult] | None = None

    @classmethod
    def start(cls, outputs: Outputs, out_dir: Path, state: BuildState) -> Edit:
        pages = PageRenderer(outputs.kb)
        edit = cls(outputs, pages)
        if not few_changed(outputs.kb, pages.context_key, state):
            return edit
        edit.state = state
        edit.target = target = target_tree(out_dir, state)
        try:
            if target.recycled:  # until it is swapped in, the spare holds no build the state could describe
                recycling(outputs.cache_dir, out_dir)
            edit.writer = TreeWriter(target.root, present=target.present, source=out_dir, context=pages.context_key,
                                     earlier=state.units)
            edit._fork()
        except BaseException:
            edit.abandon()
            raise
        return edit

    def _fork(self) -> None:
        """Start the child (where this process can fork and there is a second core; else `finish` does its part)."""
        global _forked
        if not Forked.possible():
            return
        _forked = (self.outputs, cast(TreeWriter, self.writer), self.target.fd if self.target is not None else None)
        try:
            self.child = Forked(_emit_forked)
        finally:
            _forked = None

    def entry_keys(self) -> dict[str, str]:
        """Each entry's key (`entry_keys`): made after the child is forked, in this process, which needs them first."""
        if self.keys is None:
            state = self.state
            self.keys = entry_keys(self.outputs.kb, self.pages, (state.keys, state.sources) if state else None)
        return self.keys

    def finish(self) -> TreeWriter:
        """The rest of the build: the changed entries, the site and the JSON API, the child's part taken over, then the
        sitemap, the manifest, the old files removed; the tree swapped in and the state saved."""
        outputs, writer, target, state = self.outputs, self.writer, self.target, self.state
        assert writer is not None and target is not None and state is not None
        out_dir, spare = outputs.out_dir, spare_path(outputs.out_dir)
        try:
            before = state.routes.value  # not read before the child was forked: it never needs them
            emit_changed_entries(outputs.kb, writer, self.pages, self.entry_keys(), state.keys, before)
            if self.child is None:
                _emit_child_part(outputs, writer)
            emit_site(outputs.kb, writer)
            ahead = dict(writer.routes)  # what `RouteParts` can make ahead (the API's query routes cannot be merged)
            emit_api(outputs.kb, writer)
            parts, entries = RouteParts(outputs.runtime_origin), self._entry_routes(state.keys, state.routes,
                                                                                    writer.routes)
            if self.child is not None:
                if not self.child.done():
                    entries.base.blob  # noqa: B018 - marshalled meanwhile, if they are to be stored whole again
                # And what the files listing every route make of the routes before the API's, while the child writes.
                while not self.child.done() and parts.add_some(ahead):
                    pass
                routes, written, units, changed, reused = self.child.result()
                writer.merge(routes, written, units)
                writer.changed += changed
                writer.reused += reused
            emit_sitemap(outputs.kb, writer)  # of the pages, all written by now (the child's: /docs)
            last = LastRules(stored_layout(state.layout.value if state.layout else None),
                             lambda: last_records(before.values(), state.units.values()), out_dir)
            layout = outputs.emit_manifest(writer, parts, last=last)
            writer.remove_stale()
            swap_in(target.root, out_dir, keep=spare)
        except BaseException:
            self.abandon()
            raise
        finally:
            self._release()
        sweep(out_dir)
        save_state(outputs.cache_dir, out_dir, BuildState(
            live=Marshalled(writer.written), live_stamp=manifest_stamp(out_dir), spare=state.live,
            spare_stamp=state.live_stamp, keys=self.entry_keys(), routes=entries, units=writer.units,
            sources=outputs.kb.keys, context=self.pages.context_key,
            layout=Marshalled(layout.stored()) if layout is not None else None))
        return writer

    def _entry_routes(self, keys: dict[str, str], before: Layered[Routes], routes: Routes) -> Layered[Routes]:
        """Each entry's routes, for the next state: the last build's (`before`, of the entries with `keys`), with those
        of the entries whose key changed made again and those of the entries gone removed."""
        now = self.entry_keys()
        changes: dict[str, Routes | None] = {slug: entry_routes(slug, routes) for slug, key in now.items()
                                             if keys.get(slug) != key}
        changes.update(dict.fromkeys(before.value.keys() - now.keys()))
        return before.after(changes)

    def abandon(self) -> None:
        """Stop the child, and remove the tree if it was a clone (a spare stays marked as changing)."""
        self._release()
        if self.target is not None and not self.target.recycled:
            shutil.rmtree(self.target.root, ignore_errors=True)

    def _release(self) -> None:
        if self.child is not None:
            self.child.stop()  # if its result was not taken: the tree is given up
        if self.target is not None:
            release(self.target)


ChildResult = tuple[Routes, dict[str, str], dict[str, Unit], int, int]
# Set in the parent while it forks the child of an `Edit`: what it writes, into which tree, and the descriptor that
# holds the tree's lock (which the child inherits and closes).
_forked: tuple[Outputs, TreeWriter, int | None] | None = None


def _emit_forked() -> ChildResult:
    """An `Edit`'s child: its part written into the same tree; the routes, files and units go back to the parent."""
    assert _forked is not None
    outputs, parent, locked = _forked
    if locked is not None:  # the tree's lock lasts while any copy of its descriptor is open: the build process's
        os.close(locked)  # alone, so that the lock ends when it releases the tree, not when this child has exited
    writer = TreeWriter(parent.root, present=parent.present, source=parent.source, context=parent.context,
                        earlier=parent.earlier)
    _emit_child_part(outputs, writer)
    return writer.routes, writer.written, writer.units, writer.changed, writer.reused


def _emit_child_part(outputs: Outputs, writer: DistWriter) -> None:
    """What an `Edit`'s child writes: the search index, updated from the last build's, and the discovery documents
    (less work than what the parent does meanwhile: the checks across entries, kept from the last build's where
    entries are unchanged, the changed entries, the site and the JSON API; with the discovery documents in the parent,
    the child was done ≈0.25 s before it). The API moved back and forth with the index's cost: in the child, the
    parent waited for it ≈0.3 s at 10,000 entries while the index was updated list by list; since only the postings
    that change are updated, the child is done before the parent, but with the API in the child the rebuild was no
    faster (0.87 against 0.84 s: written there, the API costs more, the pages it touches copied from the parent's). The sitemap,
    which lists the pages of /docs, is written after the child's part is merged."""
    # Imported here, in the child: the build process of an edit needs none of the discovery documents' modules (10 ms).
    from petgen.emit.discovery import emit_openapi_and_discovery

    docs = Documents(outputs.kb)
    emit_search_index(outputs.kb, writer, docs, entry_digests(outputs.kb, docs), outputs.search_state)
    emit_openapi_and_discovery(outputs.kb, writer)


@contextmanager
def early_workers(content_dir: Path, *, full: bool, workers: int) -> Iterator[Executor | None]:
    """The worker processes that parse and write the entries of a full build of many entries, forked first,
    while this process holds little more than its code: forked later, each would share the loaded build's
    heap and copy it page by page as it ran (time in page faults, memory counted again). They share `Claims` with
    this process (petgen/emit/entries.py). None when the build is likely incremental (it renders in this process),
    small, or cannot fork: the stages start their own."""
    if not full or workers < 2 or not hasattr(os, "fork"):
        yield None
        return
    try:
        many = sum(1 for name in os.listdir(content_dir / "names") if name.endswith(".md")) >= min(
            PARSE_THRESHOLD, EMIT_THRESHOLD)
    except OSError:
        many = False
    if not many:
        yield None
        return
    import multiprocessing  # not at the top: an incremental build needs none of it (petgen/build/forked.py)

    context = multiprocessing.get_context("fork")
    with shared_claims(context), worker_pool(workers, context) as pool:
        pool.submit(int).result()  # all workers are forked at the first task
        yield pool


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration of a build.

    A build allocates millions of small, acyclic objects (parsed entries, postings, page dicts) and
    frees them by reference counting; the collector would scan the growing heap again and again
    for cycles there are none of (40 % of the build's time at 10,000 entries). Whatever cycles do
    form are left to the collector's next regular run. Forked workers inherit the paused state.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def emit_manifest(kb: KnowledgeBase, writer: DistWriter, runtime_origin: str | None = None,
                  signed_proxies: bool = False, parts: RouteParts | None = None, pool: Executor | None = None,
                  last: LastRules | None = None) -> Layout | None:
    """Write `_manifest.json` with `_redirects` and `_headers` generated from the same route map."""
    return writer.write_manifest({
        "version": MANIFEST_VERSION,
        "generator": f"petgen {__version__}",
        "site": kb.site.site,
        "base_url": kb.site.base_url,
        "sourceHash": kb.source_hash,
        "data": DATA_FILE,
        "search": INDEX_ROUTE,
        "notFound": "404.html",
        **({"runtime_origin": runtime_origin} if runtime_origin else {}),
        **({"signed_proxies": True} if runtime_origin and signed_proxies else {}),
    }, parts, pool, last)

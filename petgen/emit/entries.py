"""Write every entry's Name JSON and page, in parallel worker processes for large knowledge bases.

The workers are best forked before the knowledge base is loaded (petgen/build/pipeline.py forks them
first, while the heap is small, and parses in them too): a worker forked from the loaded build would
share its heap, and copy it page by page as it touched it. Each task carries the page lookups (titles
for related links, the taxonomy, the site) pickled once per build (each worker unpickles them once) and
a chunk of entries as the loader read it from the cache or received it from the parse workers
(`KnowledgeBase.packed`). Each worker sends back only the route records.

With a cache, a chunk's rendered pages are kept beside it (petgen/build/cache.py) with the key each was
rendered for; a page whose entry file, related titles and context are unchanged is written from
there instead of being rendered again.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from petgen.build.cache import Packed
from petgen.build.dist import DistWriter, Routes
from petgen.build.files import read_file, write_atomic
from petgen.build.forked import worker_pool
from petgen.build.incremental import TreeWriter
from petgen.content.kb import KnowledgeBase
from petgen.content.model import Site
from petgen.emit.api import emit_name
from petgen.emit.site import PageRenderer

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future
    from multiprocessing.context import BaseContext

PARALLEL_THRESHOLD = 1000
KEEP_PAGE_CONTEXTS = 3
DAMAGED = -1  # what `_emit_chunk` returns for a chunk it cannot unpickle
TAKEN = -2  # what a worker's task returns for a chunk that the build process took back (`Claims`)
TAKE_WAIT = 1.0  # seconds; the lock is held for a few instructions at a time
_claims: Claims | None = None  # while set (`shared_claims`), workers forked share it with this process
Shared = tuple[Site, PageRenderer, Path, Path | None]  # the site, the renderer, the tree, the page cache
_received: tuple[bytes, Shared] | None = None  # in a worker: the last context it unpickled

Result = tuple[dict[str, dict[str, str]], dict[str, str], int]  # routes, files written, entries written


class Claims:
    """Which chunks of entries the build process takes back (`_take_back`) and which the workers have started, in
    memory that the workers forked after it was made share (`shared_claims`): the build process can take back a
    chunk that a worker has been handed but not started (the executor hands each worker its next chunks ahead,
    which `Future.cancel` cannot take back: at the end of a full build, this process waited for up to five chunks
    that it could have written). The chunks are taken back last first, as the workers start them first first."""

    def __init__(self, context: BaseContext) -> None:
        self.lock = context.Lock()
        self.bounds = context.RawArray("q", 2)  # the first chunk taken back, one past the last chunk started

    def reset(self) -> None:
        """For a new build's chunks: none taken back, none started."""
        with self.lock:
            self.bounds[0], self.bounds[1] = sys.maxsize, 0

    def start(self, at: int) -> bool:
        """Whether a worker is to write the chunk at position `at` (not taken back); it is started if so. (A worker
        waits for the lock as long as it takes: if another died holding it, the executor ends every worker.)"""
        with self.lock:
            if at >= self.bounds[0]:
                return False
            self.bounds[1] = max(self.bounds[1], at + 1)
            return True

    def take(self, at: int) -> bool:
        """Whether the build process may write the chunk at position `at` (no worker started it or a later one);
        no worker starts it then. A lock not had within TAKE_WAIT (a worker killed while holding it) takes nothing
        back: the chunk's future then tells what became of its worker."""
        if not self.lock.acquire(timeout=TAKE_WAIT):
            return False
        try:
            if at < self.bounds[1]:
                return False
            self.bounds[0] = min(self.bounds[0], at)
            return True
        finally:
            self.lock.release()


@contextmanager
def shared_claims(context: BaseContext) -> Iterator[None]:
    """`Claims` for the workers forked meanwhile (from `context`, a fork context) and this process to share."""
    global _claims
    _claims = Claims(context)
    try:
        yield
    finally:
        _claims = None


def _emit_packed(context: bytes, task: Packed, at: int) -> Result:
    """Write the entries of one chunk (in a worker), unless the build process took it back (`Claims`; `at`: its
    position); `context` is the build's `Shared`, pickled."""
    global _received
    if _claims is not None and not _claims.start(at):
        return {}, {}, TAKEN
    if _received is None or _received[0] != context:
        _received = (context, pickle.loads(context))
    return _emit_into(_received[1], task)


def _emit_into(shared: Shared, task: Packed) -> Result:
    site, pages, root, pages_dir = shared
    writer = DistWriter(root)
    emitted = _emit_chunk(task, site, pages, pages_dir, writer)
    return writer.routes, writer.written, emitted


def _emit_chunk(task: Packed, site: Site, pages: PageRenderer, pages_dir: Path | None, writer: DistWriter,
                only: set[str] | None = None) -> int:
    """Write the entries of one chunk (`only` those of these keys, if given); take their pages from the page cache
    where nothing changed."""
    name, blob, keys = task
    cached: dict[str, tuple[str, bytes]] = {}
    if pages_dir is not None:
        try:
            cached = pickle.loads(read_file(pages_dir / name))
        except Exception:  # noqa: BLE001 - missing or damaged: render the pages again
            cached = {}
    # The pages of the entries not written here stay in the page cache as they were.
    fresh: dict[str, tuple[str, bytes]] = {} if only is None else {k: v for k, v in cached.items() if k not in only}
    try:
        records = pickle.loads(blob)
    except Exception:  # noqa: BLE001 - damaged since the cache was opened: the caller repacks it (`_repacked`)
        return DAMAGED
    emitted = 0
    for key, entry, _ in records:
        if key not in keys or entry is None or (only is not None and key not in only):
            continue
        emit_name(entry, site, writer)
        emitted += 1
        if pages_dir is None:  # no page cache: nothing to look up or keep
            pages.emit(entry, writer)
            continue
        page_key = pages.page_key(key, entry)
        hit = cached.get(key)
        fresh[key] = (page_key, pages.emit(entry, writer, hit[1] if hit and hit[0] == page_key else None))
    if pages_dir is not None and fresh != cached:
        write_atomic(pages_dir / name, pickle.dumps(fresh, protocol=pickle.HIGHEST_PROTOCOL))
    return emitted


def _repacked(kb: KnowledgeBase, task: Packed) -> Packed:
    """A chunk whose file was damaged since the cache was opened, made again of its entries (each parsed again
    from its file where the chunk held the rest of it: `LazyEntry`)."""
    name, keys = task[0], task[2]  # not unpacked: that would read the chunk file
    return name, pickle.dumps([(key, kb.by_slug[slug], []) for slug, key in kb.keys.items() if key in keys],
                              protocol=pickle.HIGHEST_PROTOCOL), keys


def entry_keys(kb: KnowledgeBase, pages: PageRenderer,
               last: tuple[dict[str, str], dict[str, str]] | None = None) -> dict[str, str]:
    """Slug -> a key of everything the entry's JSON and page are made from: its file, its related entries'
    titles, and the context (site, taxonomy, templates, code). Entries without a file key (no cache) get none.

    `last`: the last build's keys and file keys (`BuildState.keys`, `.sources`), made in the same context. An entry
    whose file is unchanged and none of whose related entries' files changed (a title is in its entry's file) keeps
    the key it had: a rebuild after one edit hashes a few entries' keys, not all of them."""
    context, files = pages.context_key, kb.keys
    if last is None:
        return {e.slug: f"{context}:{pages.page_key(key, e)}" for e in kb.entries if (key := files.get(e.slug))}
    before, sources = last
    changed = {slug for slug, key in files.items() if sources.get(slug) != key} | (sources.keys() - files.keys())
    found: dict[str, str] = {}
    for e in kb.entries:
        slug = e.slug
        key = files.get(slug)
        if not key:
            continue
        kept = before.get(slug)
        found[slug] = (kept if kept is not None and slug not in changed and changed.isdisjoint(e.related)
                       else f"{context}:{pages.page_key(key, e)}")
    return found


def entry_routes(slug: str, routes: dict[str, dict]) -> dict[str, dict]:
    """The manifest records of one entry's JSON and page."""
    return {route: routes[route] for route in (f"/api/names/{slug}", f"/names/{slug}/")}


def emit_changed_entries(kb: KnowledgeBase, writer: TreeWriter, pages: PageRenderer, keys: dict[str, str],
                         before: dict[str, str], routes: dict[str, Routes]) -> None:
    """Write the JSON and page of each entry whose key differs from the one it was last built with (`before`; from
    its chunk, with the page cache); take the others' files over from the live tree (their `routes`, by slug)."""
    changed = {kb.keys[slug] for slug, key in keys.items() if before.get(slug) != key}
    pages_dir = _prepare_page_cache(kb, pages)
    for task in kb.packed:
        if (not changed.isdisjoint(task[2])
                and _emit_chunk(task, kb.site, pages, pages_dir, writer, only=changed) == DAMAGED):
            _emit_chunk(_repacked(kb, task), kb.site, pages, pages_dir, writer, only=changed)
    writer.reuse_all([routes[slug] for slug, key in kb.keys.items() if key not in changed])


def entries_context(kb: KnowledgeBase, writer: DistWriter, pages: PageRenderer) -> bytes:
    """What every chunk's task needs besides its entries (`Shared`), pickled once for all of them."""
    pages.frame  # noqa: B018 - made here once (and pickled), not in every worker
    return pickle.dumps((kb.site, pages, writer.root, _prepare_page_cache(kb, pages)), protocol=pickle.HIGHEST_PROTOCOL)


def submit_entries(pool: Executor, context: bytes, tasks: list[Packed], first: int = 0) -> list[Future[Result]]:
    """Hand chunks of entries to the workers of `pool` to write (`emit_entries` collects what they wrote);
    `context`: `entries_context`; `first`: the position of `tasks[0]` among the build's chunks (a build may hand
    them out in more than one call; the first call, at 0, begins the build's `Claims`)."""
    if first == 0 and _claims is not None:
        _claims.reset()
    return [pool.submit(_emit_packed, context, task, first + n) for n, task in enumerate(tasks)]


def emit_entries(kb: KnowledgeBase, writer: DistWriter, *, workers: int | None = None,
                 meanwhile: Callable[[], None] | None = None, progress: Callable[[int], None] | None = None,
                 pages: PageRenderer | None = None, pool: Executor | None = None,
                 submitted: list[Future[Result]] | None = None) -> None:
    """Write each entry's `/api/names/{slug}` and `/names/{slug}/`.

    With workers (those of `pool`, else forked now), `meanwhile` (the rest of the emission) runs in this
    process while they work. `submitted`: the chunks handed to `pool` already (`submit_entries`), if any.
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    count = len(kb.entries)
    pages = pages or PageRenderer(kb)
    parallel = submitted is not None or (
        workers >= 2 and count >= PARALLEL_THRESHOLD and kb.packed
        and (pool is not None or hasattr(os, "fork")))
    shared: Shared = (kb.site, pages, writer.root, _prepare_page_cache(kb, pages))
    if not parallel:
        results = [_emit_into(shared, task) for task in kb.packed]
        if meanwhile:
            meanwhile()
    else:
        import multiprocessing  # here: an incremental build writes its entries in this process, and needs none of it
        from concurrent.futures import as_completed

        with (nullcontext(pool) if pool is not None
              else worker_pool(workers, multiprocessing.get_context("fork"))) as executor:
            futures = submitted if submitted is not None else submit_entries(
                executor, entries_context(kb, writer, pages), kb.packed)
            if meanwhile:
                meanwhile()
            taken = _take_back(futures, lambda i: _emit_into(shared, kb.packed[i]), progress)
            for future in as_completed([f for i, f in enumerate(futures) if i not in taken]):
                if progress:
                    progress(future.result()[2])
            results = [taken[i] if i in taken else f.result() for i, f in enumerate(futures)]
    results = [_emit_into(shared, _repacked(kb, task)) if result[2] == DAMAGED else result
               for task, result in zip(kb.packed, results)]
    if sum(emitted for _, _, emitted in results) != count:
        raise RuntimeError(f"{count} entries loaded but {sum(r[2] for r in results)} written")
    for routes, written, _ in results:
        writer.merge(routes, written)


def _take_back(futures: list[Future[Result]], emit: Callable[[int], Result],
               progress: Callable[[int], None] | None) -> dict[int, Result]:
    """Write in this process, last first, the chunks that no worker has started (`emit` of a chunk's position),
    until a worker has: this process is done with the rest of the build, and would otherwise wait while the
    workers write (whichever finishes its other work first, the index or the list pages, writes more entries).
    A chunk handed to a worker ahead is taken back only with `Claims`. Returns what was written, by position; the
    workers write the others."""
    taken: dict[int, Result] = {}
    for i in range(len(futures) - 1, -1, -1):
        # Not taken back if a worker has it, or has it queued without `Claims`: so it has every chunk before it too.
        if not futures[i].cancel() and (_claims is None or not _claims.take(i)):
            break
        taken[i] = emit(i)
        if progress:
            progress(taken[i][2])
    return taken


def _prepare_page_cache(kb: KnowledgeBase, pages: PageRenderer) -> Path | None:
    """Make the page cache for this build's context (site, taxonomy, templates, code) and return it.

    The caches of the two contexts used before it are kept (a `petgen dev` on localhost and a
    production `petgen build` alternate without rendering everything again); older ones are removed.
    """
    if kb.cache_root is None:
        return None
    current = kb.cache_root / f"pages-{pages.context_key}"
    try:
        current.mkdir(parents=True, exist_ok=True)
        os.utime(current)
    except OSError:
        return None
    others = sorted((p for p in kb.cache_root.glob("pages-*") if p != current), key=_mtime, reverse=True)
    for old in others[KEEP_PAGE_CONTEXTS - 1:]:
        shutil.rmtree(old, ignore_errors=True)
    return current


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0

"""Write every entry's Name JSON and page, in parallel worker processes for large knowledge bases.

Workers are forked after the knowledge base is loaded and take the page lookups (titles for related
links, the taxonomy, the site) from the parent. The entries themselves they unpickle from the chunks
the loader read from the cache or received from the parse workers (`KnowledgeBase.packed`): objects
inherited from the parent would be copied page by page as soon as a worker touched them, which
costs more than unpickling a private copy. Each worker sends back only the route records.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor, as_completed
from collections.abc import Callable
from pathlib import Path

from petgen.api import emit_name
from petgen.content import Entry, Site
from petgen.dist import DistWriter
from petgen.kb import KnowledgeBase
from petgen.site import PageRenderer

PARALLEL_THRESHOLD = 1000
_shared: tuple[Site, PageRenderer, Path] | None = None  # set in the parent before forking


def _emit(entries: list[Entry]) -> tuple[dict[str, dict[str, str]], int, int]:
    assert _shared is not None
    site, pages, root = _shared
    writer = DistWriter(root)
    for entry in entries:
        emit_name(entry, site, writer)
        pages.emit(entry, writer)
    return writer.routes, writer.files, len(entries)


def _emit_packed(task: tuple[bytes, frozenset[str]]) -> tuple[dict[str, dict[str, str]], int, int]:
    blob, keys = task
    return _emit([entry for key, entry, _ in pickle.loads(blob) if key in keys and entry is not None])


def emit_entries(kb: KnowledgeBase, writer: DistWriter, *, workers: int | None = None,
                 meanwhile: Callable[[], None] | None = None, progress: Callable[[int], None] | None = None) -> None:
    """Write each entry's `/api/names/{slug}` and `/names/{slug}/`.

    With workers, `meanwhile` (the rest of the emission) runs in this process while they work.
    """
    global _shared
    workers = workers if workers is not None else (os.cpu_count() or 1)
    count = len(kb.entries)
    _shared = (kb.site, PageRenderer(kb), writer.root)
    parallel = (workers >= 2 and count >= PARALLEL_THRESHOLD and kb.packed
                and "fork" in multiprocessing.get_all_start_methods())
    try:
        if not parallel:
            results = [_emit(kb.entries)]
            if meanwhile:
                meanwhile()
        else:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                futures = [pool.submit(_emit_packed, task) for task in kb.packed]
                if meanwhile:
                    meanwhile()
                for future in as_completed(futures):
                    if progress:
                        progress(future.result()[2])
                results = [f.result() for f in futures]
    finally:
        _shared = None
    if sum(emitted for _, _, emitted in results) != count:
        raise RuntimeError(f"{count} entries loaded but {sum(r[2] for r in results)} written")
    for routes, files, _ in results:
        writer.merge(routes, files)

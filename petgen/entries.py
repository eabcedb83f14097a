"""Write every entry's Name JSON and page, in parallel worker processes for large knowledge bases.

Workers are forked after the knowledge base is loaded, so they inherit it instead of receiving
it pickled; each writes its share of files and sends back only the route records.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from collections.abc import Callable
from pathlib import Path

from petgen.api import emit_name
from petgen.dist import DistWriter
from petgen.kb import KnowledgeBase
from petgen.site import PageRenderer

PARALLEL_THRESHOLD = 1000
_shared: tuple[KnowledgeBase, Path] | None = None  # set in the parent before forking


def _emit_range(bounds: tuple[int, int]) -> tuple[dict[str, dict[str, str]], int, int]:
    assert _shared is not None
    kb, root = _shared
    writer = DistWriter(root)
    pages = PageRenderer(kb)
    for entry in kb.entries[bounds[0]:bounds[1]]:
        emit_name(entry, kb.site, writer)
        pages.emit(entry, writer)
    return writer.routes, writer.files, bounds[1] - bounds[0]


def emit_entries(kb: KnowledgeBase, writer: DistWriter, *, workers: int | None = None,
                 meanwhile: Callable[[], None] | None = None, progress: Callable[[int], None] | None = None) -> None:
    """Write each entry's `/api/names/{slug}` and `/names/{slug}/`.

    With workers, `meanwhile` (the rest of the emission) runs in this process while they work.
    """
    global _shared
    workers = workers if workers is not None else (os.cpu_count() or 1)
    count = len(kb.entries)
    _shared = (kb, writer.root)
    try:
        if workers < 2 or count < PARALLEL_THRESHOLD or "fork" not in multiprocessing.get_all_start_methods():
            results = [_emit_range((0, count))]
            if meanwhile:
                meanwhile()
        else:
            step = -(-count // (workers * 4))
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                futures = [pool.submit(_emit_range, (i, min(i + step, count))) for i in range(0, count, step)]
                if meanwhile:
                    meanwhile()
                for future in as_completed(futures):
                    if progress:
                        progress(future.result()[2])
                results = [f.result() for f in futures]
    finally:
        _shared = None
    for routes, files, _ in results:
        writer.merge(routes, files)

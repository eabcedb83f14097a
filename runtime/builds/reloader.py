"""Picking up a new build without a restart: on SIGHUP, and when dist/_manifest.json changes.

`petgen build` swaps the new dist in atomically, so a new build always shows as a new
`_manifest.json` (another inode, size or modification time). Every `interval` seconds (default 2,
`PETGEN_DIST_POLL`; 0 turns it off) the runtime looks at that one file with a single `stat` and
reloads when it differs from the one it loaded last; `kill -HUP <pid>` reloads at once. Either way
the new dist is loaded in a worker thread while the old one keeps serving, and its webhook events are
derived right after (runtime/webhooks/facility.py). SIGHUP is handled where the server runs the app in
its main thread (uvicorn, `petgen serve`); granian's main process uses SIGHUP to restart its
workers, which load the new dist as they start.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread

from petgen.build.dist import MANIFEST, Stamp, manifest_stamp

__all__ = ["DistWatcher", "Stamp", "manifest_stamp"]

log = logging.getLogger("petgen.runtime")


class DistWatcher:
    def __init__(self, dist_dir: Path, reload: Callable[[], bool], loaded: Callable[[], Stamp | None], *,
                 interval: float) -> None:
        self.dist_dir = dist_dir
        self.reload = reload  # Runtime.reload
        self.loaded = loaded  # the stamp of the manifest the runtime loaded last
        self.interval = interval

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with anyio.create_task_group() as tasks:
            if hasattr(signal, "SIGHUP") and threading.current_thread() is threading.main_thread():
                await tasks.start(self._on_sighup)
            if self.interval > 0:
                tasks.start_soon(self._poll)
            task_status.started()

    async def _poll(self) -> None:
        while True:
            await anyio.sleep(self.interval)
            stamp = manifest_stamp(self.dist_dir)
            if stamp is not None and stamp != self.loaded():
                log.info("%s changed; reloading", self.dist_dir / MANIFEST)
                await anyio.to_thread.run_sync(self.reload)

    async def _on_sighup(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            task_status.started()
            async for _ in signals:
                log.info("SIGHUP: reloading %s", self.dist_dir)
                await anyio.to_thread.run_sync(self.reload)

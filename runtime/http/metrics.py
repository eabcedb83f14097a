"""Operator metrics in the Prometheus text format, on a listener of their own (`--metrics-port`), never
on the public port.

prometheus_client's multiprocess mode does the bookkeeping: every server process (one, or each of
`--workers N`) writes its values to memory-mapped files in one directory, and the listener, which
`petgen serve` runs in its main process, adds them up on every scrape. So one scrape sees the
whole server however many workers it runs, and a worker that restarts loses nothing.

The directory is named by PROMETHEUS_MULTIPROC_DIR, which must be set before prometheus_client is
imported: `prepare()` sets it (in the main process, so workers inherit it) and empties it.
Metric names and labels: docs/operations.md#metrics.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

ENV = "PROMETHEUS_MULTIPROC_DIR"
# Request duration buckets, seconds: static files take well under a millisecond, /ask and MCP a few.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
# Path prefixes and the `surface` label they get: a small fixed set, so no client can grow the label space.
SURFACES = (
    ("/api/names/", "name"), ("/api/names", "names"), ("/api/search", "search"), ("/api/status", "status"),
    ("/api/categories", "categories"), ("/api/", "api_other"), ("/ask", "ask"), ("/mcp", "mcp"),
    ("/webhooks", "webhooks"), ("/.well-known/", "discovery"), ("/openapi.json", "discovery"),
    ("/names/", "page"), ("/assets/", "asset"),
)


def surface(path: str) -> str:
    for prefix, name in SURFACES:
        if path.startswith(prefix):
            return name
    return "page" if path == "/" or path.endswith((".html", "/")) else "other"


def prepare(state_dir: Path) -> Path:
    """Make an empty directory for this server's metric files and name it in the environment."""
    directory = state_dir / "metrics"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    os.environ[ENV] = str(directory)
    return directory


class Metrics:
    """The runtime's metrics of one process. Create it only after `prepare()` (or with ENV set)."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        # registry=None: the values live in the multiprocess files, which the listener reads; registering
        # them in the default registry would also forbid a second app in one process (tests, embedding).
        self.requests = Histogram("petgen_http_request_duration_seconds",
                                  "HTTP requests by surface and status, with their duration (until the last byte)",
                                  ["surface", "status"], buckets=BUCKETS, registry=None)
        self.in_flight = Gauge("petgen_http_requests_in_flight", "Requests being answered now",
                               multiprocess_mode="livesum", registry=None)
        self.entries = Gauge("petgen_dist_entries", "Entries in the loaded build (0 while down)",
                             multiprocess_mode="livemax", registry=None)
        self.loaded = Gauge("petgen_dist_loaded_timestamp_seconds", "When the running build was loaded",
                            multiprocess_mode="livemax", registry=None)
        self.failing = Gauge("petgen_check_failing", "1 while a check of /api/status fails (limits, dist)",
                             ["check"], multiprocess_mode="livemax", registry=None)
        self.reloads = Counter("petgen_dist_reloads_total", "New builds loaded without a restart", registry=None)
        self._observers: dict[tuple[str, int], Any] = {}

    def started(self) -> None:
        self.in_flight.inc()

    def finished(self, path: str, status: int, duration: float) -> None:
        key = (surface(path), status)
        observer = self._observers.get(key)
        if observer is None:  # bounded: a dozen surfaces times the status codes the runtime answers
            observer = self._observers[key] = self.requests.labels(key[0], str(status))
        observer.observe(duration)
        self.in_flight.dec()

    def dist_loaded(self, entries: int, first: bool) -> None:
        self.entries.set(entries)
        self.loaded.set(time.time())
        if not first:
            self.reloads.inc()

    def check_changed(self, check: str, failing: bool) -> None:
        self.failing.labels(check).set(1 if failing else 0)


def serve_metrics(host: str, port: int) -> Any:
    """Start the scrape listener (a thread of this process) over every process's files; return the server."""
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server


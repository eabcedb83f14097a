"""The files of one build, read from disk when a request needs them (through the OS page cache).

`BuildDir` holds the build's directory open and opens every file relative to that handle. `petgen
build` swaps a new dist in by renaming directories, so the handle keeps pointing at the build whose
manifest routed the request: a response never pairs one build's headers with another build's bytes.
Once the old build's files are deleted (the build removes the tree it swapped out), opening one
raises FileNotFoundError, and the runtime reloads before it answers (runtime/app.py).

`Routes` answers the manifest's paths: small files (up to `HOT_FILE_MAX`) as bytes with their
headers prepared, kept in a per-build cache of at most `cache_bytes` (`PETGEN_STATIC_CACHE_MB`,
default 16), first in first out; larger files as `LargeFile`, streamed from disk on each request or
handed to the server by path where it supports the ASGI `http.response.pathsend` extension (granian).
A large file is held open once it was asked for (up to `MAX_PINNED` per build), so that it can be sent
whole even if its build is deleted meanwhile; the path given to the server names that open file
(`/proc/self/fd/N`), which is kept open at least `LEND_SECONDS` after it was last handed out, because
the server opens the path after the app's `send` has returned.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from petgen.build.dist import IMMUTABLE, REVALIDATE, lock_tree
from petgen.contract.security import RAW_SECURITY_HEADERS
from runtime.builds.routes import Route, RouteTable

Headers = list[tuple[bytes, bytes]]

HOT_FILE_MAX = 128 * 1024  # bytes: larger files are never cached, and are streamed or sent by path
MAX_PINNED = 64  # large files of a build held open at once
CACHE_OVERHEAD = 512  # bytes counted per cached file besides its body: its header list and the cache's slot
CHUNK = 256 * 1024
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_FILE = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
_PROC_FD = "/proc/self/fd" if sys.platform == "linux" and os.path.isdir("/proc/self/fd") else None
LEND_SECONDS = 60.0  # a file handle given to the server by path stays open at least this long
_lent: deque[tuple[float, BuildDir]] = deque()  # builds whose handles were given out, until when
_retired: deque[tuple[float, int]] = deque()  # handles no longer held by their build, closed after a while


class DistGone(Exception):
    """The loaded build's files were deleted and no newer build could be loaded: the runtime answers 503."""


class BuildDir:
    """A build's directory, held open for as long as this object lives."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fd = os.open(root, _OPEN_DIR)
        # Held for as long as this build is loaded: `petgen build` never rewrites a tree a runtime holds. If
        # a build is completing this very tree (it was swapped out before we opened it), this waits for it.
        lock_tree(self.fd, exclusive=False)
        self._pinned: dict[str, int] = {}  # large files held open, by path

    def __del__(self) -> None:
        fd, self.fd = getattr(self, "fd", -1), -1
        for pinned in (*getattr(self, "_pinned", {}).values(), fd):
            if pinned >= 0:
                os.close(pinned)

    def open(self, rel: str) -> int:
        return os.open(rel, _OPEN_FILE, dir_fd=self.fd)

    def pinned(self, rel: str) -> int:
        """A handle of the file, held open by this build (FileNotFoundError if the build's files are gone)."""
        fd = self._pinned.get(rel)
        if fd is None:
            fd = self.open(rel)
            if len(self._pinned) >= MAX_PINNED:
                now = time.monotonic()
                _close_retired(now)
                _retired.append((now + LEND_SECONDS, self._pinned.pop(next(iter(self._pinned)))))
            self._pinned[rel] = fd
        return fd

    def lend(self) -> None:
        """Keep this build's handles open for LEND_SECONDS more, even if the build is replaced: the server
        opens a `pathsend_path` after the app has returned, and a closed handle's number could by then
        name another file."""
        now = time.monotonic()
        while _lent and _lent[0][0] < now:
            _lent.popleft()
        _close_retired(now)
        if not _lent or _lent[-1][1] is not self or _lent[-1][0] < now + LEND_SECONDS / 2:
            _lent.append((now + LEND_SECONDS, self))

    def size(self, rel: str) -> int:
        return os.stat(rel, dir_fd=self.fd).st_size

    def read(self, rel: str) -> bytes:
        fd = self.open(rel)
        try:
            return read_all(fd)
        finally:
            os.close(fd)

    @property
    def path(self) -> Path:
        """A path that names this build's directory even after it was renamed (Linux), else its root."""
        return Path(f"{_PROC_FD}/{self.fd}") if _PROC_FD else self.root


def _close_retired(now: float) -> None:
    while _retired and _retired[0][0] < now:
        os.close(_retired.popleft()[1])


def pathsend_path(fd: int) -> str | None:
    """A path that opens the file held open as `fd` (deleted or not), for `http.response.pathsend`; None
    where the platform has no such path."""
    return f"{_PROC_FD}/{fd}" if _PROC_FD else None


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class StaticFile:
    """A body in memory with its headers ready to send."""

    body: bytes
    etag: bytes  # quoted, as sent
    headers: Headers  # content-type, etag, cache-control, content-length, the security headers, extras


@dataclass(frozen=True)
class LargeFile:
    """A file too large for the cache, held open by its build: streamed or sent by path."""

    build: BuildDir
    file: str
    fd: int  # BuildDir.pinned: never closed by the request
    size: int
    etag: bytes
    headers: Headers

    @property
    def body(self) -> bytes:
        return self.build.read(self.file)


def prepared_headers(size: int, etag: bytes, content_type: str, cache_control: str,
                     extra: dict[str, str] | None = None) -> Headers:
    return [
        (b"content-type", content_type.encode()),
        (b"etag", etag),
        (b"cache-control", cache_control.encode()),
        (b"content-length", str(size).encode()),
        *RAW_SECURITY_HEADERS,
        *((name.lower().encode(), value.encode()) for name, value in (extra or {}).items()),
    ]


def prepared_file(body: bytes, etag: str, content_type: str, cache_control: str,
                  extra: dict[str, str] | None = None) -> StaticFile:
    quoted = f'"{etag}"'.encode()
    return StaticFile(body, quoted, prepared_headers(len(body), quoted, content_type, cache_control, extra))


class DiskFile:
    """A manifest route's file, read when its `body` is asked for (MCP resources, webhook events)."""

    __slots__ = ("build", "route")

    def __init__(self, build: BuildDir, route: Route) -> None:
        self.build, self.route = build, route

    @property
    def body(self) -> bytes:
        return self.build.read(self.route.file)


class Routes:
    """The manifest routes of one build: `serve(path)` for responses (cached), `routes[path].body` to
    read a file, `path in routes` to test for one."""

    def __init__(self, build: BuildDir, table: RouteTable, cache_bytes: int) -> None:
        self.build = build
        self.table = table
        self.cache_bytes = cache_bytes
        self.cached = 0  # bytes counted against cache_bytes
        self.hot: dict[str, StaticFile] = {}  # the cache: path -> file (the fast lane looks here first)
        self._order: deque[str] = deque()  # cached paths, oldest first (MCP tools may serve from a thread)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.table.find(path) >= 0

    def __len__(self) -> int:
        return len(self.table)

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def get(self, path: str) -> DiskFile | None:
        key = self.table.find(path)
        return DiskFile(self.build, self.table.route(key)) if key >= 0 else None

    def __getitem__(self, path: str) -> DiskFile:
        file = self.get(path)
        if file is None:
            raise KeyError(path)
        return file

    def serve(self, path: str) -> StaticFile | LargeFile | None:
        """What to send for a path, or None if the build has no such route; FileNotFoundError if the
        build's directory was deleted under us (the runtime then reloads)."""
        file = self.hot.get(path)
        if file is not None:
            return file
        key = self.table.find(path)
        if key < 0:
            return None
        route = self.table.route(key)
        etag = f'"{route.etag}"'.encode()
        cache_control = IMMUTABLE if route.immutable else REVALIDATE
        fd = self.build.open(route.file)
        try:
            size = os.fstat(fd).st_size
            if size <= HOT_FILE_MAX:
                body = read_all(fd)
        finally:
            os.close(fd)
        if size > HOT_FILE_MAX:
            return LargeFile(self.build, route.file, self.build.pinned(route.file), size, etag,
                             prepared_headers(size, etag, route.content_type, cache_control, route.headers))
        file = StaticFile(body, etag, prepared_headers(len(body), etag, route.content_type, cache_control,
                                                        route.headers))
        self._remember(path, file)
        return file

    def _remember(self, path: str, file: StaticFile) -> None:
        cost = len(file.body) + CACHE_OVERHEAD
        if cost > self.cache_bytes:
            return
        while self.cached + cost > self.cache_bytes:
            try:
                evicted = self.hot.pop(self._order.popleft(), None)
            except IndexError:  # emptied meanwhile
                break
            if evicted is not None:
                self.cached -= len(evicted.body) + CACHE_OVERHEAD
        if self.hot.setdefault(path, file) is file:
            self._order.append(path)
            self.cached += cost

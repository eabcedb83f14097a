"""Writing dist/: content-hashed files, the route manifest, CDN rules, and the atomic swap."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from xxhash import xxh3_64_hexdigest

from petgen.contract.security import CORS_EXPOSED, SECURITY_HEADERS
from petgen.emit.redirects import render_redirects, split_routes

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from petgen.build.routelayout import LastRules, Layout
    from petgen.build.routeparts import RouteParts

JSON = "application/json; charset=utf-8"
HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
CSS = "text/css; charset=utf-8"

MANIFEST = "_manifest.json"
RETIRED = ".retired-"  # prefix of trees moved aside until no runtime reads them
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "public, max-age=60, must-revalidate"
GONE = "\0gone"  # an edit of the routes' parts that removes one (petgen/build/routelayout.py); no route is named so
RULES_APART = 5000  # from this many routes, `write_manifest` has idle workers render `_redirects` and `_headers`


def edited_runs(old: Any, edits: list[tuple[int, int, str]], new: Callable[[str], Any]) -> list[Any]:
    """`old` (a sequence with an item per route of the last build) cut at the `edits` (in order: where, how many
    items it replaces, its route) with `new(route)` put in (nothing for GONE): the runs, to be joined."""
    runs = []
    at = 0
    for where, replace, route in edits:
        runs.append(old[at:where])
        at = where + replace
        if route is not GONE:
            runs.append(new(route))
    runs.append(old[at:])
    return runs


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def write_file(path: str, data: bytes) -> None:
    """Write a new file with three system calls (open, write, close). Python's `open()` adds a stat, an
    isatty check and seeks, which is most of the cost of writing 20,000 small files."""
    fd = os.open(path, _CREATE, 0o666)  # less the umask, as open() does
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def trim_heap() -> None:
    """Give the memory freed after a large piece of work back to the system (glibc keeps freed heap for the next
    allocations otherwise: a loaded manifest, an index built in a worker)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def content_hash(data: bytes) -> str:
    """The ETag of a file: 12 hex digits of its XXH3 hash. A build hashes every byte it writes (280 MB at 10,000
    entries): BLAKE2b took half a second of CPU for that, XXH3 takes a twentieth. Names and ETags only need to
    change with the content (no adversary picks the content), which a 48-bit hash does as well as any."""
    return xxh3_64_hexdigest(data)[:12]


Routes = dict[str, dict]  # route -> manifest record (file, etag, type, hashed, headers)
Unit = tuple[str, Routes, dict[str, str]]  # a unit's key, and the routes and files (-> content hash) it wrote


def unit_key(*parts: str) -> str:
    """The key of a unit (`DistWriter.unit`) made of these parts, in order."""
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=12).hexdigest()


@dataclass
class DistWriter:
    """Writes files into a fresh directory and records every route in the manifest.

    Files can be written in units (`unit`): a group of files that is a function of a key. The writer
    records each unit's key, routes and files (`units`, kept in the build state); a writer into a tree
    of an earlier build (petgen/build/incremental.py) takes a unit over from the live tree instead of
    emitting it again when the last build wrote it for the same key (`earlier`).
    """

    root: Path
    routes: dict[str, dict[str, str]] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # every file of the build -> its content hash
    context: str = ""  # what every unit depends on besides its key (site, taxonomy, templates, code)
    units: dict[str, Unit] = field(default_factory=dict)  # written (or taken over) by this build
    earlier: dict[str, Unit] = field(default_factory=dict)  # written by the last build, in the live tree
    reused: int = 0  # units taken over
    _dirs: set[str] = field(default_factory=set)
    _recording: tuple[Routes, dict[str, str]] | None = None
    _prefix: str = field(init=False, repr=False)  # the root as a string, with a slash: joined without os.path.join

    def __post_init__(self) -> None:
        self._prefix = os.path.join(self.root, "")

    @property
    def files(self) -> int:
        return len(self.written)

    def unit(self, name: str, key: str, emit: Callable[[], None]) -> None:
        """Emit the files of unit `name`, a function of `key` (and `context`) alone, by calling `emit`; or,
        when the last build wrote that unit for the same key, take its files over (`reuse`)."""
        self.units_of([(name, key, emit)])

    def units_of(self, each: Iterable[tuple[str, str, Callable[[], None]]]) -> None:
        """`unit` of each (name, key, emit) in turn, where the units taken over one after another are taken over
        together (one `reuse_all` of their routes and files): a rebuild after one edit takes over 3,000 list pages
        and renders a few, and one `reuse` per page cost an eighth of the time it spent on them (8 of 67 ms)."""
        kept: dict[str, Unit] = {}
        for name, key, emit in each:
            if name in self.units or name in kept:
                raise ValueError(f"unit {name} emitted twice")
            if self.has_unit(name, key):
                kept[name] = self.earlier[name]
                continue
            if kept:
                self._take_over(kept)
                kept = {}
            assert self._recording is None, "units do not nest"
            self._recording = routes, files = {}, {}
            try:
                emit()
            finally:
                self._recording = None
            self.units[name] = (f"{self.context}:{key}", routes, files)
        if kept:
            self._take_over(kept)

    def _take_over(self, kept: dict[str, Unit]) -> None:
        """Take over the routes and files of the last build's `kept` units, in order."""
        files: dict[str, str] = {}
        for unit in kept.values():
            files.update(unit[2])
        self.reuse_all([unit[1] for unit in kept.values()], files)
        self.units.update(kept)
        self.reused += len(kept)

    def has_unit(self, name: str, key: str) -> bool:
        """Whether `unit` would take unit `name` over for `key` rather than emit it."""
        before = self.earlier.get(name)
        return before is not None and before[0] == f"{self.context}:{key}"

    def reuse(self, routes: Routes, files: dict[str, str] | None = None) -> None:
        """Take over routes and files (by default: the routes' files) that the last build wrote into the live tree."""
        self.reuse_all([routes], files)

    def reuse_all(self, groups: list[Routes], files: dict[str, str] | None = None) -> None:
        """`reuse` of several groups of routes at once (only a writer into a tree of an earlier build can)."""
        raise NotImplementedError("a fresh tree holds no earlier build")

    def _write(self, rel: str, data: bytes, etag: str | None = None) -> None:
        parent = rel.rpartition("/")[0]
        if parent not in self._dirs:
            self._mkdir(parent)
        write_file(self._prefix + rel, data)
        self._wrote(rel, etag or content_hash(data))

    def _wrote(self, rel: str, etag: str) -> None:
        self.written[rel] = etag
        if self._recording is not None:
            self._recording[1][rel] = etag

    def _mkdir(self, rel: str) -> None:
        """Create a directory of the tree once: one `mkdir` call, its parents first."""
        if rel in self._dirs or not rel:
            return
        self._mkdir(os.path.dirname(rel))
        try:
            os.mkdir(self._prefix + rel)
        except FileExistsError:  # made by another worker writing into the same tree
            pass
        self._dirs.add(rel)

    def add_hashed(self, route: str | None, stem: str, data: bytes, content_type: str = JSON,
                   ext: str = "json") -> str:
        """Write `stem.<hash>.ext` (immutable) and map `route` to it (or only its own path); return the path."""
        etag = content_hash(data)
        rel = f"{stem}.{etag}.{ext}"
        self._write(rel, data, etag)
        self._route(route or f"/{rel}", rel, etag, content_type, hashed=True)
        return rel

    def add_file(self, route: str | None, rel: str, data: bytes, content_type: str,
                 headers: dict[str, str] | None = None) -> None:
        """Write a file at a fixed path (HTML pages, well-known names), optionally as a route with extra headers."""
        etag = content_hash(data)
        self._write(rel, data, etag)
        if route is not None:
            self._route(route, rel, etag, content_type, hashed=False, headers=headers)

    def _route(self, route: str, rel: str, etag: str, content_type: str, *, hashed: bool,
               headers: dict[str, str] | None = None) -> None:
        if route in self.routes:
            raise ValueError(f"route {route} emitted twice")
        record = self.routes[route] = {"file": rel, "etag": etag, "type": content_type, "hashed": hashed}
        if headers:
            record["headers"] = headers
        if self._recording is not None:
            self._recording[0][route] = record

    def merge(self, routes: dict[str, dict[str, str]], written: dict[str, str],
              units: dict[str, Unit] | None = None) -> None:
        """Take over routes, files and units written by another writer into the same root (a worker process)."""
        if self._recording is None and self.routes.keys().isdisjoint(routes):  # the records as that writer made them
            self.routes.update(routes)
            routes = {}
        for route, info in routes.items():
            self._route(route, info["file"], info["etag"], info["type"], hashed=info["hashed"],
                        headers=info.get("headers"))
        self.written.update(written)
        for name, unit in (units or {}).items():
            if name in self.units:
                raise ValueError(f"unit {name} emitted twice")
            self.units[name] = unit

    def write_manifest(self, extra: dict[str, Any], parts: RouteParts | None = None,
                       pool: Executor | None = None, last: LastRules | None = None) -> Layout | None:
        """Write `_manifest.json`, then the CDN's `_redirects` and `_headers`, all from the same map; `parts`: what
        they are made of per route, where some was made ahead (petgen/build/routeparts.py). `pool`: idle worker
        processes, which render `_redirects` and `_headers` of many routes (none made ahead) while this process
        writes the manifest and the route pack: every other file is written, so this is all the build does.
        `last`: the last build's files, patched where they can be (petgen/build/routelayout.py); with it, the
        layout of the files written is returned, for the next build."""
        from petgen.build.distpack import ROUTE_PACK, route_pack  # not at the top: petgen.content imports this module
        from petgen.build.routelayout import Layout
        from petgen.build.routeparts import RouteParts

        origin, signed = extra.get("runtime_origin"), bool(extra.get("signed_proxies"))
        patched = last.patch(self.routes, origin, signed) if last is not None else None
        parts = parts or RouteParts(origin)
        merged = parts.merged(self.routes) if patched is None else None
        if patched is not None:
            routes = dict(zip(patched.layout.order, map(self.routes.__getitem__, patched.layout.order)))
        elif merged is not None:
            routes = dict(zip(merged.order, map(self.routes.__getitem__, merged.order)))
        else:
            routes = dict(sorted(self.routes.items()))
        manifest = {**extra, "routes": routes}
        text = orjson.dumps(manifest, option=orjson.OPT_INDENT_2)
        rules: list[Future[str]] = []
        if pool is not None and merged is None and not parts.hashes and len(routes) >= RULES_APART:
            rules = [pool.submit(_render_rules, name, text) for name in ("_redirects", "_headers")]
        self._write(MANIFEST, text)
        # The same routes, as the runtime maps them.
        pack = last.route_pack(patched, routes, extra, len(text)) if last is not None and patched is not None else None
        self._write(ROUTE_PACK, pack or route_pack(routes, extra, len(text), known=parts.hashes or None))
        if rules:
            self._write("_redirects", rules[0].result().encode())
            self._write("_headers", rules[1].result().encode())
            return None
        if patched is not None:
            self._write("_redirects", patched.redirects)
            self._write("_headers", patched.headers)
            return patched.layout.written(self._etags())
        split = merged.split if merged is not None else split_routes(routes, parts.rule)
        texts = merged.headers if merged is not None else header_texts(routes.items(), parts.blocks)
        self._write("_redirects", render_redirects(routes, origin, signed, split=split).encode())
        self._write("_headers", render_headers(routes, texts=texts).encode())
        return Layout.of(routes, split, texts, origin, signed, self._etags()) if last is not None else None

    def _etags(self) -> tuple[str, str, str]:
        """The content hashes of `_headers`, `_redirects` and the route pack, as written."""
        return self.written["_headers"], self.written["_redirects"], self.written["_routes.pack"]


def _render_rules(name: str, manifest: bytes) -> str:
    """`_redirects` or `_headers` (`name`) of the routes of `manifest` (its JSON, which a worker is sent and reads
    in a third of the time that pickling the routes would take), for its runtime origin and signing."""
    found = orjson.loads(manifest)
    routes, origin = found["routes"], found.get("runtime_origin")
    return (render_redirects(routes, origin, bool(found.get("signed_proxies"))) if name == "_redirects"
            else render_headers(routes))


HeaderBlocks = tuple[str | None, str, str | None]  # a route's immutable block (of its file), path, clean URL block


def header_blocks(route: str, info: dict[str, Any]) -> HeaderBlocks:
    """A route's blocks of `_headers`: its hashed file's (immutable caching; None if not hashed), and its clean
    URL's (short revalidation; None for a hashed route at its file's own path), with that URL's path."""
    path = route.partition("?")[0]
    immutable = None
    if info["hashed"]:
        file = "/" + info["file"]
        immutable = f"{file}\n  Cache-Control: {IMMUTABLE}\n  Content-Type: {info['type']}"
        if path == file:
            return immutable, path, None
    headers = info.get("headers")
    extra = "".join(f"\n  {name}: {value}" for name, value in headers.items()) if headers else ""
    return immutable, path, f"{path}\n  Cache-Control: {REVALIDATE}\n  Content-Type: {info['type']}{extra}"


def render_headers(routes: dict[str, dict[str, Any]],
                   blocks: Callable[[str, dict[str, Any]], HeaderBlocks] = header_blocks,
                   texts: list[str | None] | None = None) -> str:
    """Netlify `_headers`: the security headers for every path, immutable caching for hashed files, short
    revalidation for clean URLs. No header is set for a path in two rules (CDNs differ in how they merge): a
    clean URL's block comes with the first of its routes (`blocks`: each route's, see `header_blocks`). `texts`:
    each route's blocks made already, joined (None: none), in the order of `routes`."""
    found = texts if texts is not None else header_texts(routes.items(), blocks)
    return "\n".join([headers_head(), *filter(None, found)]) + "\n"


def headers_head() -> str:
    """What `_headers` holds before the routes' blocks (each on lines of its own after it, then a line end)."""
    security = "".join(f"\n  {name}: {value}" for name, value in SECURITY_HEADERS.items())
    return ("# Generated by petgen build from _manifest.json. Do not edit.\n"
            f"/*\n  Access-Control-Allow-Origin: *\n  Access-Control-Expose-Headers: {CORS_EXPOSED}" + security)


def header_texts(routes: Iterable[tuple[str, dict[str, Any]]],
                 blocks: Callable[[str, dict[str, Any]], HeaderBlocks] = header_blocks) -> list[str | None]:
    """Each route's blocks of `_headers`, joined, in order (None: none): a clean URL's block only with the first
    of its routes."""
    seen: set[str] = set()
    texts: list[str | None] = []
    append = texts.append
    for route, info in routes:
        immutable, path, clean = blocks(route, info)
        if clean is not None and path not in seen:
            seen.add(path)
            append(clean if immutable is None else f"{immutable}\n{clean}")
        else:
            append(immutable)
    return texts


Stamp = tuple[int, int, int]


def manifest_stamp(dist_dir: Path) -> Stamp | None:
    """What tells one build's manifest from another's (inode, modification time, size); None while there is none."""
    try:
        info = os.stat(os.path.join(dist_dir, MANIFEST))
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


def lock_tree(fd: int, *, exclusive: bool, wait: bool = True) -> bool:
    """Lock a build's directory (held open as `fd`) until the handle is closed; False if `wait` is off and
    the lock is held otherwise.

    A runtime holds a shared lock on the build it serves from; `petgen build` reuses the tree of an
    earlier build only under an exclusive lock (petgen/build/incremental.py), so no runtime ever reads a tree
    while it is being rewritten. Where there are no locks (not POSIX), True.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: the build never reuses a tree there
        return True
    mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
    try:
        fcntl.flock(fd, mode)
    except BlockingIOError:
        return False
    return True


def new_build_dir(out: Path) -> Path:
    """A fresh directory beside `out`, so the final rename stays on one file system."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}-build-", dir=out.parent))


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths with Linux renameat2(RENAME_EXCHANGE); False where unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _stamp_now(manifest: Path) -> None:
    """Give the manifest the current modification time. A manifest kept from an earlier build is a hard link
    to that build's (the spare's) file: it is copied first, so that the other tree's stamp stays as it was."""
    try:
        if os.stat(manifest).st_nlink > 1:
            copy = manifest.with_name(manifest.name + ".stamp")
            shutil.copyfile(manifest, copy)
            os.replace(copy, manifest)
        else:
            os.utime(manifest)
    except FileNotFoundError:
        pass


def swap_in(tmp: Path, out: Path, *, keep: Path | None = None) -> None:
    """Replace `out` with `tmp` so that readers see the old tree or the new one, never a half-written one.

    On Linux the two directories are exchanged in one system call; elsewhere two renames leave a
    moment without `out`, which the runtime's reload tolerates by keeping what it has loaded. The old
    tree is deleted, or with `keep` moved there (replacing what was there).

    The new tree's manifest is stamped with the time of the swap, even when an incremental build kept
    it from an earlier build unchanged: it says when the content was last built (`is_stale`).
    """
    _stamp_now(tmp / MANIFEST)
    os.chmod(tmp, 0o755)
    if not out.exists():
        os.rename(tmp, out)
        return
    if _exchange(tmp, out):
        old = tmp
    else:
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=out.parent)) / "dist"
        os.rename(out, old)
        os.rename(tmp, out)
    if keep is None:
        remove_tree(old.parent if old != tmp else old)
    elif old != keep:
        if keep.exists():
            retire(keep)
        os.rename(old, keep)
        if old != tmp:
            shutil.rmtree(old.parent, ignore_errors=True)


_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_BY_DIR_FD = ({os.open, os.unlink, os.rmdir} <= os.supports_dir_fd and os.scandir in os.supports_fd
              and hasattr(os, "O_DIRECTORY"))


def remove_tree(tree: Path) -> None:
    """Delete a tree, as `shutil.rmtree(tree, ignore_errors=True)` does, in fewer system calls: each directory
    opened relative to its parent without following links (so a link put in while it runs is removed, not
    followed), its entries unlinked by name, and no `stat` of each to compare (0.1 s less of an old tree of
    10,000 entries, which a build deletes after its swap). Where the system cannot, or on any error, by
    `shutil.rmtree`."""
    if _BY_DIR_FD:
        try:
            fd = os.open(tree, _OPEN_DIR)
            try:
                _remove_inside(fd)
            finally:
                os.close(fd)
            os.rmdir(tree)
            return
        except FileNotFoundError:
            if not os.path.lexists(tree):
                return
        except OSError:
            pass
    shutil.rmtree(tree, ignore_errors=True)


def _remove_inside(fd: int) -> None:
    with os.scandir(fd) as found:
        entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in found]
    for name, is_dir in entries:
        if is_dir:
            inner = os.open(name, _OPEN_DIR, dir_fd=fd)
            try:
                _remove_inside(inner)
            finally:
                os.close(inner)
            os.rmdir(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)


def retire(tree: Path) -> None:
    """Move a build's tree aside, to be deleted by `sweep` once no runtime holds it (`lock_tree`)."""
    os.rename(tree, tempfile.mkdtemp(prefix=f"{RETIRED}{tree.name}-", dir=tree.parent))


def sweep(out: Path) -> None:
    """Delete the retired trees beside `out` that no runtime holds any more."""
    for old in out.parent.glob(f"{RETIRED}*"):
        try:
            fd = os.open(old, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            if lock_tree(fd, exclusive=True, wait=False):
                shutil.rmtree(old, ignore_errors=True)
        finally:
            os.close(fd)


def is_stale(content_dir: Path, out_dir: Path) -> bool:
    """True when dist is missing or older than any content file."""
    manifest = out_dir / "_manifest.json"
    if not manifest.exists():
        return True
    built = manifest.stat().st_mtime
    return any(p.stat().st_mtime > built for p in content_dir.rglob("*") if p.is_file())

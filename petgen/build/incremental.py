"""Incremental builds: rewrite only the files of dist/ that a change affects, in a tree no runtime reads.

A build with a cache (`petgen build`, `petgen dev`, `petgen serve`) keeps two trees: `dist/`, the live
build, and beside it `.dist-spare/`, the build before it, which the last swap moved out. The next build
turns the spare into the new build and swaps the two again, so it touches only what differs:

1. The build state (in the cache directory) lists every file of both trees with its content hash, for
   each entry the key of what its JSON and page were made from (its file, its related entries'
   titles, the site, taxonomy, templates and code: `PageRenderer.page_key` and `context_key`) and the
   key of its file alone (whether few enough changed is decided by those, before the pages' keys are
   made), and the live tree's units with their keys, routes and files.
2. The spare is locked exclusively (`lock_tree`); a runtime serving from it holds a shared lock, and then
   the live tree is cloned instead (a directory per directory, a hard link per file), which costs more
   but never changes a tree anyone reads.
3. Entries whose key is unchanged are not rendered: their files are kept, or linked from the live tree,
   and their routes taken over as the state has them (`TreeWriter.reuse_all`); of a changed entry's
   chunk only the changed entries are written again. So are the units (`DistWriter.unit`) whose key is
   unchanged: each list page (HTML and JSON), A–Z page and category resource, keyed by its list's size
   and the cards or summaries it shows, the OpenAPI document and /docs, keyed by the entries the
   document shows, and the search index, keyed by every entry's searchable fields. The lists behind the list
   pages are patched from the last build's, and only the pages that show a changed entry are keyed again
   (petgen/emit/listindex.py). Everything else (the
   data file, the home page, discovery, sitemap, manifest; `_headers`, `_redirects` and the route pack are
   patched from the live tree's: petgen/build/routelayout.py) is emitted as in a full build through a
   `TreeWriter`, which writes a file only if the tree does not hold those bytes already, and deletes what
   the new build no longer has; `llms-full.txt` is cut from the live tree's where its entries are
   unchanged (petgen/emit/llms.py). The search index, when it has to be made, is updated from the one kept in
   the cache. A forked child writes it while the build process runs the checks across entries and writes the
   rest (`Edit` in petgen/build/pipeline.py).
4. The finished tree is exchanged with `dist/` in one system call (renameat2 RENAME_EXCHANGE); the old
   live tree becomes the spare.

A file is never rewritten in place: a changed file is unlinked and created anew, so a handle a runtime
still holds keeps the bytes it opened. The output is the same, byte for byte, as a clean build's
(tests/petgen/test_incremental.py checks that after random edits, additions, renames and deletions).
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import shutil
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Generic, TypeVar

from petgen.build.dist import (
    DistWriter,
    Routes,
    Stamp,
    Unit,
    content_hash,
    lock_tree,
    manifest_stamp,
    new_build_dir,
    write_file,
)
from petgen.build.files import read_file, write_atomic

STATE_VERSION = 6
LOCK_WAIT = 3.0  # seconds to wait for a runtime to let go of the spare tree (it reloads within its poll interval)
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
V = TypeVar("V")


class Marshalled(Generic[V]):
    """A part of the state kept as the marshalled bytes it was read as until first used (`value`), and stored again as
    those bytes (`blob`) if it never was: a rebuild after one edit reads the spare's files before it forks its child,
    each entry's routes after, and the live tree's files not at all (they are stored again as the spare's)."""

    __slots__ = ("_blob", "_value")

    def __init__(self, value: V | None = None, blob: bytes | None = None) -> None:
        self._value, self._blob = value, blob

    @property
    def value(self) -> V:
        if self._value is None:
            assert self._blob is not None
            self._value = marshal.loads(self._blob)
        return self._value

    @property
    def blob(self) -> bytes:
        if self._blob is None:
            self._blob = marshal.dumps(self._value)
        return self._blob


class Layered(Generic[V]):
    """A dict of the state kept as an earlier build's, marshalled (`base`: stored again as it was read), and what was
    set or removed since (`since`; None where removed): a rebuild after one edit reads it whole (`value`) but marshals
    only what changed since (`after`), until that is a sixteenth of it, and it is marshalled whole again. Each entry's
    routes were 10,000 records marshalled again by each rebuild, for the two of the edited entry."""

    __slots__ = ("_value", "base", "since")

    def __init__(self, base: Marshalled[dict[str, V]], since: dict[str, V | None] | None = None) -> None:
        self.base, self.since = base, since or {}
        self._value: dict[str, V] | None = None

    @property
    def value(self) -> dict[str, V]:
        if self._value is None:
            value = self.base.value
            if self.since:
                value = dict(value)
                for key, item in self.since.items():
                    if item is None:
                        value.pop(key, None)
                    else:
                        value[key] = item
            self._value = value
        return self._value

    def after(self, changes: dict[str, V | None]) -> Layered[V]:
        """This dict with `changes` made (None: the key removed)."""
        since = {**self.since, **changes}
        if 16 * len(since) <= len(self.value):
            return Layered(self.base, since)
        value = {key: item for key, item in {**self.value, **changes}.items() if item is not None}
        return Layered(Marshalled(value))

    def stored(self) -> tuple[bytes, dict[str, V | None]]:
        return self.base.blob, self.since


@dataclass
class BuildState:
    """What the last build left: the files of the live tree and of the spare, and each entry's key and routes."""

    live: Marshalled[dict[str, str]]  # file -> content hash, in out_dir
    live_stamp: Stamp
    spare: Marshalled[dict[str, str]] | None = None  # the same for the spare tree; None if there is no usable one
    spare_stamp: Stamp | None = None
    keys: dict[str, str] = field(default_factory=dict)  # slug -> the key its JSON and page were made for
    routes: Layered[Routes] = field(default_factory=lambda: Layered(Marshalled({})))  # slug -> its routes
    units: dict[str, Unit] = field(default_factory=dict)  # the live tree's units (`DistWriter.unit`)
    sources: dict[str, str] = field(default_factory=dict)  # slug -> the key of its entry file (`KnowledgeBase.keys`)
    context: str = ""  # what every page depends on besides its entry (`PageRenderer.context_key`)
    version: int = STATE_VERSION
    layout: Marshalled[tuple] | None = None  # `Layout.stored()` of the live tree's `_headers` and `_redirects`


# The fields of a BuildState stored as marshalled bytes of their own (`Marshalled`), and as those and the changes
# since (`Layered`).
_MARSHALLED = ("live", "spare", "layout")
_LAYERED = ("routes",)


def spare_path(out: Path) -> Path:
    return out.parent / f".{out.name}-spare"


def state_path(cache_dir: Path, out: Path) -> Path:
    """One state per output directory, kept in the cache."""
    name = hashlib.blake2b(os.fsencode(out.resolve()), digest_size=8).hexdigest()
    return cache_dir / "builds" / f"{name}.state"


def search_state_path(cache_dir: Path, out: Path) -> Path:
    """The search index of the build at `out` with what it was made of (petgen/search/update.py)."""
    return state_path(cache_dir, out).with_suffix(".search")


def load_state(cache_dir: Path | None, out: Path) -> BuildState | None:
    """The last build's state, if it describes the tree that is at `out` now (else None: build it all)."""
    if cache_dir is None:
        return None
    try:
        found = marshal.loads(read_file(state_path(cache_dir, out)))
        if not isinstance(found, dict) or found.get("version") != STATE_VERSION:
            return None
        for name in _MARSHALLED:
            blob = found[name]
            if blob is not None and not isinstance(blob, bytes):
                return None
            found[name] = Marshalled(blob=blob) if blob is not None else None
        for name in _LAYERED:
            blob, since = found[name]
            if not isinstance(blob, bytes) or not isinstance(since, dict):
                return None
            found[name] = Layered(Marshalled(blob=blob), since)
        state = BuildState(**found)
    except Exception:  # noqa: BLE001 - missing, unreadable or of another shape: a full build
        return None
    if manifest_stamp(out) != state.live_stamp:  # another build (or a hand) changed dist/ since
        return None
    if state.spare is not None and os.path.exists(recycling_path(cache_dir, out)):
        state.spare, state.spare_stamp = None, None  # a build that changed the spare did not finish
    return state


def recycling_path(cache_dir: Path, out: Path) -> Path:
    return state_path(cache_dir, out).with_suffix(".recycling")


def recycling(cache_dir: Path | None, out: Path) -> None:
    """Mark the spare as changing: until the next `save_state`, it holds no build the state could describe
    (a file created, instead of the whole state written again)."""
    if cache_dir is not None:
        with contextlib.suppress(OSError), open(recycling_path(cache_dir, out), "wb"):
            pass


def save_state(cache_dir: Path | None, out: Path, state: BuildState | None) -> None:
    """Store the state (None: forget it, so that the next build is a full one)."""
    if cache_dir is None:
        return
    path = state_path(cache_dir, out)
    if state is None:
        with contextlib.suppress(OSError):
            path.unlink()
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        # marshal: plain dicts, tuples and strings, written in half the time pickle takes (Python's own format, of
        # this version: another Python fails to read it, and builds in full).
        write_atomic(path, marshal.dumps({f.name: value.blob if isinstance(value := getattr(state, f.name), Marshalled)
                                          else value.stored() if isinstance(value, Layered) else value
                                          for f in fields(state)}))
    with contextlib.suppress(OSError):
        recycling_path(cache_dir, out).unlink()


@dataclass
class TreeWriter(DistWriter):
    """A DistWriter into a tree that holds an earlier build (`present`: its files): writes only what differs,
    links from `source` (the live tree) what is unchanged but not emitted again, and removes what is left over."""

    present: dict[str, str] = field(default_factory=dict)
    source: Path | None = None
    changed: int = 0  # files written or linked

    def _write(self, rel: str, data: bytes, etag: str | None = None) -> None:
        etag = etag or content_hash(data)
        self._wrote(rel, etag)
        if self.present.get(rel) == etag:
            return
        path = os.path.join(self.root, rel)
        if rel in self.present:
            os.unlink(path)  # a new file, not new bytes in the old one: open handles keep what they read
        else:
            self._mkdir(os.path.dirname(rel))
        write_file(path, data)
        self.changed += 1

    def reuse_all(self, groups: list[Routes], files: dict[str, str] | None = None) -> None:
        """Take over routes and files (by default: the routes' files) that the last build wrote into the live tree,
        several groups (each entry's, say) at once: kept where this tree holds the same bytes, else linked from the
        live tree. Their records are taken as they are (the last build's, which nothing changes), not copied one by
        one."""
        own = self.routes
        count = len(own)
        for routes in groups:
            own.update(routes)
            count += len(routes)
        if len(own) != count:
            raise ValueError("a route emitted twice")
        if self._recording is not None:
            for routes in groups:
                self._recording[0].update(routes)
        if files is None:
            files = {info["file"]: info["etag"] for routes in groups for info in routes.values()}
        written, present = self.written, self.present
        if not written.keys().isdisjoint(files.keys()):  # a file written already is left as it is
            files = {rel: etag for rel, etag in files.items() if rel not in written}
        written.update(files)
        if self._recording is not None:
            self._recording[1].update(files)
        for rel in [rel for rel, etag in files.items() if present.get(rel) != etag]:
            assert self.source is not None
            path = os.path.join(self.root, rel)
            if rel in present:
                os.unlink(path)
            else:
                self._mkdir(os.path.dirname(rel))
            os.link(os.path.join(self.source, rel), path)
            self.changed += 1

    def remove_stale(self) -> None:
        """Delete the files this build did not write, and the directories that leaves empty."""
        emptied: set[str] = set()
        for rel in self.present.keys() - self.written.keys():
            os.unlink(os.path.join(self.root, rel))
            self.changed += 1
            emptied.add(os.path.dirname(rel))
        for rel in sorted(emptied, key=lambda d: d.count("/"), reverse=True):
            while rel:
                try:
                    os.rmdir(os.path.join(self.root, rel))
                except OSError:  # not empty: neither are its parents
                    break
                rel = os.path.dirname(rel)


@dataclass
class Target:
    """The tree an incremental build turns into the new build."""

    root: Path
    present: dict[str, str]
    recycled: bool  # the spare (else a fresh clone of the live tree)
    fd: int | None = None  # the spare held open and locked


def target_tree(out: Path, state: BuildState) -> Target:
    """The spare tree, locked, if it is the one the state describes; else a clone of the live tree."""
    spare = spare_path(out)
    if state.spare is not None and manifest_stamp(spare) == state.spare_stamp:
        fd = os.open(spare, _OPEN_DIR)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            if lock_tree(fd, exclusive=True, wait=False):
                return Target(spare, state.spare.value, recycled=True, fd=fd)
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        os.close(fd)
    return Target(clone_tree(out, state.live.value), dict(state.live.value), recycled=False)


def clone_tree(out: Path, files: dict[str, str]) -> Path:
    """A new directory beside `out` with a hard link to each of its `files`."""
    tmp = new_build_dir(out)
    made: set[str] = {""}
    try:
        for rel in files:
            parent = os.path.dirname(rel)
            if parent not in made:
                os.makedirs(os.path.join(tmp, parent), exist_ok=True)
                while parent not in made:
                    made.add(parent)
                    parent = os.path.dirname(parent)
            os.link(os.path.join(out, rel), os.path.join(tmp, rel))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def release(target: Target) -> None:
    if target.fd is not None:
        os.close(target.fd)
        target.fd = None

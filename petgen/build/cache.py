"""A content-addressed cache of parsed and checked entries, so that a build parses only what changed.

Parsing and the per-entry checks are a pure function of an entry file's path and bytes, and of the
code that parses them. The cache maps `blake2b(path, bytes)` to that function's result (the entry
and its problems), under a directory named by a fingerprint of the code (petgen's own sources and
the versions of Python and PyYAML): a changed parser never sees results of an older one.

Results are stored in chunk files of pickled `(key, entry, problems)` records, exactly the bytes a
parse worker sends back to the build, so filling the cache costs one file write per chunk and no
extra serialisation. Chunks no current file uses are deleted after each load, and chunks that are
mostly unused, or too many, are compacted, so a content directory's cache stays close to its size.

Beside each chunk, `pages-<context>/<chunk>` keeps the rendered pages of its entries, each with the
key it was rendered for (the entry file, its related entries' titles); the context is everything
else a page depends on (site, taxonomy, templates, code). See `petgen.emit.entries`.

The cache is a local, private directory (`.petgen/cache` by default) that only petgen writes;
like any pickle it must not be shared with untrusted parties. A missing, unreadable or corrupt
cache is never an error: the build parses the files again and writes a fresh one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from petgen.build.files import content_root, read_file, write_atomic

Record = tuple[str, Any, list]  # (key, entry or None, problems)
LIGHT = ".light"  # beside each chunk: the light form of its entries (`Lazy`)
COLUMNS = ".columns"  # and the fields it leaves out, field by field (`Lazy.columns`)
Packed = tuple[str, bytes, frozenset[str]]  # (chunk name, pickled records, keys of the entries to take)
MAX_CHUNKS = 256  # more chunks than this (many small changes) are compacted
_MISSING = object()


TAIL_PARTS = 4  # the last chunks of a parse are this many times smaller (`chunk_size`)


def chunk_size(count: int, *, tail: bool = False) -> int:
    """Entries per chunk, the unit of work of the parse and page workers: enough chunks for every
    core to get several (so the work stays balanced), at most 1,000 entries, at least 50. With `tail`: the
    size of the chunks of the last entries to parse (a chunk's worth for each worker), TAIL_PARTS times smaller,
    so that the workers finish at about the same time (one done with its last chunk waits for the others')."""
    size = max(50, min(1000, count // ((os.cpu_count() or 1) * 8)))
    return max(50, size // TAIL_PARTS) if tail else size


class Lazy(Protocol):
    """How the cache keeps an entry without unpickling it: its `light` form (the fields the build reads of every
    entry), kept in a small file beside its chunk; some other fields in another, as one column of values per field
    for the chunk's entries (`columns`: by field name, a list in the chunk's order, None for a record without an
    entry), each unpickled when a field of it is first read; and the `entry` made from the light form of `key`,
    which loads the rest from `source` (the cache: `EntryCache.column` and `.entry` of that key) when first read
    (petgen/content/lazy.py)."""

    def light(self, entry: Any) -> Any: ...

    def columns(self, entries: list[Any]) -> dict[str, list[Any]]: ...

    def entry(self, light: Any, key: str, source: Any) -> Any: ...


class Chunk:
    """One chunk of `EntryCache.packed`, unpacked as `(name, blob, keys)`: its blob is read from the cache only
    when a stage unpacks it (an incremental build unpickles the chunks of the changed entries only), and it
    pickles as that plain tuple (for the page workers)."""

    __slots__ = ("_cache", "keys", "name")

    def __init__(self, name: str, keys: frozenset[str], cache: EntryCache) -> None:
        self.name, self.keys, self._cache = name, keys, cache

    def __iter__(self) -> Iterator[Any]:
        return iter((self.name, self._cache.blob(self.name), self.keys))

    def __getitem__(self, index: int) -> Any:
        return (self.name, None, self.keys)[index] if index != 1 else self._cache.blob(self.name)

    def __len__(self) -> int:
        return 3

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (tuple(self),)


class EntryCache:
    """Parsed entries by key, loaded from and saved to `directory` (None: a cache that keeps nothing).

    With `lazy`, a chunk is not unpickled when the cache is opened: its entries are made from the light file
    beside it (`Lazy`), and the chunk is unpickled only when a stage reads a field the light form lacks. A
    rebuild after one edit then unpickles the one chunk of the changed entry's page, not 10,000 entries."""

    def __init__(self, directory: Path | None, content_dir: Path, lazy: Lazy | None = None,
                 reparse: Callable[[str], Any] | None = None) -> None:
        self.root = content_root(directory, content_dir) if directory is not None else None
        self.lazy, self.reparse = lazy, reparse
        self.records: dict[str, tuple[Any, list]] = {}  # the entries unpickled
        self.light: dict[str, tuple[Any, list, str]] = {}  # the others: key -> (light form, problems, chunk)
        self._chunks: dict[str, list[str]] = {}  # chunk file name -> keys it holds
        self.blobs: dict[str, bytes] = {}  # chunk name -> its pickled records, as read or written
        # Chunk name -> its entries' positions by key, and each column field's values (pickled, until first read).
        self._columns: dict[str, tuple[dict[str, int], dict[str, Any]]] = {}
        self.hits = 0
        if self.root is not None:
            self._load()

    def _load(self) -> None:
        assert self.root is not None
        try:
            names = sorted(os.listdir(self.root))
        except OSError:
            return
        for name in names:
            if not name.endswith(".pickle"):
                continue
            light = self._read_light(name) if self.lazy is not None else None
            if light is not None:
                self._chunks[name] = [key for key, _, _ in light]
                for key, form, problems in light:
                    self.light[key] = (form, problems, name)
            elif self._unpickle(name) and self.lazy is not None:
                self._write_light(name)

    def _read_light(self, name: str) -> list[tuple[str, Any, list]] | None:
        assert self.root is not None
        with contextlib.suppress(Exception):  # missing or damaged: unpickle the chunk and write it again
            light = pickle.loads(read_file(self.root / (name + LIGHT)))
            if isinstance(light, list):
                return light
        return None

    def _write_light(self, name: str) -> None:
        assert self.root is not None and self.lazy is not None
        light = [(key, self.lazy.light(entry) if entry is not None else None, problems)
                 for key in self._chunks[name] for entry, problems in [self.records[key]]]
        columns = self.lazy.columns([self.records[key][0] for key in self._chunks[name]])
        write_atomic(self.root / (name + COLUMNS), pickle.dumps(
            {field: pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL) for field, values in columns.items()},
            protocol=pickle.HIGHEST_PROTOCOL))
        write_atomic(self.root / (name + LIGHT), pickle.dumps(light, protocol=pickle.HIGHEST_PROTOCOL))

    def column(self, key: str, field: str) -> Any:
        """The value of `field` (one of the `Lazy.columns`) of the entry of `key`, from its chunk's column of that
        field, read when first needed (if the file is gone or damaged: from the whole entry)."""
        name = self.light[key][2]
        found = self._columns.get(name)
        if found is None:
            if name not in self._chunks:  # compacted into another chunk since the cache was opened
                return getattr(self.entry(key), field)
            assert self.root is not None
            columns: dict[str, Any] = {}
            with contextlib.suppress(Exception):
                read = pickle.loads(read_file(self.root / (name + COLUMNS)))
                columns = read if isinstance(read, dict) else {}
            found = self._columns[name] = ({k: i for i, k in enumerate(self._chunks[name])}, columns)
        positions, columns = found
        values = columns.get(field)
        if isinstance(values, bytes):
            try:
                values = columns[field] = pickle.loads(values)
            except Exception:  # noqa: BLE001 - damaged: read from the whole entry
                values = columns[field] = None
        at = positions.get(key)
        if isinstance(values, list) and len(values) == len(positions) and at is not None:
            return values[at]
        return getattr(self.entry(key), field)

    def _unpickle(self, name: str) -> bool:
        """Load one chunk's records (False, and the chunk removed, if it cannot be read)."""
        assert self.root is not None
        try:
            records: list[Record] = pickle.loads(self.blob(name))
        except Exception:  # noqa: BLE001 - a damaged chunk is only a cache miss; remove it
            self.blobs.pop(name, None)
            for path in (self.root / name, self.root / (name + LIGHT), self.root / (name + COLUMNS)):
                with contextlib.suppress(OSError):
                    os.unlink(path)
            return False
        self._chunks[name] = [key for key, _, _ in records]
        for key, entry, problems in records:
            self.records[key] = (entry, problems)
        return True

    def blob(self, name: str) -> bytes:
        """A chunk's pickled records, read when first needed."""
        blob = self.blobs.get(name)
        if blob is None:
            assert self.root is not None
            blob = self.blobs[name] = read_file(self.root / name)
        return blob

    def entry(self, key: str) -> Any:
        """The whole entry of `key`, unpickling its chunk if it is not loaded yet (if the chunk is gone or
        damaged since the cache was opened: `reparse(key)`, the entry made again from its file)."""
        if key not in self.records:
            light = self.light.get(key)
            if light is None or not self._unpickle(light[2]) or key not in self.records:
                if self.reparse is None:
                    raise LookupError(f"entry {key} is no longer in the build cache")
                return self.reparse(key)
        return self.records[key][0]

    def get(self, key: str) -> tuple[Any, list] | None:
        found = self.records.get(key)
        if found is None:
            light = self.light.get(key)
            if light is None:
                return None
            assert self.lazy is not None
            form, problems, _ = light
            found = (self.lazy.entry(form, key, self) if form is not None else None, problems)
        self.hits += 1
        return found

    def add_chunk(self, blob: bytes) -> list[Record]:
        """Take a pickled list of records (from a parse worker): remember it, store it, return it."""
        records: list[Record] = pickle.loads(blob)
        for key, entry, problems in records:
            self.records[key] = (entry, problems)
        if records:
            name = hashlib.blake2b(blob, digest_size=12).hexdigest() + ".pickle"
            self._chunks[name] = [key for key, _, _ in records]
            self.blobs[name] = blob
            if self.root is not None:
                self._write(name, blob)
                if self.lazy is not None and self.root.is_dir():
                    self._write_light(name)
        return records

    def packed(self, in_use: list[str]) -> list[Chunk]:
        """The chunks holding the entries in use, each with the keys to take from it (every key once):
        what the page workers unpickle instead of inheriting the build's objects."""
        wanted = set(in_use)
        packed = []
        for name, keys in self._chunks.items():
            mine = frozenset(k for k in keys if k in wanted)
            if mine:
                wanted -= mine
                packed.append(Chunk(name, mine, self))
        return packed

    def _write(self, name: str, blob: bytes) -> None:
        assert self.root is not None
        if not self.root.is_dir():
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError:
                return
            for old in self.root.parent.parent.glob("entries-*"):  # results of another petgen version
                if old != self.root.parent:
                    shutil.rmtree(old, ignore_errors=True)
        write_atomic(self.root / name, blob)

    def prune(self, in_use: set[str]) -> None:
        """Delete chunks none of whose entries is in use any more; when a third of what is stored is
        unused, or there are many chunks, rewrite what is in use as fresh chunks of `chunk_size`."""
        if self.root is None:
            return
        stored = sum(len(keys) for keys in self._chunks.values())
        unused = stored - len(in_use & (self.records.keys() | self.light.keys()))
        compact = (unused and 3 * unused >= stored) or len(self._chunks) > MAX_CHUNKS
        if compact:  # every entry in use is written again: unpickle them all
            for name in [name for name in self._chunks if any(key not in self.records for key in self._chunks[name])]:
                self._unpickle(name)
        for name, keys in list(self._chunks.items()):
            if compact or not any(key in in_use for key in keys):
                del self._chunks[name]
                self.blobs.pop(name, None)
                for path in (self.root / name, self.root / (name + LIGHT), self.root / (name + COLUMNS),
                             *(pages / name for pages in self.root.glob("pages-*"))):
                    try:
                        os.unlink(path)
                    except OSError:
                        pass
        if compact:
            live = [(key, *self.records[key]) for key in sorted(in_use) if key in self.records]
            size = chunk_size(len(live))
            for start in range(0, len(live), size):
                self.add_chunk(pickle.dumps(live[start:start + size], protocol=pickle.HIGHEST_PROTOCOL))


class EntryMemo:
    """Per-entry results of a later stage (an entry's list summary, its llms.txt section, …) kept between builds
    beside the chunks: `get(key, make)` answers from the last build's results for the entry file `key`
    (`entry_key`) or calls `make`; `save` keeps those of the entries in use. `context` names everything else the
    results depend on (petgen's code is in the cache's path already): another context starts empty.

    Two pickles for all entries: the results as of some build (`name.memo`), and those made since (`name.memo-new`,
    rewritten by each build that makes some). A build that changes one entry loads both and writes the small one;
    when a fifth of what is stored is no longer used, the results in use are written as a new `name.memo`.
    """

    def __init__(self, root: Path | None, name: str, context: str) -> None:
        self.path = root / f"{name}.memo" if root is not None else None
        self.context = context
        self.found: dict[str, Any] = {}  # the stored results (of `path`, then those of `path`-new over them)
        self.base: set[str] | dict[str, Any] = {}  # the keys of `path`'s results
        self.used: dict[str, Any] = {}
        self.made = 0
        if self.path is not None:
            self.found = self._read(self.path)
            self.base = self.found.keys() if self.found else {}  # type: ignore[assignment]
            added = self._read(self._delta) if self.found else {}
            if added:
                self.base = set(self.base)
                self.found.update(added)

    @property
    def _delta(self) -> Path:
        assert self.path is not None
        return self.path.with_name(self.path.name + "-new")

    def _read(self, path: Path) -> dict[str, Any]:
        with contextlib.suppress(Exception):  # missing or damaged: make every result again
            stored_context, found = pickle.loads(read_file(path))
            if stored_context == self.context and isinstance(found, dict):
                return found
        return {}

    def get(self, key: str | None, make: Callable[[], Any]) -> Any:
        if key is None:
            return make()
        value = self.found.get(key, _MISSING)
        if value is _MISSING:
            value = make()
            self.made += 1
        self.used[key] = value
        return value

    def get_all(self, keys: list[str | None], make: Callable[[int], Any]) -> list[Any]:
        """`get` for each of `keys`, in one pass; `make(i)` makes the result of `keys[i]`."""
        found = self.found
        values = [found.get(key, _MISSING) for key in keys]  # type: ignore[arg-type]
        for i, value in enumerate(values):
            if value is _MISSING:
                values[i] = make(i)
                self.made += keys[i] is not None
        self.used.update(zip(keys, values))
        self.used.pop(None, None)  # type: ignore[call-overload]
        return values

    def save(self) -> None:
        """Keep the results this build used, if they differ from those stored: those not in `name.memo` in
        `name.memo-new`, or all of them in a new `name.memo` when much of the stored is unused."""
        if self.path is None or (not self.made and len(self.used) == len(self.found)) or not self.path.parent.is_dir():
            return
        used, base = self.used, self.base
        if 5 * (len(self.found) - len(used)) > len(self.found) or not base:
            write_atomic(self.path, pickle.dumps((self.context, used), protocol=pickle.HIGHEST_PROTOCOL))
            with contextlib.suppress(OSError):
                os.unlink(self._delta)
            return
        added = {key: value for key, value in used.items() if key not in base}
        write_atomic(self._delta, pickle.dumps((self.context, added), protocol=pickle.HIGHEST_PROTOCOL))

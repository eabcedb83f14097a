"""The entry files as a build finds them: their names, their stamps and keys, and what changed since the last build.

Every build with a cache begins by looking at every entry file (`scan`): its stamp (size, times, inode) tells
whether it is as the last build found it, and then its key (a hash of its path and bytes) is the one recorded with
that stamp; only the others are read and hashed. At 10,000 entries that is 10,000 `stat` calls and a stamps file
loaded and saved, a tenth of a one-edit rebuild. None of it needs what the build imports, so `petgen build` starts
it in a forked child (`prescan`) before importing the rest of the build, and the child's scan runs on the second
core while the build process imports (petgen/content/kb.py, `load_entries`, takes its result).

It also holds the format of the build's larger states (`dumps_state`: their arrays read without a copy). This module
imports only the standard library, so that the child starts at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import struct
import sys
import time
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from petgen.build.forked import Forked

Stamp = tuple[int, int, int, int]  # an entry file's size, modification and change times (ns), inode
STAMPS = "files.stamps"  # path -> (stamp, key) of the entry files as the last load found them
RACY_NS = 2_000_000_000  # a file changed this recently may change again within its time stamp's resolution


def read_file(path: str | os.PathLike[str]) -> bytes:
    """Read a whole file with open, read until end, close (see `write_file`): in one read of the size the file has,
    into one buffer (read a megabyte at a time and joined, the build's 5 to 20 MB state files were each allocated
    twice, every page of both faulted in, and copied once more)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = [os.read(fd, os.fstat(fd).st_size or 1 << 20)]
        while chunks[-1] and (chunk := os.read(fd, 1 << 20)):  # to the end (it may have grown meanwhile)
            chunks.append(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename; a cache that cannot be written costs speed, never the build."""
    import tempfile  # not at the top: the child of `prescan` needs it only after its scan (and it imports random)

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


_STATE_MAGIC = b"petgen-state-1\n"
_LENGTH = struct.Struct("<Q")
_ALIGN = 64  # where each array's bytes start in the file (from the start of the bytes read: NumPy's alignment)


def dumps_state(state: object) -> bytes:
    """`state` pickled with the bytes of its arrays apart (pickle protocol 5's out-of-band buffers, each aligned), for
    `loads_state`: the build's states are a few large NumPy arrays and some Python objects."""
    buffers: list[pickle.PickleBuffer] = []
    body = pickle.dumps(state, protocol=5, buffer_callback=buffers.append)
    raws = [buffer.raw() for buffer in buffers]
    head = _STATE_MAGIC + _LENGTH.pack(len(raws)) + b"".join(_LENGTH.pack(len(raw)) for raw in [body, *raws])
    parts, at = [head], len(head)
    for raw in [body, *raws]:
        pad = -at % _ALIGN
        parts += [b"\0" * pad, raw]
        at += pad + len(raw)
    return b"".join(parts)


def loads_state(data: bytes) -> object:
    """What `dumps_state` pickled, its arrays made on the bytes given (read-only, not copied: a state of 10 MB was
    allocated and copied twice, once read and once unpickled, every new page faulted in)."""
    if not data.startswith(_STATE_MAGIC):
        raise ValueError("not a state file")
    at = len(_STATE_MAGIC)
    (count,) = _LENGTH.unpack_from(data, at)
    sizes = [_LENGTH.unpack_from(data, at + 8 * (1 + i))[0] for i in range(count + 1)]
    view, at, parts = memoryview(data), at + 8 * (count + 2), []
    for size in sizes:
        at += -at % _ALIGN
        if at + size > len(data):
            raise ValueError("a state file cut short")
        parts.append(view[at:at + size])
        at += size
    return pickle.loads(parts[0], buffers=parts[1:])


def entry_names(content_dir: Path) -> list[str]:
    """The file name of every entry (`names/*.md`), in a stable order (by name)."""
    try:
        return sorted(name for name in os.listdir(os.path.join(content_dir, "names")) if name.endswith(".md"))
    except OSError:  # no names/ directory (or not a readable one): no entries, as a glob finds none
        return []


def file_stamp(info: os.stat_result) -> Stamp:
    """What tells a file's contents apart without reading it, as long as nothing forges it: its size,
    modification and change times, and inode (a file replaced by a rename has a new one)."""
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def entry_key(path: str, raw: bytes) -> str:
    """The cache key of an entry file: its path (problems name it) and its bytes."""
    digest = hashlib.blake2b(path.encode(), digest_size=16)
    digest.update(b"\0")
    digest.update(raw)
    return digest.hexdigest()


@cache
def fingerprint(*packages: str) -> str:
    """A hash of the code that decides a cached result: the sources of `packages` (petgen itself when
    none are given), the Python version and PyYAML's."""
    import yaml  # not at the top: the child of `prescan` imports nothing else of the build

    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{sys.version}\0{yaml.__version__}\0".encode())
    root = Path(__file__).parents[2]
    for package in packages or ("petgen",):
        for source in sorted((root / package).rglob("*.py")):
            digest.update(f"{source.relative_to(root)}\0".encode() + source.read_bytes() + b"\0")
    return digest.hexdigest()


def content_root(directory: Path, content_dir: Path) -> Path:
    """Where the cache in `directory` keeps what it knows of `content_dir`: one directory per content directory, so
    that two sites sharing a cache never evict each other, under one per version of the code (`fingerprint`)."""
    site = hashlib.blake2b(str(content_dir.resolve()).encode(), digest_size=6).hexdigest()
    return directory / f"entries-{fingerprint()}" / site


def load_stamps(root: Path) -> dict[str, tuple[Stamp, str]]:
    """The key of each entry file by its path, with the stamp (`file_stamp`) it had when it was hashed: a
    file whose stamp is the same need not be read and hashed again."""
    try:
        found = pickle.loads(read_file(root / STAMPS))
    except Exception:  # noqa: BLE001 - missing or damaged: hash every file
        return {}
    return found if isinstance(found, dict) else {}


def save_stamps(root: Path, stamps: dict[str, tuple[Stamp, str]], now_ns: int) -> None:
    """Keep the stamps of the files hashed by this load, but not of the files changed (by their change
    time, which no one can set back) in the last RACY_NS before `now_ns`: another change within the same
    clock tick would leave the stamp as it is. Those keep their key with an empty stamp, which matches no
    file (they are hashed again), so that the next load still knows which entry a changed file was."""
    if not root.is_dir():
        return
    write_atomic(root / STAMPS, pickle.dumps(
        {path: found if found[0][2] < now_ns - RACY_NS else ((), found[1]) for path, found in stamps.items()},
        protocol=pickle.HIGHEST_PROTOCOL))


class Scanned:
    """The entry files of a content directory as `scan` found them, in `entry_names` order. (Not a dataclass: the
    child of `prescan` would import `dataclasses` before it could begin.)"""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.keys: list[str | None] = []  # each file's key (`entry_key`), None for one that could not be read
        self.read: dict[str, bytes] = {}  # name -> bytes, of the files read (the others are as their stamp says)
        self.failed: dict[str, str] = {}  # name -> why it could not be read (`strerror`)
        self.before: dict[str, str] = {}  # name -> its key in the last scan, where it is another now
        # Nothing was known of the files (no stamps: the cache's first build, or the code changed): none was read
        # here. The load reads each, as a build without a cache does, handing chunks to its workers as it reads
        # them (read here, all of them had been sent back through a pipe before the first chunk could be handed
        # out), and saves each file's key with the stamp it had here (`stamps`) and the time of the scan (`now`).
        self.fresh = False
        self.stamps: dict[str, Stamp] = {}
        self.now = 0


def scan(content_dir: Path, root: Path) -> Scanned:
    """Every entry file of `content_dir` with its key: read and hashed if its stamp is not the one the last scan
    recorded with a key in the cache's `root`, where this scan's stamps are saved (`save_stamps`)."""
    now = time.time_ns()
    names = entry_names(content_dir)
    known, stamps = load_stamps(root), {}
    names_dir = os.path.join(content_dir, "names", "")  # + name: `os.path.join(names_dir, name)`, cheaper
    found = Scanned(names)
    if not known:  # every file is to be read: by the load (`Scanned.fresh`), which hashes each as it reads it
        found.fresh, found.now = True, now
        for name in names:
            with contextlib.suppress(OSError):  # the load reports a file it cannot read
                found.stamps[name] = file_stamp(os.stat(names_dir + name))
        return found
    keys, read, failed, before = found.keys, found.read, found.failed, found.before
    for name in names:
        # Keyed by the path inside the content directory: `content`, `./content` and `/abs/content` share one
        # cache instead of missing (and pruning) each other's entries. Paths are plain strings here (10,000 `Path`
        # objects cost more than the rest of this loop).
        rel = f"names/{name}"  # as `path.relative_to(content_dir).as_posix()`
        path = names_dir + name
        try:
            stamp = file_stamp(os.stat(path))
            seen = known.get(rel)
            if seen is not None and seen[0] == stamp:
                key = seen[1]
            else:
                raw = read[name] = read_file(path)
                key = entry_key(rel, raw)
                if seen is not None and seen[1] != key:
                    before[name] = seen[1]
        except OSError as exc:  # a directory named *.md, a dangling link, no permission
            failed[name] = exc.strerror or str(exc)
            keys.append(None)
            continue
        keys.append(key)
        stamps[rel] = (stamp, key)
    save_stamps(root, stamps, now)
    return found


def prescan(content_dir: Path, cache_dir: Path | None) -> Forked[Scanned] | None:
    """`scan` begun in a forked child (where the system can fork and has a second core), for `load_entries` to take;
    None without a cache (a build without one reads every file) or a child."""
    from petgen.build.forked import Forked

    if cache_dir is None or not Forked.possible() or not content_dir.is_dir():
        return None
    return Forked(lambda: scan(content_dir, content_root(cache_dir, content_dir)))

"""The entry files' scan (petgen/build/files.py): what it reads, what it keeps, and the build taking it from a child."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import petgen.build.files
import petgen.content.kb
from petgen.build.files import (
    Scanned,
    content_root,
    dumps_state,
    entry_key,
    load_stamps,
    loads_state,
    prescan,
    scan,
)
from petgen.build.forked import Forked
from petgen.build.pipeline import build
from petgen.cli.main import cli
from petgen.content.synthetic import write_corpus
from tests.conftest import BASE_URL, REPO
from tests.petgen.test_incremental import tree

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _aged(content: Path) -> None:
    """Every entry file changed an hour ago (a stamp is kept only for a file not changed within RACY_NS)."""
    old = time.time_ns() - 3600 * 10**9
    for path in (content / "names").glob("*.md"):
        os.utime(path, ns=(old, old))


def test_a_scan_reads_only_the_files_whose_stamp_changed(content: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(petgen.build.files, "RACY_NS", 0)  # the change below is stamped at once
    _aged(content)
    cache = tmp_path / "cache"
    root = content_root(cache, content)
    names = sorted(p.name for p in (content / "names").glob("*.md"))
    keys = [entry_key(f"names/{n}", (content / "names" / n).read_bytes()) for n in names]
    first = scan(content, root)  # nothing known: every file is left to the load to read
    assert first.fresh and first.read == {} and first.keys == [] and sorted(first.stamps) == names
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=cache)  # reads them, saves their stamps and keys
    assert load_stamps(root) == {f"names/{n}": (load_stamps(root)[f"names/{n}"][0], k) for n, k in zip(names, keys)}

    again = scan(content, root)
    assert not again.fresh and again.keys == keys and again.read == {}  # nothing read: every stamp as recorded
    edited = content / "names" / names[1]
    edited.write_bytes(edited.read_bytes() + b"\n")
    (content / "names" / "broken.md").mkdir()  # a directory named *.md: cannot be read
    third = scan(content, root)
    assert sorted(third.read) == [names[1]] and third.before == {names[1]: keys[1]}
    assert third.failed == {"broken.md": "Is a directory"} and third.keys[third.names.index("broken.md")] is None
    assert third.keys[third.names.index(names[1])] == entry_key(f"names/{names[1]}", edited.read_bytes())


def test_a_fresh_scan_leaves_the_reading_and_the_stamps_to_the_load(content: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The first build with a cache (no stamps yet, the cache's directory not made yet) reads every file itself, as
    a build without a cache does, and saves the stamps the scan took: the next build reads none of the files."""
    monkeypatch.setattr(petgen.build.files, "RACY_NS", 0)
    _aged(content)
    root = content_root(tmp_path / "cache", content)
    found = scan(content, root)
    assert found.fresh and found.read == {} and not root.exists()
    read: list[str] = []
    real = petgen.content.kb.read_file
    monkeypatch.setattr(petgen.content.kb, "read_file",
                        lambda path: (Path(path).parent.name == "names" and read.append(str(path))) or real(path))
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "cache", scanning=None)
    assert sorted(Path(p).name for p in read) == found.names  # every file read by the load
    assert sorted(load_stamps(root)) == [f"names/{n}" for n in found.names]
    read.clear()
    again = scan(content, root)
    build(content, tmp_path / "e", base_url=BASE_URL, cache_dir=tmp_path / "cache")
    assert not again.fresh and again.read == {} and read == []  # nothing read by either
    assert tree(tmp_path / "e") == tree(tmp_path / "d")


def test_the_build_takes_the_scan_begun_in_a_child(content: Path, tmp_path: Path) -> None:
    """A build given the scan of a child (`prescan`, as `petgen build` begins it) writes the same tree as one that
    scans itself, after an edit too; a scan that failed in its child is made again by the build."""
    cache = tmp_path / "cache"
    build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=cache)
    scanning = prescan(content, cache)
    assert isinstance(scanning, Forked)
    path = next((content / "names").glob("*.md"))
    build(content, tmp_path / "b", base_url=BASE_URL, cache_dir=cache, scanning=scanning)
    assert scanning.done()
    with pytest.raises(Exception, match="read already"):
        scanning.result()  # the build took it
    assert tree(tmp_path / "b") == tree(tmp_path / "a")

    path.write_text(path.read_text(encoding="utf-8").replace("meaning: ", "meaning: Neu, ", 1), encoding="utf-8")
    failed: Forked[Scanned] = Forked(lambda: os._exit(3))  # ends without a result
    result = build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=cache, scanning=failed)
    assert any("meaning changed" in w.message for w in result.kb.warnings)  # the edit was seen
    build(content, tmp_path / "clean", base_url=BASE_URL)
    assert tree(tmp_path / "a") == tree(tmp_path / "clean")


def test_no_scan_is_begun_without_a_cache(content: Path) -> None:
    assert prescan(content, None) is None
    assert prescan(content / "missing", Path("cache")) is None


def test_petgen_build_stops_a_scan_it_did_not_take(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`petgen build` begins the scan before it imports the build; when it fails before the load (a bad
    PETGEN_NETLIFY_SIGNING_SECRET), it stops the child, which would otherwise wait for ever to send a result larger
    than a pipe holds (in a process that goes on, as one calling the command in-process)."""
    content = write_corpus(tmp_path / "content", 60, taxonomy_from=REPO / "content")  # 120 KB of files to read
    begun: list[Forked[Scanned]] = []

    def recorded(*args: object) -> Forked[Scanned] | None:
        scanning = prescan(*args)  # type: ignore[arg-type]
        begun.append(scanning)  # type: ignore[arg-type]
        return scanning

    monkeypatch.setattr(petgen.build.files, "prescan", recorded)
    monkeypatch.setenv("PETGEN_NETLIFY_SIGNING_SECRET", "short")
    result = CliRunner().invoke(cli, ["build", "--content", str(content), "--out", str(tmp_path / "d"), "--cache-dir",
                                      str(tmp_path / "c"), "--runtime-origin", "https://runtime.example"])
    assert result.exit_code != 0 and "SIGNING_SECRET" in result.output
    (scanning,) = begun
    with pytest.raises(ChildProcessError):
        os.waitpid(scanning.pid, os.WNOHANG)  # ended and reaped


def test_a_state_loads_with_its_arrays_on_the_bytes_read() -> None:
    """`dumps_state`/`loads_state`: the same objects back, the arrays (any dtype, empty or not) made on the bytes
    given, aligned and not copied; anything else than such a file is refused."""
    state = {"keys": ["a", "b"], "hashes": np.arange(1000, dtype=np.int64) * 7, "empty": np.zeros(0, dtype=np.int64),
             "weights": np.linspace(0, 1, 33, dtype=np.float32), "nested": [(3, np.array([1, 2], dtype=np.uint8))]}
    data = dumps_state(state)
    back = loads_state(data)
    assert back.keys() == state.keys() and back["keys"] == ["a", "b"]
    for name in ("hashes", "empty", "weights"):
        assert back[name].dtype == state[name].dtype and back[name].tolist() == state[name].tolist()
    assert back["nested"][0][0] == 3 and back["nested"][0][1].tolist() == [1, 2]
    start = np.frombuffer(data, dtype=np.uint8).ctypes.data
    assert start <= back["hashes"].ctypes.data < start + len(data)  # a view of `data`
    assert back["hashes"].ctypes.data % 8 == 0 and not back["hashes"].flags.writeable
    with pytest.raises(ValueError):
        loads_state(pickle.dumps(state))  # an older state file: not this format
    with pytest.raises(ValueError):
        loads_state(data[:len(data) // 2])

"""Units of a build (`DistWriter.unit`, `units_of`): emitted, or taken over from the last build's tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from petgen.build.dist import TEXT, DistWriter
from petgen.build.incremental import TreeWriter


def _emit(writer: DistWriter, name: str, text: str) -> None:
    writer.add_file(f"/{name}", f"{name}.txt", text.encode(), TEXT)


def _last_build(tmp_path: Path) -> tuple[DistWriter, list[str]]:
    """A fresh tree with five units, one file each, and their names in the order written."""
    names = ["a", "b", "c", "d", "e"]
    (tmp_path / "live").mkdir()
    last = DistWriter(tmp_path / "live", context="ctx")
    last.units_of([(name, f"key-{name}", lambda name=name: _emit(last, name, f"old {name}")) for name in names])
    return last, names


def _edit(tmp_path: Path, last: DistWriter) -> TreeWriter:
    """A writer into a clone of `last`'s tree (its files present), taking units over from it."""
    root = tmp_path / "clone"
    root.mkdir()
    for rel in last.written:
        (root / rel).write_bytes((last.root / rel).read_bytes())
    return TreeWriter(root, present=dict(last.written), source=last.root, context="ctx", earlier=dict(last.units))


def test_units_taken_over_one_after_another_are_taken_over_at_once_in_order(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    last, names = _last_build(tmp_path)
    assert last.reused == 0 and list(last.units) == names
    writer = _edit(tmp_path, last)
    taken: list[list[str]] = []
    reuse_all = writer.reuse_all
    monkeypatch.setattr(writer, "reuse_all", lambda groups, files=None: (
        taken.append([route for routes in groups for route in routes]), reuse_all(groups, files)))
    emitted: list[str] = []

    def unit(name: str) -> tuple[str, str, object]:
        key = "changed" if name == "c" else f"key-{name}"
        return name, key, lambda: (emitted.append(name), _emit(writer, name, f"new {name}"))

    writer.units_of(map(unit, names))
    assert emitted == ["c"] and taken == [["/a", "/b"], ["/d", "/e"]]
    assert list(writer.routes) == list(last.routes) and list(writer.units) == names
    assert list(writer.written) == list(last.written) and writer.reused == 4
    assert writer.units["c"][0] == "ctx:changed" and writer.units["d"] == last.units["d"]
    assert (writer.root / "c.txt").read_text() == "new c" and (writer.root / "d.txt").read_text() == "old d"


@pytest.mark.parametrize("twice", ["a", "c"])  # a unit taken over (and not yet handed on), one emitted
def test_a_unit_named_twice_is_an_error(tmp_path: Path, twice: str) -> None:
    last, names = _last_build(tmp_path)
    writer = _edit(tmp_path, last)
    each = [(name, "changed" if name == "c" else f"key-{name}", lambda name=name: _emit(writer, name, "x"))
            for name in [*names[:3], twice]]
    with pytest.raises(ValueError, match=f"unit {twice} emitted twice"):
        writer.units_of(each)

"""The last build's lists, patched where entry files changed (petgen/emit/listindex.py)."""

from __future__ import annotations

from pathlib import Path

from petgen.emit.listindex import PATCH_LIMIT, ListIndex

FILES = ["a1", "b1", "c1", "d1", "e1"]
LISTS = {"mood:frech": [0, 2, 4], "mood:zart": [1, 3], "a-z:a": [0, 1]}
PAGES = {"moods/frech/": "k-frech", "moods/zart/": "k-zart", "moods/zart/2/": "k-zart-2", "a-z/a/": "k-a"}


def saved(path: Path, files: list[str] = FILES, context: str = "ctx") -> None:
    """An index as a full build leaves it: every list recorded, every page keyed."""
    index = ListIndex(path, context, files)
    assert not index.patched
    for name, positions in LISTS.items():
        index.record(name, positions)
    for rel, key in PAGES.items():
        index.key(rel, key)
    index.save()


def test_an_entry_that_changed_moves_between_lists_and_only_its_pages_are_keyed_again(tmp_path: Path) -> None:
    path = tmp_path / "lists.index"
    saved(path)
    index = ListIndex(path, "ctx", ["a1", "b1", "c2", "d1", "e1"])  # the entry at position 2 changed
    assert index.patched and index.changed == [2]
    members = index.patch(lambda i: {"mood:zart", "a-z:c"})  # it leaves frech, joins zart and a new letter
    assert members == {"mood:frech": [0, 4], "mood:zart": [1, 2, 3], "a-z:a": [0, 1], "a-z:c": [2]}
    assert index.touched == {"mood:frech", "mood:zart", "a-z:c"}
    assert index.unchanged("moods/frech/", "mood:frech", 0, 48) is None  # its members changed: keyed again
    assert index.unchanged("a-z/a/", "a-z:a", 0, 200) == "k-a"  # the same members: the last build's key


def test_a_page_keeps_its_key_unless_it_shows_a_changed_entry(tmp_path: Path) -> None:
    path = tmp_path / "lists.index"
    saved(path)
    index = ListIndex(path, "ctx", ["a1", "b1", "c1", "d2", "e1"])  # position 3: in zart, at its index 1
    index.patch(lambda i: {"mood:zart"})  # in the same lists as before (its card may differ)
    assert index.touched == set()
    assert index.unchanged("moods/zart/", "mood:zart", 0, 1) == "k-zart"  # shows zart's first member only
    assert index.unchanged("moods/zart/2/", "mood:zart", 1, 2) is None  # shows the changed entry
    assert index.unchanged("moods/frech/", "mood:frech", 0, 48) == "k-frech"
    assert index.unchanged("moods/neu/", "mood:neu", 0, 48) is None  # no key of the last build


def test_a_list_the_index_does_not_keep_is_checked_against_the_positions_given(tmp_path: Path) -> None:
    """The API's list of every entry is no list of the index: its pages keep their keys by the positions they show."""
    path = tmp_path / "lists.index"
    saved(path)
    index = ListIndex(path, "ctx", FILES)
    index.patch(lambda i: ())
    index.key("all/", "k-all")
    index.key("all/2/", "k-all-2")
    index.save()
    index = ListIndex(path, "ctx", ["a1", "b1", "c1", "d2", "e1"])  # position 3 changed
    index.patch(lambda i: {"mood:zart"})
    every = range(len(FILES))
    assert index.unchanged("all/", "all", 0, 3, every) == "k-all"
    assert index.unchanged("all/2/", "all", 3, 6, every) is None  # shows the changed entry


def test_the_lists_are_grouped_again_when_the_index_does_not_fit(tmp_path: Path) -> None:
    path = tmp_path / "lists.index"
    saved(path)
    assert not ListIndex(path, "other", FILES).patched  # another site, taxonomy, template or code
    assert not ListIndex(path, "ctx", [*FILES, "f1"]).patched  # an entry added: positions shift
    assert not ListIndex(tmp_path / "missing.index", "ctx", FILES).patched
    many = [f"x{i}" for i in range(PATCH_LIMIT + 1)]
    saved(path, many)
    assert not ListIndex(path, "ctx", [f"y{i}" for i in range(PATCH_LIMIT + 1)]).patched  # too many changed
    path.write_bytes(b"not marshal")
    assert not ListIndex(path, "ctx", FILES).patched


def test_an_unchanged_build_does_not_write_the_index_again(tmp_path: Path) -> None:
    path = tmp_path / "lists.index"
    saved(path)
    before = path.stat().st_mtime_ns, path.stat().st_ino
    index = ListIndex(path, "ctx", FILES)
    index.patch(lambda i: ())
    for rel, key in PAGES.items():
        index.key(rel, key)
    index.save()
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == before

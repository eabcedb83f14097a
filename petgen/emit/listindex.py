"""The lists behind the list pages as the last build made them, kept in the build cache: a rebuild after a few edits
patches them, and knows which list pages it need not look at again, instead of grouping every entry and keying every
page. The site keeps one (petgen/emit/browse.py), the JSON API another, of its list filters (petgen/emit/api.py).

A list (a category, mood or facet value, a letter of the A–Z index, a filter of the API) is the positions of its
entries in list order. The index keeps, with the context it was made in (`DistWriter.context`: site, taxonomy,
templates, code), each entry's file key by position, each list's positions and each list page's unit key
(`DistWriter.unit`). A build of as many entries in that context finds the positions whose file key differs (the same
entry file at a position is the same entry, with the same lists and card); only those entries are placed in the
lists again, and only the pages that show one of them, or of a list whose members changed, are keyed again: the
others have the keys they had, so the writer takes them over from the last build's tree (or renders them, if that
tree holds another build). More changed positions than `PATCH_LIMIT` (entries added or removed shift all after
them), or no index of this context: every list is grouped and every page keyed, and the index saved for the next
build.
"""

from __future__ import annotations

import marshal
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, count
from operator import ne
from pathlib import Path
from typing import Any

from petgen.build.files import read_file, write_atomic

INDEX_VERSION = 1
PATCH_LIMIT = 200  # changed positions beyond which the lists are grouped again


class ListIndex:
    """The lists of one build, patched from the last build's where few entries changed (`patched`)."""

    def __init__(self, path: Path | None, context: str, files: list[str]) -> None:
        self.path, self.context, self.files = path, context, files
        self.members: dict[Any, list[int]] = {}  # this build's lists (filled by `patch` or `record`)
        self.keys: dict[str, str] = {}  # this build's page keys (`key`)
        self.kept: dict[str, str] = {}  # the last build's page keys that still hold
        self.changed: list[int] | None = None  # positions whose entry file differs from the last build's
        self.touched: set[Any] = set()  # lists whose members changed
        self._before: dict[Any, list[int]] = {}
        if path is not None and context:
            self._load(path)

    def _load(self, path: Path) -> None:
        try:
            found = marshal.loads(read_file(path))
            if found["version"] != INDEX_VERSION or found["context"] != self.context:
                return
            before, members, keys = found["files"], found["members"], found["keys"]
        except Exception:  # noqa: BLE001 - missing, damaged or of another Python: group every entry
            return
        if len(before) != len(self.files):
            return
        files = self.files
        if all(files):  # compared without a Python step per entry
            changed = list(compress(count(), map(ne, before, files)))
        else:
            changed = [i for i, (old, new) in enumerate(zip(before, files)) if old != new or not new]
        if len(changed) <= PATCH_LIMIT:
            self.changed, self._before, self.kept = changed, members, keys

    @property
    def patched(self) -> bool:
        """Whether this build's lists are the last build's, patched (else the caller groups them: `record`)."""
        return self.changed is not None

    def patch(self, member_of: Callable[[int], Iterable[Any]]) -> dict[Any, list[int]]:
        """The lists patched at the changed positions: `member_of(position)` names the lists the entry there is in
        (a name: a string, or a tuple of them)."""
        assert self.changed is not None
        members = self.members = dict(self._before)
        now = {i: set(member_of(i)) for i in self.changed}
        for name in {name for names in now.values() for name in names} - members.keys():
            members[name] = []  # a list that had no members (a letter no title began with, say)
        for name, positions in members.items():
            copied = False
            for i in self.changed:
                at = bisect_left(positions, i)
                was = at < len(positions) and positions[at] == i
                if was != (name in now[i]):
                    if not copied:
                        positions = members[name] = list(positions)
                        copied = True
                    if was:
                        del positions[at]
                    else:
                        insort(positions, i)
            if copied:
                self.touched.add(name)
        return members

    def record(self, name: Any, positions: list[int]) -> None:
        """A list as grouped in full."""
        self.members[name] = positions

    def unchanged(self, rel: str, name: Any, start: int, stop: int, positions: Sequence[int] | None = None
                  ) -> str | None:
        """The last build's key of page `rel` (members `start` to `stop` of list `name`), if it still holds: its
        list has the same members, none of them at a changed position within the page. `positions`: the list's
        members, if at hand (the API's list of every entry is none of the index's lists: an edit leaves it as it is)."""
        key = self.kept.get(rel)
        if key is None or self.changed is None or name in self.touched:
            return None
        if positions is None:
            positions = self.members.get(name, ())
        for i in self.changed:
            at = bisect_left(positions, i)
            if at < len(positions) and positions[at] == i and start <= at < stop:
                return None
        return key

    def key(self, rel: str, key: str) -> str:
        """Note page `rel`'s key for the next build."""
        self.keys[rel] = key
        return key

    def save(self) -> None:
        """Keep this build's lists and page keys for the next build (only when some changed)."""
        if self.path is None or not self.context or (self.changed == [] and self.keys == self.kept):
            return
        write_atomic(self.path, marshal.dumps({
            "version": INDEX_VERSION, "context": self.context, "files": self.files, "members": self.members,
            "keys": self.keys}))

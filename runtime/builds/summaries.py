"""The name summaries of a build (`_data/index.json` `items`) as the runtime keeps them.

The build writes them for the runtime into `_data/summaries.pack` (petgen/build/distpack.py): each
summary's JSON text in one buffer, decoded when a page or a tool needs it, the slugs and titles as
string tables, and for every list filter value (`category` `tiere`, `region` `*`, …) the documents
that have it, as a sorted array. The runtime maps the file and reads it in place (a load does no
work per entry; every worker shares the pages); a list query intersects those arrays and decodes
only the page it returns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
import orjson

from petgen.build.distpack import FIELD, documents_by_value
from petgen.search.packfile import Pack
from runtime.builds.routes import Strings, typed

Summary = dict[str, Any]
Key = tuple[str, str]  # a list filter and its value


class Summaries(Sequence[Summary]):
    """The summaries in list order, as a read-only sequence of dicts."""

    def __init__(self, pack: Pack) -> None:
        self.buffer = pack.buffer
        self.base = pack.offset("items")
        self.ends = typed(pack, "ends", "Q")
        self.slug_list = Strings(pack, "slugs")
        self.title_list = Strings(pack, "titles")
        # how many other entries name each as related (a build before this field: none)
        self.cited = pack["cited"] if "cited" in pack.places else np.zeros(len(self.ends), dtype=np.uint32)
        docs = pack["docs"]
        self.docs: dict[Key, np.ndarray] = {(name, value): docs[start:start + count]
                                            for name, value, start, count in pack.meta["filters"]}

    def __len__(self) -> int:
        return len(self.ends)

    def raw(self, doc: int) -> bytes:
        return self.buffer[self.base + (self.ends[doc - 1] if doc else 0):self.base + self.ends[doc]]

    @overload
    def __getitem__(self, doc: int) -> Summary: ...

    @overload
    def __getitem__(self, doc: slice) -> list[Summary]: ...

    def __getitem__(self, doc: int | slice) -> Summary | list[Summary]:
        if isinstance(doc, slice):
            return [self[d] for d in range(*doc.indices(len(self)))]
        if not -len(self) <= doc < len(self):
            raise IndexError(doc)
        return orjson.loads(self.raw(doc % len(self)))

    def __iter__(self) -> Iterator[Summary]:
        for doc in range(len(self)):
            yield orjson.loads(self.raw(doc))

    def slugs(self) -> Iterator[str]:
        return (self.slug_list[d] for d in range(len(self.slug_list)))

    def titles(self) -> Iterator[str]:
        return (self.title_list[d] for d in range(len(self.title_list)))

    def with_value(self, name: str, value: str) -> np.ndarray:
        """The documents (ascending) a filter value selects; values outside the vocabulary are looked up
        item by item."""
        found = self.docs.get((name, value))
        return found if found is not None else np.array(self._scan(FIELD.get(name, name), value), dtype=np.uint32)

    def _scan(self, field: str, wanted: str) -> list[int]:
        return documents_by_value(list(self), field).get(wanted, [])

    def select(self, filters: dict[str, str]) -> Selection:
        """The summaries that pass every filter, in list order (as `petgen.contract.resources.filter_summaries`)."""
        docs: np.ndarray | None = None
        for name, value in filters.items():
            found = self.with_value(name, value)
            docs = found if docs is None else np.intersect1d(docs, found, assume_unique=True)
        return Selection(self, np.arange(len(self), dtype=np.uint32) if docs is None else docs)


class Selection(Sequence[Summary]):
    """Some summaries, by document number: what `petgen.contract.resources.name_list` pages through."""

    def __init__(self, summaries: Summaries, docs: np.ndarray) -> None:
        self.summaries, self.docs = summaries, docs

    def __len__(self) -> int:
        return len(self.docs)

    @overload
    def __getitem__(self, i: int) -> Summary: ...

    @overload
    def __getitem__(self, i: slice) -> list[Summary]: ...

    def __getitem__(self, i: int | slice) -> Summary | list[Summary]:
        if isinstance(i, slice):
            return [self.summaries[int(d)] for d in self.docs[i]]
        return self.summaries[int(self.docs[i])]

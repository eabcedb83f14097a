"""The name summaries of a build (`_data/index.json` `items`) as the runtime keeps them.

As a list of dicts they took about 2 KB per entry (100 MB at 50,000); here each is its JSON text
in one shared buffer (about 400 bytes), decoded when a page or a tool needs it, plus for every list
filter value (`category` `tiere`, `region` `*`, …) the documents that have it, as a sorted array.
A list query intersects those arrays and decodes only the page it returns.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
import orjson

from petgen.content.model import EVERY_REGION, FILTER_FACETS, SUPRAREGIONAL
from petgen.contract.resources import LIST_FILTERS, Aliases
from runtime.builds.routes import Strings

Summary = dict[str, Any]
Key = tuple[str, str]  # a list filter and its value
FIELD = {"category": "categories", "mood": "moods"}  # the summary field of a list filter, where named otherwise


def documents_by_value(items: list[Summary], field: str) -> dict[str, list[int]]:
    """Each value of a field (a slug or a list of slugs) -> the documents that have it, ascending, and
    EVERY_REGION -> those with any value but SUPRAREGIONAL (as `facet_matches` has it)."""
    found: dict[str, list[int]] = {}
    every: list[int] = []
    for doc, item in enumerate(items):
        value = item.get(field)
        if value is None:
            continue
        for v in (value,) if isinstance(value, str) else value:
            docs = found.get(v)
            if docs is None:
                found[v] = [doc]
            elif docs[-1] != doc:  # a value listed twice selects the item once
                docs.append(doc)
            if v != SUPRAREGIONAL and (not every or every[-1] != doc):
                every.append(doc)
    found.setdefault(EVERY_REGION, every)
    return found


class Summaries(Sequence[Summary]):
    """The summaries in list order, as a read-only sequence of dicts."""

    def __init__(self, items: list[Summary], vocabulary: dict[str, list[str]], aliases: Aliases) -> None:
        """`vocabulary`: every list filter's values (the categories, the moods, each facet's values)."""
        encoded = list(map(orjson.dumps, items))
        self.buffer = b"".join(encoded)
        self.ends = array("Q", np.cumsum(np.fromiter(map(len, encoded), dtype=np.uint64, count=len(encoded)),
                                         dtype=np.uint64).tobytes())
        del encoded
        self.slug_list = Strings([item["slug"] for item in items])
        self.title_list = Strings([item["title"] for item in items])
        by_field = {field: documents_by_value(items, field) for field in ("categories", "moods", *FILTER_FACETS)}
        self.docs: dict[Key, np.ndarray] = {}
        for name in LIST_FILTERS:
            for value in vocabulary.get(name, []):
                field, wanted = FIELD.get(name, name), value
                if name == "category" and value in aliases:  # holds the documents with its facet value
                    field, wanted = aliases[value]
                found = by_field[field].get(wanted, []) if field in by_field else self._scan(field, wanted)
                self.docs[name, value] = np.array(found, dtype=np.uint32)

    def __len__(self) -> int:
        return len(self.ends)

    def raw(self, doc: int) -> bytes:
        return self.buffer[self.ends[doc - 1] if doc else 0:self.ends[doc]]

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

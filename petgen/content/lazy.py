"""Entries loaded on demand from the build cache: what a rebuild after one edit reads of 10,000 entries.

A rebuild after one edit reads a few fields of every entry (its slug, title, related entries, review date) and the
others of a few: the changed entries, and those whose cards, checks or search terms the change reaches. The build
cache keeps, beside each chunk of pickled entries, the `LIGHT_FIELDS` of its entries and, field by field, their
`COLUMN_FIELDS` (petgen/build/cache.py, `Lazy`); a `LazyEntry` is made from the light form, reads a column field
from its chunk's column of that field when first read, and on the first read of any other field it unpickles its
chunk and becomes the whole entry. Code that reads an entry cannot tell the difference: a field is always there,
only sooner or later."""

from __future__ import annotations

from dataclasses import MISSING
from dataclasses import fields as dataclass_fields
from typing import Any, Protocol

from petgen.content.model import Entry

# The fields a rebuild after one edit reads of every entry (its slug, file and title, the newest review, the citations
# and keys of related entries, the counts of the facets without lists): each entry's dict of them is its light form.
LIGHT_FIELDS = ("slug", "path", "title", "lastReviewed", "related", "originCertainty")
# The fields the build reads of every entry only in some builds (a build into a new directory, an edit that changes
# a taxonomy), of a few entries in the others (the cards, checks and search terms of the entries an edit affects):
# kept field by field, one column per field for each chunk (a file beside the light one), so that reading a field of
# a few entries loads that field's column only. Before, the light form held all but the search terms: unpickling it
# was a third of loading 10,000 entries after an edit, which read six of its fields of every entry.
COLUMN_FIELDS = ("meaning", "variants", "categories", "moods", "keywords", "datePublished", "relationship", "gender",
                 "region", "genderNote", "language", "sentences", "name_keys", "terms")
_COLUMNS = frozenset(COLUMN_FIELDS)
_SOURCE = "_source"  # on a `LazyEntry` until every field is loaded: the cache it comes from and its key there


class Source(Protocol):
    """Where a `LazyEntry` loads the rest of its fields from (the build cache, `EntryCache`): the whole entry of a key,
    and one of its `COLUMN_FIELDS`."""

    def entry(self, key: str) -> Entry: ...

    def column(self, key: str, name: str) -> Any: ...


class LazyEntry(Entry):
    """An entry of which only `LIGHT_FIELDS` are loaded; reading another field loads the rest (`_complete`)."""

    def __getattr__(self, name: str) -> Any:  # only called for an attribute the instance does not have
        fields = self.__dict__
        found = fields.get(_SOURCE)
        if name.startswith("__") or found is None:
            raise AttributeError(name)
        if name in _COLUMNS:
            value = fields[name] = found[0].column(found[1], name)
            return value
        self._complete()
        return object.__getattribute__(self, name)

    def _complete(self) -> None:
        found = self.__dict__.pop(_SOURCE, None)
        if found is not None:
            source, key = found
            fields = self.__dict__
            for name, value in vars(source.entry(key)).items():
                fields.setdefault(name, value)  # what was set here since (the path as this build spells it) stays

    def whole(self) -> Entry:
        """The entry as a plain `Entry` (every field loaded)."""
        self._complete()
        entry = Entry.__new__(Entry)
        entry.__dict__.update(self.__dict__)
        return entry

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyEntry):
            other = other.whole()
        return self.whole() == other if isinstance(other, Entry) else NotImplemented

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickled as the plain `Entry` it stands for."""
        return _plain, (self.whole().__dict__,)


class _Loaded:
    """A field of `Entry` with a default that `LIGHT_FIELDS` leaves out, on a `LazyEntry` (a descriptor: the default,
    a class attribute, would keep `__getattr__` from being called for it, and the default be read instead of the
    entry's value): loaded when first read, from its column if it is one of `COLUMN_FIELDS`, else with the whole
    entry."""

    def __init__(self, name: str) -> None:
        self.name, self.column = name, name in _COLUMNS

    def __get__(self, entry: LazyEntry | None, owner: type | None = None) -> Any:
        if entry is None:
            return getattr(Entry, self.name)
        fields = entry.__dict__  # without the field: else it would be read from there, not through this
        found = fields.get(_SOURCE)
        if found is not None:
            if self.column:
                fields[self.name] = found[0].column(found[1], self.name)
            else:
                entry._complete()
        return fields[self.name] if self.name in fields else getattr(Entry, self.name)


for _name in sorted({f.name for f in dataclass_fields(Entry) if f.default is not MISSING} - set(LIGHT_FIELDS)):
    setattr(LazyEntry, _name, _Loaded(_name))


def _plain(fields: dict[str, Any]) -> Entry:
    entry = Entry.__new__(Entry)
    entry.__dict__.update(fields)
    return entry


class LightEntries:
    """The `Lazy` of the build cache for entries: their light form is the dict of their `LIGHT_FIELDS`."""

    def light(self, entry: Entry) -> dict[str, Any]:
        fields = vars(entry)
        return {name: fields[name] for name in LIGHT_FIELDS}

    def columns(self, entries: list[Entry | None]) -> dict[str, list[Any]]:
        every = [vars(entry) if entry is not None else {} for entry in entries]
        return {name: [fields.get(name) for fields in every] for name in COLUMN_FIELDS}

    def entry(self, light: dict[str, Any], key: str, source: Source) -> LazyEntry:
        entry = LazyEntry.__new__(LazyEntry)  # one tuple for where the rest is (two `partial`s were a tenth of a load)
        entry.__dict__ = {**light, _SOURCE: (source, key)}
        return entry

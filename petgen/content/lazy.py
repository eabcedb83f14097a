"""Entries loaded on demand from the build cache: what a rebuild after one edit reads of 10,000 entries.

Every stage reads a few fields of every entry (its slug, title, meaning, taxonomy, related entries, search
terms, the hashes the cross-entry checks compare); only the changed entries' pages and the texts of a few
need the rest (pronunciation, origin, usage, examples, FAQ, line numbers). The build cache keeps, beside each
chunk of pickled entries, the `LIGHT_FIELDS` of its entries (petgen/build/cache.py, `Lazy`); a `LazyEntry` is
made from those, and on the first read of any other field it unpickles its chunk and becomes the whole entry.
Code that reads an entry cannot tell the difference: a field is always there, only sooner or later.
"""

from __future__ import annotations

from dataclasses import MISSING
from dataclasses import fields as dataclass_fields
from typing import Any, Protocol

from petgen.content.model import Entry

# The fields the build reads of every entry (validation across entries, keys, lists, cards, the sitemap); the
# others are loaded with the entry's chunk when first read. Not among them, though every entry has them: its phrase
# hashes (almost half of what the light forms would hold), which a build reads of the changed entry files only: the
# phrase count is updated from the last one, which keeps them (petgen/content/phrases.py).
LIGHT_FIELDS = ("slug", "path", "title", "meaning", "variants", "categories", "moods", "keywords", "related",
                "datePublished", "lastReviewed", "relationship", "gender", "region", "originCertainty", "genderNote",
                "language", "sentences", "name_keys")
# Read of every entry only where the whole search index is made (a build into a new directory), of the changed ones
# where it is updated: kept apart (a file beside the light one), which a rebuild after one edit then never reads (they
# were two fifths of the time it took to load the light forms).
LATER_FIELDS = ("terms",)
_SOURCE = "_source"  # on a `LazyEntry` until every field is loaded: the cache it comes from and its key there


class Source(Protocol):
    """Where a `LazyEntry` loads the rest of its fields from (the build cache, `EntryCache`): the whole entry of a key,
    and the `LATER_FIELDS` of it."""

    def entry(self, key: str) -> Entry: ...

    def later(self, key: str) -> dict[str, Any]: ...


class LazyEntry(Entry):
    """An entry of which only `LIGHT_FIELDS` are loaded; reading another field loads the rest (`_complete`)."""

    def __getattr__(self, name: str) -> Any:  # only called for an attribute the instance does not have
        if name.startswith("__") or _SOURCE not in self.__dict__:
            raise AttributeError(name)
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
    entry's value): loaded when first read, with the entry's other `LATER_FIELDS` if it is one, else with the whole
    entry."""

    def __init__(self, name: str) -> None:
        self.name, self.later = name, name in LATER_FIELDS

    def __get__(self, entry: LazyEntry | None, owner: type | None = None) -> Any:
        if entry is None:
            return getattr(Entry, self.name)
        fields = entry.__dict__  # without the field: else it would be read from there, not through this
        found = fields.get(_SOURCE)
        if found is not None:
            if self.later:
                fields.update(found[0].later(found[1]))
            else:
                entry._complete()
        return fields[self.name] if self.name in fields else getattr(Entry, self.name)


for _name in sorted({*LATER_FIELDS, *(f.name for f in dataclass_fields(Entry) if f.default is not MISSING)}
                    - set(LIGHT_FIELDS)):
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

    def later(self, entry: Entry) -> dict[str, Any]:
        fields = vars(entry)
        return {name: fields[name] for name in LATER_FIELDS}

    def entry(self, light: dict[str, Any], key: str, source: Source) -> LazyEntry:
        entry = LazyEntry.__new__(LazyEntry)  # one tuple for where the rest is (two `partial`s were a tenth of a load)
        entry.__dict__ = {**light, _SOURCE: (source, key)}
        return entry

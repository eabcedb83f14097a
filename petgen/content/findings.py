"""The checks across entries of one entry each (`validate`: vocabularies and links, variants, word families,
repeated sentences) updated from the last build's findings instead of made anew for every entry.

What these checks find in an entry depends on the entry, the rules (taxonomy, facets.yml, petgen's code: the
cache directory's path) and a few things of other entries: whether the slugs its `related` names exist (and,
where one does not, every slug, for the hint), the gender of the entries it names, which entry has a title
equal to one of its variants, and which entry has one of its sentences first. A build with a cache keeps, in
the cache (`Findings`), each entry file's findings by check and, for those dependencies, which entries name a
slug, have a variant or title, or have a sentence. A later build checks again only the entry files added since
(an edit is one removed and one added) and the unchanged entries a removed or added one can affect; the others'
findings are the kept ones. The result is the same as a full check's (tests/petgen/test_findings.py).

The state is saved again only when more than KEEP_STATE entry files changed since it was (each build updates the
same saved state, as petgen/content/phrases.py does), and a full check runs where there is none or much changed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, repeat
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest

from petgen.build.files import dumps_state, loads_state, read_file, write_atomic
from petgen.content.model import Entry
from petgen.content.problems import Problem, Problems

STATE = "checks.state"
VERSION = 1
KEEP_STATE = 32  # while no more entry files than this changed since the state was saved, it is not saved again
MOST_CHANGED = 0.1  # more changed entry files than this share (and than KEEP_STATE): check every entry
KINDS = 4  # vocabularies and links, variants, word families, sentences: the order in which `validate` reports them
Found = list[list[Problem]]  # one entry's problems, one list per kind


@dataclass
class Findings:
    """What the last full check found, for the next builds (`update`). Entries are named by their position in
    `keys`, the entry files' keys in the order they were checked; names by their `name_hash` (loaded fast as
    arrays: a hash shared by chance only makes an entry checked again that need not be)."""

    context: str  # the rules checked against (`validate`'s vocabularies and aliases)
    keys: list[str]
    slugs: list[str]
    found: dict[int, Found]  # the entries with problems
    unlinked: list[int]  # the entries whose `related` names a slug of no entry (the hint names the nearest)
    links: np.ndarray  # every slug an entry's `related` names ...
    linked: np.ndarray  # ... and that entry
    titles: np.ndarray  # each entry's title key (`name_keys`)
    variants: np.ndarray  # every variant key of an entry ...
    varied: np.ndarray  # ... and that entry
    hashes: np.ndarray  # every entry's sentence hashes (`Entry.sentences`), sorted ...
    owners: np.ndarray  # ... and the entry of each
    version: int = VERSION


@dataclass
class Rules:
    """The checks of one entry, from petgen/content/validate.py (which imports this module)."""

    context: str  # what they check against besides the entries (taxonomy, facets.yml): another starts anew
    vocabularies: Callable[[Entry, set[str]], list[Problem]]  # given every slug
    variants: Callable[[Entry, tuple[str, ...], Callable[[str], Entry | None], Problems], None]
    genders: Callable[[Entry, Callable[[str], Entry | None], Problems], None]
    sentences: Callable[[Entry, Callable[[int], Entry], Problems], None]
    names: Callable[[Entry], tuple[str, ...]]  # the title and variants folded (`name_keys`)
    hashes: Callable[[Entry], bytes]  # the sentences' hashes, packed


def checked(entries: list[Entry], keys: list[str] | None, root: Path | None, files: set[str] | None, rules: Rules,
            full: Callable[[], list[Problems]]) -> list[list[Problem]]:
    """What `full` finds (the checks of every entry, one Problems per kind), updated from the state kept in
    `root` where there is one and few entries changed; the state is kept for the next build. `keys`: each entry's
    file key (`petgen.build.files.entry_key`), `files`: the slug of every entry file (`validate`)."""
    if keys is None or root is None or len(keys) != len(entries) or len(set(keys)) != len(keys):
        return [problems.items for problems in full()]
    state = load(root, rules.context)
    updated = update(state, entries, keys, files, rules) if state is not None else None
    if updated is not None and not updated[1]:
        return updated[0]
    by_kind = updated[0] if updated is not None else [problems.items for problems in full()]
    save(root, made(entries, keys, by_kind, rules))
    return by_kind


def load(root: Path, context: str) -> Findings | None:
    with contextlib.suppress(Exception):  # missing or damaged: check every entry
        state = loads_state(read_file(root / STATE))
        if isinstance(state, Findings) and state.version == VERSION and state.context == context:
            return state
    return None


def save(root: Path, state: Findings) -> None:
    if root.is_dir():
        with contextlib.suppress(OSError):
            write_atomic(root / STATE, dumps_state(state))


def made(entries: list[Entry], keys: list[str], by_kind: list[list[Problem]], rules: Rules) -> Findings:
    """The state of a full check of `entries` (`by_kind`: what it found, one list per kind)."""
    at = {entry.path: i for i, entry in enumerate(entries)}
    found: dict[int, Found] = {}
    for kind, problems in enumerate(by_kind):
        for problem in problems:
            found.setdefault(at[problem.path], [[] for _ in range(KINDS)])[kind].append(problem)
    slugs = [entry.slug for entry in entries]
    known = set(slugs)
    related = [entry.related for entry in entries]
    unlinked = [i for i, names in enumerate(related) if not known.issuperset(names)]
    links, linked = _flat(related)
    names = [rules.names(entry) for entry in entries]
    variants, varied = _flat([key[1:] for key in names])
    hashes, owners = _sentence_hashes(entries, rules.hashes)
    order = np.argsort(hashes, kind="stable")
    return Findings(rules.context, list(keys), slugs, found, unlinked, links, linked,
                    name_hashes([key[0] for key in names]), variants, varied, hashes[order], owners[order])


def name_hashes(names: Iterable[str]) -> np.ndarray:
    """Slugs or name keys as stable 64-bit hashes."""
    return np.fromiter((xxh3_64_intdigest(name.encode()) for name in names), dtype=np.uint64)


def _flat(lists: list[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """The names of every list hashed, one after another, and the position of the list of each."""
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    return name_hashes(chain.from_iterable(lists)), np.repeat(np.arange(len(lists), dtype=np.int64), lengths)


def update(state: Findings, entries: list[Entry], keys: list[str], files: set[str] | None,
           rules: Rules) -> tuple[Found, bool] | None:
    """What a full check of `entries` finds, one list per kind, made from the state: the added entry files
    and the unchanged ones a change can affect checked again; whether the state is worth saving again made
    from these findings (`made`). None when too much changed or the entries are in another order, or when the
    entries' slugs are not those of the entry files (one failed to load) or not distinct: a full check says what
    the link checks make of that."""
    now = dict(zip(keys, range(len(keys))))
    current = np.fromiter(map(now.get, state.keys, repeat(-1)), dtype=np.int64, count=len(state.keys))
    removed = np.flatnonzero(current < 0).tolist()  # each entry of the state's position now (-1: removed)
    added = sorted(map(now.__getitem__, now.keys() - set(state.keys)))
    if len(added) + len(removed) > max(KEEP_STATE, MOST_CHANGED * len(keys)):
        return None
    if np.any(np.diff(current[current >= 0]) <= 0):
        return None  # the unchanged entries in another order: which of two comes first is another question
    slugs = set(state.slugs).difference(state.slugs[i] for i in removed).union(entries[j].slug for j in added)
    if len(slugs) != len(entries) or (files is not None and slugs != files):
        return None
    redo = set(added) | _affected(state, entries, added, removed, current, rules)
    lookups = _Lookups(state, entries, added, current, rules)
    by_kind: Found = [[] for _ in range(KINDS)]
    fresh: dict[int, Found] = {j: check_one(entries[j], rules, slugs, lookups) for j in sorted(redo)}
    for i, found in state.found.items():
        j = int(current[i])
        if j >= 0 and j not in redo:
            fresh[j] = found
    for j in sorted(fresh):
        for kind, problems in enumerate(fresh[j]):
            by_kind[kind] += problems
    return by_kind, len(added) + len(removed) > KEEP_STATE


def check_one(entry: Entry, rules: Rules, slugs: set[str], lookups: _Lookups) -> Found:
    """Every kind of check of one entry, with the other entries as `lookups` finds them."""
    found = [Problems() for _ in range(KINDS - 1)]
    rules.variants(entry, rules.names(entry), lookups.titled, found[0])
    rules.genders(entry, lookups.slugged, found[1])
    rules.sentences(entry, lambda value: lookups.first(value, entry), found[2])
    return [rules.vocabularies(entry, slugs), *(problems.items for problems in found)]


def _affected(state: Findings, entries: list[Entry], added: list[int], removed: list[int],
              current: np.ndarray, rules: Rules) -> set[int]:
    """The unchanged entries (their positions now) whose findings a removed or added entry can change."""
    gone, new = [state.slugs[i] for i in removed], [entries[j].slug for j in added]
    old = [state.linked[np.isin(state.links, name_hashes(gone + new))]]
    if set(gone) != set(new):
        old.append(np.array(state.unlinked, dtype=np.int64))  # the hints of broken links name the nearest slugs
    titles = np.concatenate([state.titles[removed], name_hashes(rules.names(entries[j])[0] for j in added)])
    old.append(state.varied[np.isin(state.variants, titles)])
    taken = state.hashes[np.isin(state.owners, np.array(removed, dtype=np.int64))]
    values = distinct([taken, *(np.frombuffer(rules.hashes(entries[j]), dtype="<i8") for j in added)])
    starts, ends = np.searchsorted(state.hashes, values), np.searchsorted(state.hashes, values, side="right")
    old += [state.owners[start:end] for start, end in zip(starts.tolist(), ends.tolist())]
    now = current[distinct(old)]
    return set(now[now >= 0].tolist())


class _Lookups:
    """The other entries as the checks see them: by title key, by slug, by sentence hash (the state's, with the
    removed entries left out and the added ones put in, at their positions now)."""

    def __init__(self, state: Findings, entries: list[Entry], added: list[int], current: np.ndarray,
                 rules: Rules) -> None:
        self.state, self.entries, self.current, self.rules = state, entries, current, rules
        self.titles: dict[str, list[int]] = {}
        self.slugs = {entries[j].slug: j for j in added}
        self.sentences: dict[int, list[int]] = {}
        for j in added:
            self.titles.setdefault(rules.names(entries[j])[0], []).append(j)
            for value in np.frombuffer(rules.hashes(entries[j]), dtype="<i8").tolist():
                self.sentences.setdefault(value, []).append(j)

    @cached_property
    def by_slug(self) -> dict[str, int]:
        return dict(zip(self.state.slugs, range(len(self.state.slugs))))

    def _now(self, positions: np.ndarray) -> list[int]:
        now = self.current[positions]
        return now[now >= 0].tolist()

    def titled(self, key: str) -> Entry | None:
        """The last entry with the title key (`check_variants`' `titles`)."""
        same = self._now(np.flatnonzero(self.state.titles == name_hashes([key])[0]))
        found = [j for j in same if self.rules.names(self.entries[j])[0] == key] + self.titles.get(key, [])
        return self.entries[max(found)] if found else None

    def slugged(self, slug: str) -> Entry | None:
        """The entry with the slug (`check_gender_families`' `by_slug`)."""
        j = self.slugs.get(slug)
        if j is None:
            i = self.by_slug.get(slug)
            j = int(self.current[i]) if i is not None else -1
        return self.entries[j] if j >= 0 else None

    def first(self, value: int, entry: Entry) -> Entry:
        """The first entry with the sentence hash (`check_repeated_sentences`' `first_owner`)."""
        hashes = self.state.hashes
        start, end = int(np.searchsorted(hashes, value)), int(np.searchsorted(hashes, value, side="right"))
        found = self._now(self.state.owners[start:end]) + self.sentences.get(value, [])
        return self.entries[min(found)] if len(found) > 1 else entry  # a sentence of one entry is its own


def distinct(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct values of some arrays, ascending (not `np.unique`: it imports numpy.ma, 80 ms, when first
    called)."""
    values = np.sort(np.concatenate(parts))
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if len(values) > 1 else values


def _sentence_hashes(entries: list[Entry], of: Callable[[Entry], bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Every entry's sentence hashes one after another, and the position of the entry of each."""
    blobs = [of(entry) for entry in entries]
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs)) // 8
    hashes = np.frombuffer(b"".join(blobs), dtype="<i8").astype(np.int64)
    return hashes, np.repeat(np.arange(len(entries), dtype=np.int64), lengths)

"""The knowledge base: loaded, validated content, in list order."""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, partial
from itertools import chain, islice
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from petgen.build.cache import EntryCache, EntryMemo, Packed, chunk_size
from petgen.build.files import Scanned, Stamp, content_root, entry_key, entry_names, read_file, save_stamps, scan
from petgen.build.forked import worker_pool
from petgen.content.bots import load_bots
from petgen.content.lazy import LightEntries
from petgen.content.lexicon import load_lexicon
from petgen.content.model import (
    EVERY_REGION,
    Category,
    Entry,
    Facets,
    Mood,
    Site,
    facet_matches,
    load_categories,
    load_facets,
    load_moods,
    load_site,
    parse_entry,
)
from petgen.content.phrases import repeated
from petgen.content.problems import ContentError, Problem, Problems
from petgen.content.text import collation_key
from petgen.content.validate import check_entry_alone, entry_words, sign_entries, validate
from petgen.search.index import document_terms

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from petgen.build.forked import Forked

Progress = Callable[[int], None]  # called with the number of entries just done
SETTINGS_FILES = ("site.yml", "categories.yml", "moods.yml", "facets.yml", "lexicon.yml", "bots.yml")
SETTINGS = "settings"  # the build cache's `EntryMemo` of what was loaded of them, by their bytes' hash

# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 600


@dataclass
class KnowledgeBase:
    site: Site
    categories: list[Category]
    moods: list[Mood]
    entries: list[Entry]  # alphabetical by title, German collation
    warnings: list[Problem]
    source_hash: str
    lexicon: dict
    bots: list
    facets: Facets = field(default_factory=lambda: Facets({}))
    packed: list[Packed] = field(default_factory=list, repr=False)  # see Loaded
    cache_root: Path | None = None
    keys: dict[str, str] = field(default_factory=dict, repr=False)  # slug -> key of its file (see Loaded)

    @cached_property
    def by_slug(self) -> dict[str, Entry]:
        return {e.slug: e for e in self.entries}

    @cached_property
    def _by_category(self) -> dict[str, list[Entry]]:
        grouped: dict[str, list[Entry]] = {c.slug: [] for c in self.categories}
        for entry in self.entries:
            for category in entry.categories:
                grouped.setdefault(category, []).append(entry)
        by_value: dict[str, dict[str, list[Entry]]] = {}  # facet -> value -> its entries: one pass per facet
        for alias in self.categories:
            if alias.facet is not None:
                name, wanted = alias.facet
                if wanted == EVERY_REGION:
                    grouped[alias.slug] = _matching(self.entries, alias.facet)
                    continue
                if name not in by_value:
                    by_value[name] = _by_value(self.entries, name)
                grouped[alias.slug] = by_value[name].get(wanted, [])
        return grouped

    @cached_property
    def aliases(self) -> dict[str, tuple[str, str]]:
        """Alias categories: slug -> the facet value they stand for."""
        return {c.slug: c.facet for c in self.categories if c.facet is not None}

    def in_category(self, slug: str) -> list[Entry]:
        """The category's entries, in list order (an alias category's: those with its facet value)."""
        return self._by_category.get(slug, [])

    def first_in_category(self, slug: str, count: int) -> list[Entry]:
        """`in_category(slug)[:count]`, found without grouping every entry if that was not done yet."""
        if "_by_category" in self.__dict__:
            return self.in_category(slug)[:count]
        category = next((c for c in self.categories if c.slug == slug), None)
        return list(islice(filter(category.has, self.entries), count)) if category is not None else []

    def facet_counts(self, known: dict[str, dict[str, int]] | None = None) -> dict[str, dict[str, int]]:
        """Entries per value of each facet, every value listed (0 included), in the vocabulary's order; `known`: those
        of some facets, counted otherwise already (`emit_api` has them from its lists), taken as they are."""
        counts: dict[str, dict[str, int]] = {}
        for name in self.facets.values:
            if known and name in known:
                counts[name] = known[name]
                continue
            per_value = counts[name] = dict.fromkeys(self.facets.slugs(name), 0)
            values = list(map(attrgetter(name), self.entries))
            found = Counter(chain.from_iterable(values) if values and isinstance(values[0], list) else values)
            for value, count in found.items():  # values outside the vocabulary after it, as first found
                per_value[value] = per_value.get(value, 0) + count
        return counts

    @cached_property
    def newest_review(self) -> str:
        return max(map(attrgetter("lastReviewed"), self.entries), default="1970-01-01")


def _by_value(entries: list[Entry], name: str) -> dict[str, list[Entry]]:
    """The entries by their value of facet `name` (an entry in the list of each of its values), in list order."""
    found: dict[str, list[Entry]] = {}
    for entry, value in zip(entries, map(attrgetter(name), entries)):
        if isinstance(value, list):
            for v in dict.fromkeys(value) if len(value) > 1 else value:  # once, even if listed twice
                found.setdefault(v, []).append(entry)
        else:
            found.setdefault(value, []).append(entry)
    return found


def _matching(entries: list[Entry], facet: tuple[str, str]) -> list[Entry]:
    """The entries an alias category of `facet` holds (`Category.has`, in one pass)."""
    name, wanted = facet
    if wanted == EVERY_REGION:
        return [e for e in entries if facet_matches(facet, getattr(e, name))]
    return [e for e in entries if (wanted in value if isinstance(value := getattr(e, name), list) else wanted == value)]


@dataclass
class Loaded:
    entries: list[Entry]  # in file order
    source_hash: str
    packed: list[Packed]  # the same entries as pickled chunks (see EntryCache.packed)
    cache_root: Path | None  # where the cache keeps this content directory's chunks (None: no cache)
    keys: dict[str, str]  # slug -> the cache key of its file (path and bytes: petgen.build.files.entry_key)
    slugs: set[str] = field(default_factory=set)  # of every entry file, also those that failed to load


def _parse_source(path: str, raw: bytes) -> tuple[Entry | None, list[Problem]]:
    """Parse one entry file's bytes and run the checks that need no other entry."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(path, 1, f"not valid UTF-8 ({exc.reason})", "save the file as UTF-8")]
    entry, problems = parse_entry(path, text)
    if entry is not None:
        collected = Problems(problems)
        found = entry_words(entry)  # the words of the names, examples and search fields, found in one pass
        check_entry_alone(entry, collected, found)
        problems = collected.items
        entry.terms = document_terms(entry.search_fields(), found)  # in the workers, and kept in the cache
    return entry, problems


def _parse_chunk(sources: list[tuple[str, str, bytes]]) -> bytes:
    """Parse (key, path, bytes) sources in a worker; the pickled records go to the build and the cache."""
    records = [(key, *_parse_source(path, raw)) for key, path, raw in sources]
    sign_entries([entry for _, entry, _ in records if entry is not None])  # for the checks across entries
    return pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)


def _scanned(content_dir: Path, root: Path | None, scanning: Forked[Scanned] | None) -> Scanned | None:
    """The entry files' `scan` (None without a cache: every file is read): begun in a child already, if it was and
    ended well, else made here."""
    if scanning is not None:
        try:
            return scanning.result()
        except Exception:  # noqa: BLE001 - the child failed (killed, out of memory): scan here instead
            scanning.stop()
    return scan(content_dir, root) if root is not None else None


def _chunks(sources: list, size: int, tail: int, workers: int) -> list[list]:
    """`sources` in chunks of `size`, but the last `workers * size` of them in chunks of `tail` (`chunk_size`)."""
    bulk = max(0, len(sources) - workers * size) // size * size
    return ([sources[i:i + size] for i in range(0, bulk, size)] +
            [sources[i:i + tail] for i in range(bulk, len(sources), tail)])


def _as_read_from(found: tuple[Entry | None, list[Problem]], path: str) -> tuple[Entry | None, list[Problem]]:
    """A cached parse, naming the path as this build spells it (the cache may hold another spelling)."""
    entry, problems = found
    if entry is not None and entry.path != path:
        entry.path = path
    if not problems:  # most entries: nothing to respell
        return found
    return entry, [p if p.path == path else replace(p, path=path) for p in problems]


def _reparse(paths: dict[str, tuple[str, str]], key: str) -> Entry:
    """The entry of `key` parsed again from its file (a `LazyEntry` whose chunk was lost since the cache was
    opened); an error if the file changed since this build read it."""
    rel, path = paths[key]
    raw = read_file(Path(path))
    entry = _parse_source(path, raw)[0] if entry_key(rel, raw) == key else None
    if entry is None:
        raise ContentError([Problem(path, 1, "changed while the build ran", "build again")])
    sign_entries([entry])  # as a parse worker does (not every field of these is in the light form)
    return entry


# What an edit must move `lastReviewed` for: every published field of an entry (not the bookkeeping ones).
PUBLISHED = tuple(f.name for f in fields(Entry) if f.name not in
                  {"slug", "path", "lastReviewed", "lines", "sentences", "terms", "name_keys", "phrases"})


def _review_date_kept(old: tuple[Entry | None, list] | None, new: tuple[Entry | None, list[Problem]] | None,
                      path: str, problems: Problems) -> None:
    """A warning when an entry's content changed since the last build but its `lastReviewed` did not: webhook
    subscribers get `entry.updated` with the old date (the contract says the date moves with the content)."""
    if not old or not new or old[0] is None or new[0] is None:
        return
    before, after = old[0], new[0]
    if after.lastReviewed != before.lastReviewed:
        return
    changed = [name for name in PUBLISHED if getattr(before, name) != getattr(after, name)]
    if changed:
        problems.add(path, after.line_of("lastReviewed"), f"{', '.join(changed[:3])}{' …' if len(changed) > 3 else ''} "
                     f"changed since the last build, but lastReviewed is still {after.lastReviewed}",
                     f"set lastReviewed to today's date ({time.strftime('%Y-%m-%d')}): webhook subscribers get "
                     "entry.updated with it", warning=True)


def load_entries(content_dir: Path, problems: Problems, *, workers: int | None = None,
                 progress: Progress | None = None, cache_dir: Path | None = None,
                 pool: Executor | None = None, meanwhile: Callable[[], None] | None = None,
                 scanning: Forked[Scanned] | None = None) -> Loaded:
    """Parse every names/*.md; return the entries, a hash of the sources, and the entries pickled.

    Files found in the cache (`cache_dir`, see petgen/build/cache.py) are not parsed again; the others are
    parsed in worker processes when there are many of them (those of `pool`, else started here), and stored
    in the cache. `meanwhile`, if given, is called once: while the workers parse, if they do (every file is
    handed to them, and this process would only wait for them), else before the files are parsed. `scanning`: the
    files' `scan`, begun in a child already (`prescan`), if it was (else, with a cache, it is made here).
    """
    paths: dict[str, tuple[str, str]] = {}  # key -> (path inside the content directory, path as read)
    cache = EntryCache(cache_dir, content_dir, lazy=LightEntries(), reparse=partial(_reparse, paths))
    scanned = _scanned(content_dir, cache.root, scanning)
    files = scanned.names if scanned is not None else entry_names(content_dir)
    names_dir = os.path.join(content_dir / "names", "")  # + name: `os.path.join(names_dir, name)`, cheaper
    keys, results, missing, named = [], {}, [], []
    edited: list[tuple[str, str, str]] = []  # files changed since the last build: (old key, new key, path)
    stamped: dict[str, tuple[Stamp, str]] = {}  # of a fresh scan (`Scanned.fresh`): each file's stamp and key
    workers = workers if workers is not None else (os.cpu_count() or 1)
    # With a pool (forked early, so there are many files), each chunk of files to parse is handed to it as
    # soon as it is read: the workers parse the first chunks while this process reads the rest.
    size, tail = chunk_size(len(files)), chunk_size(len(files), tail=True)
    submitted: list[Future[bytes]] = []
    sent = 0
    for at, name in enumerate(files):
        rel = f"names/{name}"  # as `path.relative_to(content_dir).as_posix()` (the key's path: see `scan`)
        path = names_dir + name
        try:
            if scanned is None or scanned.fresh:  # no cache, or no file known to it: every file is read
                raw = read_file(path)
                key, found = entry_key(rel, raw), None
                if scanned is not None:
                    found = cache.get(key)
                    if name in scanned.stamps:
                        stamped[rel] = (scanned.stamps[name], key)
            else:
                key, raw = scanned.keys[at], scanned.read.get(name)
                if key is None:
                    raise OSError(0, scanned.failed[name])
                found = cache.get(key)
                if found is None and raw is None:  # stamped as read before, but no longer in the cache: read it
                    raw = read_file(path)
                    key, before = entry_key(rel, raw), key
                    found = cache.get(key)
                    if key != before:  # changed within its stamp (the stamps saved say so until it changes again)
                        scanned.before.setdefault(name, before)
        except OSError as exc:  # a directory named *.md, a dangling link, no permission
            problems.add(path, 1, f"cannot be read ({exc.strerror})", "every names/*.md must be a readable text file")
            continue
        paths[key] = (rel, path)
        named.append(f"{name}\0{key}\0")  # the hash of the sources: of every file's name and key
        if scanned is not None and name in scanned.before:
            edited.append((scanned.before[name], key, path))
        keys.append(key)
        if found is None:
            missing.append((key, path, raw))
            if pool is not None and workers > 1 and len(missing) - sent >= (
                    size if len(files) - at > workers * size else tail):  # the last files in smaller chunks
                submitted.append(pool.submit(_parse_chunk, missing[sent:]))
                sent = len(missing)
        else:
            results[key] = _as_read_from(found, path)
    if progress and cache.hits:
        progress(cache.hits)
    if submitted or (workers > 1 and len(missing) >= PARALLEL_THRESHOLD):
        if not submitted:
            size, tail = chunk_size(len(missing)), chunk_size(len(missing), tail=True)
        chunks = _chunks(missing[sent:], size, tail, workers)
        with nullcontext(pool) if pool is not None else worker_pool(workers) as executor:
            submitted += [executor.submit(_parse_chunk, chunk) for chunk in chunks]
            if meanwhile:
                meanwhile()
            for future in submitted:
                records = cache.add_chunk(future.result())
                for key, entry, entry_problems in records:
                    results[key] = (entry, entry_problems)
                if progress:
                    progress(len(records))
    else:
        if meanwhile:
            meanwhile()
        size = chunk_size(len(missing))
        for start in range(0, len(missing), size):
            for key, entry, entry_problems in cache.add_chunk(_parse_chunk(missing[start:start + size])):
                results[key] = (entry, entry_problems)
        if progress and missing:
            progress(len(missing))
    for old_key, key, path in edited:  # before the old entries are pruned from the cache
        _review_date_kept(cache.get(old_key), results.get(key), path, problems)
    cache.prune(set(keys))
    if scanned is not None and scanned.fresh and cache.root is not None:
        save_stamps(cache.root, stamped, scanned.now)  # the cache's directory is made by this load, if it was not
    digest = hashlib.blake2b("".join(named).encode(), digest_size=16)
    entries, keyed = [], {}
    for key in keys:
        entry, entry_problems = results[key]
        problems.extend(entry_problems)
        if entry is not None:
            entries.append(entry)
            keyed[entry.slug] = key
    return Loaded(entries, digest.hexdigest(), cache.packed(keys), cache.root, keyed, {n.removesuffix(".md") for n in files})



def _read_settings(content_dir: Path) -> dict[str, bytes | None] | None:
    """The bytes of the content's files besides the entries (None for one that is missing), or None if one cannot be
    read (its loader reports that)."""
    files: dict[str, bytes | None] = {}
    for name in SETTINGS_FILES:
        try:
            files[name] = read_file(content_dir / name)
        except FileNotFoundError:
            files[name] = None
        except OSError:
            return None
    return files


def _settings_key(files: dict[str, bytes | None] | None) -> str | None:
    """The key of what is loaded of `files` (`_read_settings`): a hash of their names and bytes; None (not kept) if
    one could not be read."""
    if files is None:
        return None
    digest = hashlib.blake2b(digest_size=16)
    for name, data in files.items():
        digest.update(name.encode() + (b"\0-\0" if data is None else b"\0+%d\0" % len(data) + data))
    return digest.hexdigest()


def _load_settings(content_dir: Path) -> tuple[Any, ...]:
    """The site, moods, categories, facets, lexicon and bots, and the problems their checks found."""
    problems = Problems()
    site = load_site(content_dir, problems)
    moods = load_moods(content_dir, problems)
    categories = load_categories(content_dir, moods, problems)
    facets = load_facets(content_dir, problems)
    return (site, moods, categories, facets, load_lexicon(content_dir, categories, moods, problems, facets),
            load_bots(content_dir, problems), problems.items)


def load_knowledge_base(content_dir: Path, *, base_url: str | None = None, strict: bool = False,
                        progress: Progress | None = None, cache_dir: Path | None = None,
                        pool: Executor | None = None, workers: int | None = None,
                        before_checks: Callable[[KnowledgeBase], None] | None = None,
                        while_parsing: Callable[[Site], None] | None = None,
                        scanning: Forked[Scanned] | None = None) -> KnowledgeBase:
    """Load and validate everything; raise ContentError listing every problem, or return the knowledge base.
    `pool`: worker processes to parse in, `workers` how many at most (`load_entries`). `before_checks`, if
    given, is called with the knowledge base (its `warnings` not filled in yet) once every entry is parsed
    and none failed to load, before the checks across entries: a full build hands the entries to its
    workers there, so that they write while this process checks (the caller discards what they wrote
    if the checks then raise ContentError). `while_parsing`, if given, is called with the site (if site.yml
    loaded) while the workers parse the entries, as the rest of the content is loaded (`load_entries`'
    `meanwhile`): a full build prepares there what needs no entry. `scanning`: see `load_entries`."""
    problems = Problems()
    if not content_dir.is_dir():
        problems.add(str(content_dir), 1, "content directory not found", "pass --content DIR")
        raise ContentError(problems.items)
    # What is loaded of the files besides the entries (and what their checks found), kept in the cache by their bytes:
    # parsed and checked again only when one changes. Loaded while the workers parse, if they do.
    files = _read_settings(content_dir)
    settings = EntryMemo(content_root(cache_dir, content_dir) if cache_dir is not None else None, SETTINGS,
                         str(content_dir))  # the context: problems name the path as given
    loaded_settings: list[tuple[Any, ...]] = []

    def meanwhile() -> None:  # what needs no entry, while the workers parse them
        loaded_settings.append(settings.get(_settings_key(files), partial(_load_settings, content_dir)))
        site = loaded_settings[0][0]
        if while_parsing is not None and site is not None:
            while_parsing(site.with_base_url(base_url))

    loaded = load_entries(content_dir, problems, progress=progress, cache_dir=cache_dir, pool=pool, workers=workers,
                          meanwhile=meanwhile, scanning=scanning)
    entries = loaded.entries  # in file order: the checks report the first of two entries in that order
    settings.save()
    site, moods, categories, facets, lexicon, bots, found = loaded_settings[0]
    problems.extend(found)
    built = site.with_base_url(base_url) if site is not None else None
    source = hashlib.blake2b(digest_size=16)
    for data in (files or {}).values():
        if data is not None:
            source.update(data)
    source.update(loaded.source_hash.encode())
    kb = None if built is None else KnowledgeBase(
        site=built, categories=categories, moods=moods,
        entries=sorted(entries, key=lambda e: collation_key(e.title)), warnings=[], source_hash=source.hexdigest(),
        lexicon=lexicon, bots=bots, facets=facets, packed=loaded.packed, cache_root=loaded.cache_root,
        keys=loaded.keys,
    )
    if before_checks is not None and kb is not None and not problems.errors:
        before_checks(kb)
    # The entries' keys in order: those of `keys` (slug -> key, filled in file order) unless two share a slug.
    keys = list(loaded.keys.values()) if len(loaded.keys) == len(entries) else [loaded.keys[e.slug] for e in entries]
    validate(entries, categories, moods, problems, files=loaded.slugs, facets=facets,
             phrases=lambda checked: repeated(checked, keys, loaded.cache_root), keys=loaded.keys,
             cache_root=loaded.cache_root, order=keys)
    if problems.errors or (strict and problems.warnings) or kb is None:
        raise ContentError(problems.sorted(), strict=strict)
    kb.warnings = problems.sorted()
    return kb

"""The knowledge base: loaded, validated content, in list order."""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from petgen.build.cache import EntryCache, Packed, chunk_size, entry_key, file_stamp
from petgen.build.dist import read_file
from petgen.content.bots import load_bots
from petgen.content.lexicon import load_lexicon
from petgen.content.model import (
    Category,
    Entry,
    Facets,
    Mood,
    Site,
    entry_files,
    load_categories,
    load_facets,
    load_moods,
    load_site,
    parse_entry,
)
from petgen.content.problems import ContentError, Problem, Problems
from petgen.content.text import collation_key
from petgen.content.validate import check_entry_alone, sign_entries, validate
from petgen.search.index import document_terms

Progress = Callable[[int], None]  # called with the number of entries just done

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
        aliases = [c for c in self.categories if c.facet is not None]
        for entry in self.entries:
            for category in entry.categories:
                grouped.setdefault(category, []).append(entry)
            for alias in aliases:
                if alias.has(entry):
                    grouped[alias.slug].append(entry)
        return grouped

    @cached_property
    def aliases(self) -> dict[str, tuple[str, str]]:
        """Alias categories: slug -> the facet value they stand for."""
        return {c.slug: c.facet for c in self.categories if c.facet is not None}

    def in_category(self, slug: str) -> list[Entry]:
        """The category's entries, in list order (an alias category's: those with its facet value)."""
        return self._by_category.get(slug, [])

    def facet_counts(self) -> dict[str, dict[str, int]]:
        """Entries per value of each facet, every value listed (0 included), in the vocabulary's order."""
        counts: dict[str, dict[str, int]] = {name: dict.fromkeys(self.facets.slugs(name), 0)
                                             for name in self.facets.values}
        for entry in self.entries:
            for name, per_value in counts.items():
                value = getattr(entry, name)
                for v in value if isinstance(value, list) else [value]:
                    per_value[v] = per_value.get(v, 0) + 1
        return counts

    @property
    def newest_review(self) -> str:
        return max((e.lastReviewed for e in self.entries), default="1970-01-01")


@dataclass
class Loaded:
    entries: list[Entry]  # in file order
    source_hash: str
    packed: list[Packed]  # the same entries as pickled chunks (see EntryCache.packed)
    cache_root: Path | None  # where the cache keeps this content directory's chunks (None: no cache)
    keys: dict[str, str]  # slug -> the cache key of its file (path and bytes: petgen.build.cache.entry_key)
    files: list[Path] = field(default_factory=list)  # every entry file, also those that failed to load


def _parse_source(path: str, raw: bytes) -> tuple[Entry | None, list[Problem]]:
    """Parse one entry file's bytes and run the checks that need no other entry."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(path, 1, f"not valid UTF-8 ({exc.reason})", "save the file as UTF-8")]
    entry, problems = parse_entry(path, text)
    if entry is not None:
        collected = Problems(problems)
        check_entry_alone(entry, collected)
        problems = collected.items
        entry.terms = document_terms(entry.search_fields())  # in the workers, and kept in the cache
    return entry, problems


def _parse_chunk(sources: list[tuple[str, str, bytes]]) -> bytes:
    """Parse (key, path, bytes) sources in a worker; the pickled records go to the build and the cache."""
    records = [(key, *_parse_source(path, raw)) for key, path, raw in sources]
    sign_entries([entry for _, entry, _ in records if entry is not None])  # for the checks across entries
    return pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)


def _as_read_from(found: tuple[Entry | None, list[Problem]], path: str) -> tuple[Entry | None, list[Problem]]:
    """A cached parse, naming the path as this build spells it (the cache may hold another spelling)."""
    entry, problems = found
    if entry is not None and entry.path != path:
        entry.path = path
    return entry, [p if p.path == path else replace(p, path=path) for p in problems]


def load_entries(content_dir: Path, problems: Problems, *, workers: int | None = None,
                 progress: Progress | None = None, cache_dir: Path | None = None,
                 pool: Executor | None = None) -> Loaded:
    """Parse every names/*.md; return the entries, a hash of the sources, and the entries pickled.

    Files found in the cache (`cache_dir`, see petgen/build/cache.py) are not parsed again; the others are
    parsed in worker processes when there are many of them (those of `pool`, else started here), and stored
    in the cache.
    """
    files = entry_files(content_dir)
    cache = EntryCache(cache_dir, content_dir)
    known, stamps = cache.stamps(), {}
    now = time.time_ns()
    digest = hashlib.blake2b(digest_size=16)
    keys, results, missing = [], {}, []
    workers = workers if workers is not None else (os.cpu_count() or 1)
    # With a pool (forked early, so there are many files), each chunk of files to parse is handed to it as
    # soon as it is read: the workers parse the first chunks while this process reads the rest.
    size = chunk_size(len(files))
    submitted: list[Future[bytes]] = []
    sent = 0
    for path in files:
        # Keyed by the path inside the content directory: `content`, `./content` and `/abs/content` share
        # one cache instead of missing (and pruning) each other's entries.
        rel = f"names/{path.name}"  # as `path.relative_to(content_dir).as_posix()`, for `entry_files`' files
        try:
            stamp = file_stamp(os.stat(path))
            seen = known.get(rel)
            key, raw = (seen[1], None) if seen is not None and seen[0] == stamp else (None, read_file(path))
            found = cache.get(key) if key is not None else None
            if found is None:  # not stamped as it is now, or no longer in the cache: read and hash it
                raw = raw if raw is not None else read_file(path)
                key = entry_key(rel, raw)
                found = cache.get(key)
        except OSError as exc:  # a directory named *.md, a dangling link, no permission
            problems.add(str(path), 1, f"cannot be read ({exc.strerror})", "every names/*.md must be a readable text file")
            continue
        stamps[rel] = (stamp, key)
        digest.update(path.name.encode() + b"\0" + key.encode() + b"\0")
        keys.append(key)
        if found is None:
            missing.append((key, str(path), raw))
            if pool is not None and workers > 1 and len(missing) - sent >= size:
                submitted.append(pool.submit(_parse_chunk, missing[sent:]))
                sent = len(missing)
        else:
            results[key] = _as_read_from(found, str(path))
    if progress and cache.hits:
        progress(cache.hits)
    if submitted or (workers > 1 and len(missing) >= PARALLEL_THRESHOLD):
        rest = missing[sent:]
        size = size if submitted else chunk_size(len(missing))
        chunks = [rest[i:i + size] for i in range(0, len(rest), size)]
        with nullcontext(pool) if pool is not None else ProcessPoolExecutor(max_workers=workers) as executor:
            submitted += [executor.submit(_parse_chunk, chunk) for chunk in chunks]
            for future in submitted:
                records = cache.add_chunk(future.result())
                for key, entry, entry_problems in records:
                    results[key] = (entry, entry_problems)
                if progress:
                    progress(len(records))
    elif missing:
        size = chunk_size(len(missing))
        for start in range(0, len(missing), size):
            for key, entry, entry_problems in cache.add_chunk(_parse_chunk(missing[start:start + size])):
                results[key] = (entry, entry_problems)
        if progress:
            progress(len(missing))
    cache.prune(set(keys))
    cache.save_stamps(stamps, now)
    entries, keyed = [], {}
    for key in keys:
        entry, entry_problems = results[key]
        problems.extend(entry_problems)
        if entry is not None:
            entries.append(entry)
            keyed[entry.slug] = key
    return Loaded(entries, digest.hexdigest(), cache.packed(keys), cache.root, keyed, files)



def load_knowledge_base(content_dir: Path, *, base_url: str | None = None, strict: bool = False,
                        progress: Progress | None = None, cache_dir: Path | None = None,
                        pool: Executor | None = None, workers: int | None = None) -> KnowledgeBase:
    """Load and validate everything; raise ContentError listing every problem, or return the knowledge base.
    `pool`: worker processes to parse in, `workers` how many at most (`load_entries`)."""
    problems = Problems()
    if not content_dir.is_dir():
        problems.add(str(content_dir), 1, "content directory not found", "pass --content DIR")
        raise ContentError(problems.items)
    site = load_site(content_dir, problems)
    moods = load_moods(content_dir, problems)
    categories = load_categories(content_dir, moods, problems)
    facets = load_facets(content_dir, problems)
    loaded = load_entries(content_dir, problems, progress=progress, cache_dir=cache_dir, pool=pool, workers=workers)
    entries = loaded.entries
    lexicon = load_lexicon(content_dir, categories, moods, problems, facets)
    bots = load_bots(content_dir, problems)
    validate(entries, categories, moods, problems, files={f.stem for f in loaded.files}, facets=facets)
    if problems.errors or (strict and problems.warnings) or site is None:
        raise ContentError(problems.sorted(), strict=strict)
    entries.sort(key=lambda e: collation_key(e.title))
    source = hashlib.blake2b(digest_size=16)
    for name in ("site.yml", "categories.yml", "moods.yml", "facets.yml", "lexicon.yml", "bots.yml"):
        if (content_dir / name).exists():
            source.update((content_dir / name).read_bytes())
    source.update(loaded.source_hash.encode())
    return KnowledgeBase(
        site=site.with_base_url(base_url), categories=categories, moods=moods, entries=entries,
        warnings=problems.sorted(), source_hash=source.hexdigest(), lexicon=lexicon, bots=bots, facets=facets,
        packed=loaded.packed, cache_root=loaded.cache_root, keys=loaded.keys,
    )

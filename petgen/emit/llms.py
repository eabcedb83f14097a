"""The corpus as Markdown (/llms-full.txt, MCP `petname://corpus`) and the /llms.txt overview."""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

from petgen.build.cache import EntryMemo
from petgen.build.dist import unit_key
from petgen.build.files import read_file, write_atomic
from petgen.content.kb import KnowledgeBase
from petgen.content.model import Entry, Site
from petgen.contract.resources import entry_url

INDEX = "llms.index"  # in the build cache: where each entry's section is in the last llms-full.txt written


def corpus_markdown(kb: KnowledgeBase, previous: str | None = None) -> tuple[bytes, list[str | None], list[int]]:
    """Every entry, in list order, as one Markdown document (UTF-8), with each section's entry file key and where
    each starts (and the last ends). The sections are taken from `previous` (the last build's llms-full.txt, which
    `save_index` described) where their entries are unchanged, else from the build cache (`EntryMemo`, kept between
    builds), else made."""
    site = kb.site
    categories = {c.slug: c.title for c in kb.categories}
    moods = {m.slug: m.title for m in kb.moods}
    context = _context(kb)
    header = (
        f"# {site.name}: alle Kosenamen\n"
        f"{site.description} {len(kb.entries)} Einträge. Lizenz: {site.license['name']} "
        f"({site.license['url']}). Quelle: {site.license['attribution']}.\n").encode()
    entries = kb.entries
    keys = list(map(kb.keys.get, [e.slug for e in entries]))
    sections = _spliced(kb.cache_root, context, previous, keys, lambda i: section(entries[i], site, categories, moods))
    if sections is None:
        memo = EntryMemo(kb.cache_root, "llms", context)
        sections = memo.get_all(keys, lambda i: section(entries[i], site, categories, moods))  # type: ignore[arg-type]
        memo.save()
    bounds = list(accumulate(map(len, sections), initial=len(header)))  # where each section starts, and the end
    return b"".join([header, *sections]), keys, bounds


def _spliced(root: Path | None, context: str, previous: str | None, keys: list[str | None],
             make: Callable[[int], bytes]) -> list[bytes | memoryview] | None:
    """The sections of `keys` cut out of the last build's file `previous` where it has them (None if there is no
    such file, or the index describes another): a rebuild after one edit reads and joins 16 MB at 10,000 entries
    instead of unpickling as much."""
    if root is None or previous is None:
        return None
    try:
        stored_context, stamp, joined, bounds = pickle.loads(read_file(root / INDEX))
        info = os.stat(previous)
        if stored_context != context or stamp != (info.st_ino, info.st_size, info.st_mtime_ns):
            return None
        old = memoryview(_mapped(previous))
    except Exception:  # noqa: BLE001 - missing, damaged or of another file: the sections from the memo
        return None
    if len(old) != info.st_size:
        return None
    at = {key: i for i, key in enumerate(joined.split("\0"))}
    sections: list[bytes | memoryview] = []
    for i, key in enumerate(keys):
        n = at.get(key) if key is not None else None
        sections.append(old[bounds[n]:bounds[n + 1]] if n is not None else make(i))
    return sections


def _mapped(path: str) -> mmap.mmap:
    """The file at `path`, mapped read-only: its sections are copied once, from the page cache into the new file's
    bytes (read, 16 MB at 10,000 entries would be copied twice, into freshly faulted memory). The file is never
    changed in place (a build unlinks it and writes a new one), so the mapping keeps the bytes that were stamped."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


def save_index(kb: KnowledgeBase, path: str, keys: list[str | None], bounds: list[int]) -> None:
    """Describe the llms-full.txt just written at `path` (its stamp, and where each entry's section starts and the
    last ends: `corpus_markdown`) for the next build's `corpus_markdown`."""
    if kb.cache_root is None or not kb.cache_root.is_dir() or None in keys:
        return
    with contextlib.suppress(OSError):
        info = os.stat(path)
        stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
        write_atomic(kb.cache_root / INDEX, pickle.dumps((_context(kb), stamp, "\0".join(keys), bounds),  # type: ignore[arg-type]
                                                         protocol=pickle.HIGHEST_PROTOCOL))


def _context(kb: KnowledgeBase) -> str:
    """What every section depends on besides its entry: the base URL, the categories' and moods' titles."""
    return unit_key(kb.site.base_url, *(f"{c.slug}={c.title}" for c in kb.categories),
                    *(f"{m.slug}={m.title}" for m in kb.moods))


def section(e: Entry, site: Site, categories: dict[str, str], moods: dict[str, str]) -> bytes:
    """One entry's section of `corpus_markdown`."""
    return (
        f"\n## {e.title}\n\n"
        f"- URL: {entry_url(site, e.slug)}\n"
        f"- Aussprache: {e.pronunciation} [{e.ipa}]\n"
        f"- Kategorien: {', '.join(categories[c] for c in e.categories)}\n"
        f"- Stimmungen: {', '.join(moods[m] for m in e.moods)}\n"
        f"- Varianten: {', '.join(e.variants)}\n"
        f"- Schlagwörter: {', '.join(e.keywords)}\n\n"
        f"**Bedeutung:** {e.meaning}\n\n"
        f"### Herkunft\n\n{e.origin}\n\n"
        f"### Verwendung\n\n{e.usage}\n\n"
        "### Beispiele\n\n" + "".join(f"- {x}\n" for x in e.examples) + "\n"
        "### Häufige Fragen\n\n" + "".join(f"- **{f['question']}** {f['answer']}\n" for f in e.faq)
    ).encode()


def llms_txt(kb: KnowledgeBase) -> str:
    """What the service is and where its documentation, OpenAPI document and MCP server are."""
    site, base = kb.site, kb.site.base_url
    return f"""# {site.name}

> A public, read-only, anonymous JSON API over a curated German knowledge base of {len(kb.entries)} pet names
> (Kosenamen), with meaning, origin, usage, examples and FAQs for each. Content: {site.license['name']}.

Attribute as "{site.license['attribution']}" and link the entry's `url`.

## API

- [OpenAPI 3.1 document]({base}/openapi.json): every operation, parameter and schema
- [API documentation]({base}/docs)
- [All names]({base}/api/names): `GET /api/names?category=&mood=&limit=&offset=`
- [Categories and moods]({base}/api/categories)
- [Search]({base}/api/search?q=maus): `GET /api/search?q=&limit=`
- Questions in German or English: `POST {base}/ask` with `{{"query": "Was bedeutet Spatzl?"}}` (NLWeb-style; SSE with `Prefer: streaming=true`)
- [Status]({base}/api/status)

## For agents

- MCP server (Streamable HTTP): `{base}/mcp`; tools `search`, `list_names`, `get_name`, `list_categories`; prompt `find_petname`
- [MCP server card]({base}/.well-known/mcp/server-card.json)
- [API catalog]({base}/.well-known/api-catalog)

## Optional

- [The full corpus as Markdown]({base}/llms-full.txt)
"""

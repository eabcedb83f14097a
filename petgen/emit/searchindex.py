"""Emit the search index: shards by term prefix with hashed names, document files, a small index
manifest, and the compact index the runtime maps into memory.

`/search/index.json` names the shard files and the document files; a browser (or any client) can
fetch it, pick the shards for the prefixes of its query words, rank, and fetch only the document
files of the hits it shows, without the runtime. For browsers, documents are numbered in title order
(`petgen.search.index.title_order`), so that a document's number is its tie-break in a ranking;
document file k holds documents k × DOCS_PER_FILE onwards as [slug, title, meaning, url].
The runtime reads the same postings from one pack file (petgen/search/pack.py), routed at
`ENGINE_ROUTE` and named in index.json as `engine`.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

from petgen.build.cache import EntryMemo
from petgen.build.dist import DistWriter
from petgen.build.files import fingerprint, read_file, write_atomic
from petgen.content.kb import KnowledgeBase
from petgen.contract.resources import encode, entry_url
from petgen.search.index import FIELDS, INDEX_VERSION, QUALITY, WEIGHTS, Document, digest

if TYPE_CHECKING:
    from petgen.search import update

# `petgen.search.update` and what it imports (the engine's pack and query modules) are imported where an index is
# made: in the process (or forked child) that makes it, not in every build (a build that changes no searchable
# field makes none).

INDEX_ROUTE = "/search/index.json"
SEARCH_UNIT = "search"
DOCS_PER_FILE = 64  # documents per document file
# The index kept in the cache (some 15 MB at 10,000 entries) is saved again only when it was built whole or more
# documents than this changed since it was saved: until then each build updates the same one (`update.update`
# makes the index of the new documents from any earlier one, so the result is the same).
KEEP_STATE = 16


def documents(kb: KnowledgeBase) -> list[Document]:
    return [
        Document(slug=e.slug, title=e.title, meaning=e.meaning, url=entry_url(kb.site, e.slug),
                 fields=e.search_fields(), terms=e.terms)
        for e in kb.entries
    ]


class Documents(Sequence[Document]):
    """`documents(kb)`, each made when first read: an index updated entry by entry (petgen/search/update.py)
    reads only the changed entries' documents (and `entry_digests` the others' digests from the cache)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.entries, self.site = kb.entries, kb.site
        self.made: dict[int, Document] = {}

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> Document: ...

    @overload
    def __getitem__(self, index: slice) -> list[Document]: ...

    def __getitem__(self, index: int | slice) -> Document | list[Document]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = range(len(self))[index]
        found = self.made.get(index)
        if found is None:
            e = self.entries[index]
            found = self.made[index] = Document(slug=e.slug, title=e.title, meaning=e.meaning,
                                                url=entry_url(self.site, e.slug), fields=e.search_fields(),
                                                terms=e.terms)
        return found


def digests(docs: Sequence[Document]) -> list[bytes]:
    """Each document's digest (`petgen.search.index.digest`)."""
    return list(map(digest, docs))


def entry_digests(kb: KnowledgeBase, docs: Sequence[Document]) -> list[bytes]:
    """`digests(docs)` of the documents of `kb`'s entries, each kept in the build cache by its entry file."""
    memo = EntryMemo(kb.cache_root, "search", kb.site.base_url)
    found = memo.get_all([kb.keys.get(e.slug) for e in kb.entries], lambda i: digest(docs[i]))
    memo.save()
    return found


def search_key(found: list[bytes]) -> str:
    """What the index is made from: the searchable fields of every document (`digests`), in list order."""
    return hashlib.blake2b(b"".join(found), digest_size=16).hexdigest()


def emit_search_index(kb: KnowledgeBase | None, writer: DistWriter, docs: Sequence[Document] | None = None,
                      found: list[bytes] | None = None, state: Path | None = None,
                      updated: update.IndexState | None = None) -> None:
    """Index every entry's title, variants, keywords and meaning (`docs`, if made already, with their
    `digests`); write shards and the index manifest.

    The index is one unit (`DistWriter.unit`) keyed by `search_key`: an edit that changes no searchable field
    (the usage, the examples, a category) builds no index. With a `state` file (in the build cache), an index
    that has to be built is updated from the last one, entry by entry (petgen/search/update.py), unless it
    is `updated` already (`updated_state`)."""
    if docs is None:
        assert kb is not None, "documents or the knowledge base they are made from"
        docs = documents(kb)
    found = found if found is not None else digests(docs)
    writer.unit(SEARCH_UNIT, search_key(found), lambda: _emit_index(docs, found, writer, state, updated))


def updated_state(path: Path | None, docs: Sequence[Document], found: list[bytes]) -> tuple[update.IndexState, int] | None:
    """The index kept at `path` updated to `docs`, with the number of documents that changed, if it can be (else
    None: build it whole)."""
    from petgen.search import update

    state = load_state(path)
    if state is None:
        return None
    changed = sum(1 for old, new in zip(state.digests, found) if old != new)
    return (state, changed) if update.update(state, docs, found, encode) else None


def load_state(path: Path | None) -> update.IndexState | None:
    from petgen.search import update

    if path is None:
        return None
    try:
        code, state = pickle.loads(read_file(path))
    except Exception:  # noqa: BLE001 - missing, damaged or of another version: build the index whole
        return None
    return state if code == fingerprint() and isinstance(state, update.IndexState) else None


def save_state(path: Path | None, state: update.IndexState) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, pickle.dumps((fingerprint(), state), protocol=pickle.HIGHEST_PROTOCOL))


def _emit_index(docs: Sequence[Document], found: list[bytes], writer: DistWriter, path: Path | None,
                state: update.IndexState | None) -> None:
    from petgen.search import update
    from petgen.search.scoring import SCORING
    from petgen.search.stored import ENGINE_ROUTE

    made = updated_state(path, docs, found) if state is None else None
    state = made[0] if made is not None else state or update.build(docs, encode, found)
    engine = "/" + writer.add_hashed(ENGINE_ROUTE, "search/index", state.pack(), "application/octet-stream", "bin")
    shards = {key: "/" + writer.add_hashed(None, f"search/shards/{key}", data) for key, data in state.shards.items()}
    ordered: list[list[str]] = [[]] * len(state.order)
    for d, rank in enumerate(state.order):
        ordered[rank] = state.docs[d]
    files = ["/" + writer.add_hashed(None, f"search/docs/{start // DOCS_PER_FILE}",
                                     encode(ordered[start:start + DOCS_PER_FILE]))
             for start in range(0, len(ordered), DOCS_PER_FILE)]
    manifest = {
        "version": INDEX_VERSION,
        "fields": {name: WEIGHTS[name] for name in FIELDS},
        "quality": QUALITY,
        "scoring": SCORING,  # what the page's search script needs to rank as the engine does
        "sharding": "first two characters of the term ('_' for one-character terms)",
        "documents": {"count": len(ordered), "numbering": "title order: shorter titles first, then alphabetical",
                      "per_file": DOCS_PER_FILE, "fields": ["slug", "title", "meaning", "url"], "files": files},
        "shards": shards,
        "engine": engine,
    }
    writer.add_file(INDEX_ROUTE, "search/index.json", encode(manifest), "application/json; charset=utf-8")
    if made is None or made[1] > KEEP_STATE:
        save_state(path, state)

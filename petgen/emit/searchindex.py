"""Emit the search index: shards by term prefix with hashed names, a small index manifest, and the
compact index the runtime maps into memory.

`/search/index.json` lists the documents and the shard files; a browser (or any client) can
fetch it, pick the shards for the prefixes of its query words and search without the runtime.
The runtime reads the same postings from one pack file (petgen/search/pack.py), routed at
`ENGINE_ROUTE` and named in index.json as `engine`.
"""

from __future__ import annotations

import hashlib

import orjson

from petgen.build.dist import DistWriter
from petgen.content.kb import KnowledgeBase
from petgen.contract.resources import encode, entry_url
from petgen.search.index import FIELDS, INDEX_VERSION, QUALITY, WEIGHTS, Document, build_index, shard
from petgen.search.pack import pack_index
from petgen.search.query import SCORING
from petgen.search.stored import ENGINE_ROUTE

INDEX_ROUTE = "/search/index.json"
SEARCH_UNIT = "search"


def documents(kb: KnowledgeBase) -> list[Document]:
    return [
        Document(slug=e.slug, title=e.title, meaning=e.meaning, url=entry_url(kb.site, e.slug),
                 fields=e.search_fields(), terms=e.terms)
        for e in kb.entries
    ]


def search_key(docs: list[Document]) -> str:
    """What the index is made from: the searchable fields of every document, in list order."""
    return hashlib.blake2b(orjson.dumps([(d.slug, d.title, d.meaning, d.fields) for d in docs]),
                           digest_size=16).hexdigest()


def emit_search_index(kb: KnowledgeBase, writer: DistWriter, docs: list[Document] | None = None) -> None:
    """Index every entry's title, variants, keywords and meaning (`docs`, if made already); write shards and
    the index manifest.

    The index is one unit (`DistWriter.unit`) keyed by `search_key`: an edit that changes no searchable field
    (the usage, the examples, a category) builds no index."""
    docs = docs if docs is not None else documents(kb)
    writer.unit(SEARCH_UNIT, search_key(docs), lambda: _emit_index(docs, writer))


def _emit_index(docs: list[Document], writer: DistWriter) -> None:
    index = build_index(docs)
    shards = {key: "/" + writer.add_hashed(None, f"search/shards/{key}", encode(data))
              for key, data in shard(index).items()}
    engine = "/" + writer.add_hashed(ENGINE_ROUTE, "search/index", pack_index(index), "application/octet-stream", "bin")
    manifest = {
        "version": INDEX_VERSION,
        "fields": {name: WEIGHTS[name] for name in FIELDS},
        "quality": QUALITY,
        "scoring": SCORING,  # what the page's search script needs to rank as the engine does
        "sharding": "first two characters of the term ('_' for one-character terms)",
        "docs": index["docs"],
        "shards": shards,
        "engine": engine,
    }
    writer.add_file(INDEX_ROUTE, "search/index.json", encode(manifest), "application/json; charset=utf-8")

"""Emit the search index: shards by term prefix with hashed names, document files, a small index
manifest, and the compact index the runtime maps into memory.

`/search/index.json` names the shard files and the document files; a browser (or any client) can
fetch it, pick the shards for the prefixes of its query words, rank, and fetch only the document
files of the hits it shows, without the runtime. For browsers, documents are numbered in title order
(`petgen.search.index.in_title_order`), so that a document's number is its tie-break in a ranking;
document file k holds documents k × DOCS_PER_FILE onwards as [slug, title, meaning, url].
The runtime reads the same postings from one pack file (petgen/search/pack.py), routed at
`ENGINE_ROUTE` and named in index.json as `engine`.
"""

from __future__ import annotations

import hashlib

import orjson

from petgen.build.dist import DistWriter
from petgen.content.kb import KnowledgeBase
from petgen.contract.resources import encode, entry_url
from petgen.search.index import FIELDS, INDEX_VERSION, QUALITY, WEIGHTS, Document, build_index, in_title_order, shard
from petgen.search.pack import pack_index
from petgen.search.query import SCORING
from petgen.search.stored import ENGINE_ROUTE

INDEX_ROUTE = "/search/index.json"
SEARCH_UNIT = "search"
DOCS_PER_FILE = 64  # documents per document file


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
    engine = "/" + writer.add_hashed(ENGINE_ROUTE, "search/index", pack_index(index), "application/octet-stream", "bin")
    browsers = in_title_order(index)
    shards = {key: "/" + writer.add_hashed(None, f"search/shards/{key}", encode(data))
              for key, data in shard(browsers).items()}
    ordered = browsers["docs"]
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

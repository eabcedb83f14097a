"""Emit the search index: shards by term prefix with hashed names, and a small index manifest.

`/search/index.json` lists the documents and the shard files; a browser (or any client) can
fetch it, pick the shards for the prefixes of its query words and search without the runtime.
"""

from __future__ import annotations

from petgen.build.dist import DistWriter
from petgen.content.kb import KnowledgeBase
from petgen.contract.resources import encode, entry_url
from petgen.search.index import FIELDS, INDEX_VERSION, QUALITY, WEIGHTS, Document, build_index, shard
from petgen.search.query import SCORING

INDEX_ROUTE = "/search/index.json"


def documents(kb: KnowledgeBase) -> list[Document]:
    return [
        Document(slug=e.slug, title=e.title, meaning=e.meaning, url=entry_url(kb.site, e.slug),
                 fields=e.search_fields(), terms=e.terms)
        for e in kb.entries
    ]


def emit_search_index(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Index every entry's title, variants, keywords and meaning; write shards and the index manifest."""
    index = build_index(documents(kb))
    shards = {key: "/" + writer.add_hashed(None, f"search/shards/{key}", encode(data))
              for key, data in shard(index).items()}
    manifest = {
        "version": INDEX_VERSION,
        "fields": {name: WEIGHTS[name] for name in FIELDS},
        "quality": QUALITY,
        "scoring": SCORING,  # what the page's search script needs to rank as the engine does
        "sharding": "first two characters of the term ('_' for one-character terms)",
        "docs": index["docs"],
        "shards": shards,
    }
    writer.add_file(INDEX_ROUTE, "search/index.json", encode(manifest), "application/json; charset=utf-8")

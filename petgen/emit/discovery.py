"""Emit /openapi.json, /docs and the discovery documents (all generated from the knowledge base).

- /.well-known/api-catalog (RFC 9727, a linkset), with `Link: <…>; rel="api-catalog"`
- /.well-known/oauth-protected-resource (RFC 9728) for an API that needs no credentials
- /.well-known/mcp/server-card.json and /mcp/server-card (MCP server card, SEP-2127)
- /.well-known/http-message-signatures-directory (the registered bots' Ed25519 keys as a JWKS)
- /llms.txt, /llms-full.txt, /robots.txt
"""

from __future__ import annotations

import os
from functools import cache, partial
from typing import Any

import orjson

from petgen.build.dist import TEXT, DistWriter, unit_key
from petgen.content.bots import directory
from petgen.content.kb import KnowledgeBase
from petgen.content.model import Entry
from petgen.contract import mcp as mcpspec
from petgen.emit.guide import emit_docs
from petgen.emit.llms import corpus_markdown, llms_txt, save_index

CATALOG_PROFILE = "https://www.rfc-editor.org/info/rfc9727"
LINKSET = f'application/linkset+json; profile="{CATALOG_PROFILE}"'
SIGNATURES_DIRECTORY = "application/http-message-signatures-directory+json"
SERVER_CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
JSON = "application/json; charset=utf-8"


def _json(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2)


# ---------------------------------------------------------------------------------------------
# Documents


def server_card(kb: KnowledgeBase) -> dict[str, Any]:
    """The MCP server card: identity, the Streamable HTTP remote, capabilities and static primitives, all from
    the server's declaration (petgen/contract/mcp.py), which the runtime's MCP server is built from too."""
    site, base = kb.site, kb.site.base_url
    return {
        "$schema": SERVER_CARD_SCHEMA,
        "name": mcpspec.reverse_dns(base),
        "version": site.api_version,
        "title": site.name,
        "description": mcpspec.DESCRIPTION,
        "websiteUrl": base + "/",
        "remotes": [{
            "type": "streamable-http", "url": f"{base}/mcp", "supportedProtocolVersions": mcpspec.PROTOCOL_VERSIONS,
            "authentication": {"required": False, "schemes": []},
        }],
        "capabilities": mcpspec.CAPABILITIES,  # exactly what `initialize` answers with (tested)
        "tools": mcpspec.tool_listing(),
        "resources": mcpspec.RESOURCES,
        "resourceTemplates": mcpspec.RESOURCE_TEMPLATES,
        "prompts": mcpspec.PROMPTS,
    }


def api_catalog(base: str) -> dict[str, Any]:
    """RFC 9727 linkset: where the API's description, documentation, status and MCP endpoint are. The REST API is
    anchored at the base URL, as OpenAPI's `servers` and the protected-resource metadata name it (`/api/` was
    redirected to `/api`, which is no resource)."""
    return {"linkset": [
        {
            "anchor": f"{base}/",
            "service-desc": [{"href": f"{base}/openapi.json", "type": "application/vnd.oai.openapi+json;version=3.1"}],
            "service-doc": [{"href": f"{base}/docs", "type": "text/html"}],
            "status": [{"href": f"{base}/api/status", "type": "application/json"}],
        },
        {
            "anchor": f"{base}/mcp",
            "service-desc": [{"href": f"{base}/.well-known/mcp/server-card.json", "type": "application/json"}],
            "service-doc": [{"href": f"{base}/docs#mcpInvoke", "type": "text/html"}],
            "status": [{"href": f"{base}/api/status", "type": "application/json"}],
        },
    ]}


def protected_resource(kb: KnowledgeBase) -> dict[str, Any]:
    """RFC 9728 metadata for a resource that needs no token: no authorization servers, no bearer methods."""
    base = kb.site.base_url
    return {"resource": base + "/", "resource_name": kb.site.name, "resource_documentation": f"{base}/docs",
            "bearer_methods_supported": [], "resource_policy_uri": kb.site.license["url"]}


def robots_txt(base: str) -> str:
    return (f"User-agent: *\nAllow: /\n\nSitemap: {base}/sitemap.xml\n\n# The API is described at {base}/openapi.json; "
            f"an overview for language models is at {base}/llms.txt.\n")


def openapi_examples(kb: KnowledgeBase) -> list[Entry]:
    """The entries the OpenAPI document shows: the example name (Bärchen, else the first), the first category's
    first two."""
    example = kb.by_slug.get("baerchen") or (kb.entries[0] if kb.entries else None)
    return ([example] if example else []) + (kb.first_in_category(kb.categories[0].slug, 2) if kb.categories else [])


def _openapi_document(kb: KnowledgeBase) -> dict[str, Any]:
    from petgen.emit.openapi import openapi_document  # a module of 30 KB: imported when the document is made

    return openapi_document(kb)


def emit_openapi_and_discovery(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Write the OpenAPI document, its HTML rendering and every discovery document."""
    base = kb.site.base_url
    # The OpenAPI document and /docs are units keyed by the entries the document shows (its examples) and how
    # many there are; the rest of what they are made from (site, taxonomy, code) is the writer's context.
    key = unit_key(str(len(kb.entries)), *(f"{e.slug}\0{kb.keys.get(e.slug, '')}" for e in openapi_examples(kb)))
    document = cache(partial(_openapi_document, kb))
    writer.unit("openapi", key, lambda: writer.add_file("/openapi.json", "openapi.json", _json(document()), JSON))
    emit_docs(kb, writer, key, document)

    catalog_link = f'<{base}/.well-known/api-catalog>; rel="api-catalog"'
    writer.add_file("/.well-known/api-catalog", ".well-known/api-catalog", _json(api_catalog(base)), LINKSET,
                    headers={"Link": catalog_link})
    writer.add_file("/.well-known/oauth-protected-resource", ".well-known/oauth-protected-resource",
                    _json(protected_resource(kb)), JSON)
    card = _json(server_card(kb))
    writer.add_file("/.well-known/mcp/server-card.json", ".well-known/mcp/server-card.json", card, JSON)
    writer.add_file("/mcp/server-card", "mcp/server-card.json", card, JSON)
    writer.add_file("/.well-known/http-message-signatures-directory",
                    ".well-known/http-message-signatures-directory", _json(directory(kb.bots)), SIGNATURES_DIRECTORY)
    writer.add_file("/llms.txt", "llms.txt", llms_txt(kb).encode(), TEXT.replace("plain", "markdown"))
    # The last build's llms-full.txt (in the live tree, which a `TreeWriter` reads from) gives the unchanged sections.
    source = getattr(writer, "source", None)
    corpus, keys, bounds = corpus_markdown(kb, os.path.join(source, "llms-full.txt") if source is not None else None)
    writer.add_file("/llms-full.txt", "llms-full.txt", corpus, TEXT.replace("plain", "markdown"))
    save_index(kb, os.path.join(writer.root, "llms-full.txt"), keys, bounds)
    writer.add_file("/robots.txt", "robots.txt", robots_txt(base).encode(), TEXT)

"""The OpenAPI 3.1 document, generated at build time from the resource schemas in petgen.schemas."""

from __future__ import annotations

from typing import Any

from petgen.kb import KnowledgeBase
from petgen.resources import category_resource, license_of, name_resource, name_summary
from petgen.schemas import DEFS

OPENAPI_VERSION = "1.0.0"

RATE_HEADERS = {
    "X-RateLimit-Limit": ("Requests allowed per rolling minute for this client IP.", {"type": "integer"}),
    "X-RateLimit-Remaining": ("Requests left in the current window.", {"type": "integer"}),
    "X-RateLimit-Reset": ("Unix time (seconds) when the next request slot frees up.", {"type": "integer"}),
    "RateLimit-Policy": ('IETF rate-limit policy, e.g. `"per-ip";q=60;w=60`.', {"type": "string"}),
    "RateLimit": ('IETF rate-limit state, e.g. `"per-ip";r=59;t=60`.', {"type": "string"}),
}
CACHE_HEADERS = {
    "ETag": ("Strong validator: the content hash of the body.", {"type": "string"}),
    "Cache-Control": ("`public, max-age=60, must-revalidate` on clean URLs.", {"type": "string"}),
}


def _schema_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _components_schemas(site_id: str) -> dict[str, Any]:
    """The JSON Schemas with their `$defs` references rewritten to OpenAPI components."""
    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (v.replace("#/$defs/", "#/components/schemas/") if k == "$ref" else rewrite(v))
                    for k, v in node.items()}
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    schemas = rewrite(DEFS)
    schemas["AskRequest"] = {
        "description": "A question: the flat shape, or the NLWeb 0.54 nested shape.",
        "oneOf": [
            {"type": "object", "title": "Flat", "required": ["query"], "properties": {
                "query": {"type": "string", "minLength": 2, "maxLength": 500, "pattern": r"\S.*\S"},
                "site": {"const": site_id, "description": "This service's site identifier (optional)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
                "streaming": {"type": "boolean"}}},
            {"type": "object", "title": "NLWeb 0.54", "required": ["query"], "properties": {
                "query": {"type": "object", "required": ["text"], "properties": {
                    "text": {"type": "string", "minLength": 2, "maxLength": 500, "pattern": r"\S.*\S"},
                    "site": {"const": site_id}}},
                "prefer": {"type": "object", "properties": {"streaming": {"type": "boolean"}}},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
                "meta": {"type": "object"}}},
        ],
    }
    safe = 2 ** 53 - 1  # JSON numbers beyond this lose precision in JavaScript clients
    identifier = {"oneOf": [{"type": "string"}, {"type": "integer", "minimum": -safe, "maximum": safe}]}
    schemas["JsonRpcMessage"] = {
        "description": "A JSON-RPC 2.0 request or notification (MCP).",
        "oneOf": [
            {"type": "object", "title": "Request", "required": ["jsonrpc", "id", "method"], "properties": {
                "jsonrpc": {"const": "2.0"}, "id": identifier, "method": {"type": "string", "description": "unknown methods get a JSON-RPC error"},
                "params": {"type": ["object", "null"]}}},
            {"type": "object", "title": "Notification", "required": ["jsonrpc", "method"],
             "not": {"required": ["id"]}, "properties": {
                "jsonrpc": {"const": "2.0"}, "method": {"type": "string", "description": "e.g. notifications/initialized"},
                "params": {"type": ["object", "null"], "description": "ignored for notifications"}}},
        ],
    }
    schemas["JsonRpcResponse"] = {
        "type": "object", "description": "A JSON-RPC 2.0 response: `result`, or `error` with code and message.",
        "required": ["jsonrpc", "id"], "properties": {
            "jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer", "null"]}, "result": {"type": "object"},
            "error": {"type": "object", "required": ["code", "message"], "properties": {
                "code": {"type": "integer"}, "message": {"type": "string"}, "data": {}}}},
    }
    return schemas


def _headers(*groups: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for group in groups for name in group}


def _json(schema: str, example: Any = None) -> dict[str, Any]:
    media: dict[str, Any] = {"schema": _schema_ref(schema)}
    if example is not None:
        media["example"] = example
    return {"application/json": media}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "headers": _headers(RATE_HEADERS), "content": _json("Error")}


def _responses(ok: dict[str, Any], *errors: int, cached: bool = True, redirect: bool = False) -> dict[str, Any]:
    responses: dict[str, Any] = {"200": {**ok, "headers": _headers(RATE_HEADERS, CACHE_HEADERS if cached else {})}}
    if redirect:
        responses["301"] = {"description": "A non-canonical spelling of the slug; `Location` has the canonical one.",
                            "headers": {**_headers(RATE_HEADERS),
                                        "Location": {"schema": {"type": "string"}, "description": "Canonical URL"}}}
    if cached:
        responses["304"] = {"description": "Not modified (If-None-Match matched the ETag).",
                            "headers": _headers(RATE_HEADERS, CACHE_HEADERS)}
    texts = {400: "Bad request: a parameter or the body is invalid (the hint says how to fix it).",
             404: "Not found (the hint names the closest slug and /api/search).",
             405: "Method not allowed.", 413: "Request body too large.",
             415: "Content-Type must be application/json."}
    for status in errors:
        responses[str(status)] = _error(texts[status])
    responses["429"] = {"description": "Rate limited: 60 requests per rolling minute per client IP.",
                        "headers": {**_headers(RATE_HEADERS), "Retry-After": {
                            "schema": {"type": "integer"}, "description": "Seconds until a request is allowed."}},
                        "content": _json("Error")}
    responses["500"] = _error("Internal error (logged on the server).")
    return responses


def _param(name: str, where: str, schema: dict[str, Any], description: str, required: bool = False,
           example: Any = None) -> dict[str, Any]:
    param = {"name": name, "in": where, "required": required or where == "path", "schema": schema,
             "description": description}
    if example is not None:
        param["example"] = example
    return param


def openapi_document(kb: KnowledgeBase) -> dict[str, Any]:
    """Every operation of the API with parameters, bounds, responses, headers and real examples."""
    site = kb.site
    example_entry = kb.by_slug.get("baerchen") or (kb.entries[0] if kb.entries else None)
    example_name = name_resource(example_entry, site) if example_entry else None
    example_summary = name_summary(example_entry, site) if example_entry else None
    example_category = None
    if kb.categories:
        category = kb.categories[0]
        names = [name_summary(e, site) for e in kb.in_category(category.slug)][:2]
        example_category = category_resource(category, names, site)
    category_slugs = [c.slug for c in kb.categories]
    mood_slugs = [m.slug for m in kb.moods]
    slug_example = example_entry.slug if example_entry else "baerchen"

    paths: dict[str, Any] = {
        "/api/names": {"get": {
            "operationId": "listNames", "tags": ["names"], "summary": "List pet names",
            "description": "Alphabetical (German collation) list of names, optionally filtered by category and "
                           "mood, paged by limit and offset; follow `nextUrl` for the next page.",
            "parameters": [
                _param("category", "query", {"type": "string", "enum": category_slugs}, "Category slug."),
                _param("mood", "query", {"type": "string", "enum": mood_slugs}, "Mood slug."),
                _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 200, "default": 200},
                       "Page size."),
                _param("offset", "query", {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "default": 0},
                       "Items to skip."),
            ],
            "responses": _responses({"description": "A page of names.", "content": _json("NameList", {
                "items": [example_summary] if example_summary else [], "total": len(kb.entries), "limit": 200,
                "offset": 0, "nextUrl": None, **license_of(site)})}, 400),
        }},
        "/api/names/{slug}": {"get": {
            "operationId": "getName", "tags": ["names"], "summary": "Get one pet name",
            "parameters": [_param("slug", "path", {"type": "string", "minLength": 1}, "The entry's slug.",
                                  example=slug_example)],
            "responses": _responses({"description": "The full entry.", "content": _json("Name", example_name)},
                                    404, redirect=True),
        }},
        "/api/categories": {"get": {
            "operationId": "listCategories", "tags": ["categories"], "summary": "List categories and moods",
            "responses": _responses({"description": "All categories and the mood vocabulary.",
                                     "content": _json("CategoryList")}),
        }},
        "/api/categories/{slug}": {"get": {
            "operationId": "getCategory", "tags": ["categories"], "summary": "Get one category with its names",
            "parameters": [_param("slug", "path", {"type": "string", "minLength": 1}, "Category slug.",
                                  example=category_slugs[0] if category_slugs else "tiere")],
            "responses": _responses({"description": "The category and all its names.",
                                     "content": _json("Category", example_category)}, 404, redirect=True),
        }},
        "/api/search": {"get": {
            "operationId": "searchNames", "tags": ["search"], "summary": "Search pet names",
            "description": "Typo-tolerant, umlaut-insensitive search over title, variants, keywords and meaning "
                           "(weighted in that order). `total` counts all matches.",
            "parameters": [
                _param("q", "query", {"type": "string", "minLength": 2, "maxLength": 200, "pattern": r"\S.*\S"},
                       "The query, at least 2 characters after trimming.", required=True, example="maus"),
                _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                       "How many results."),
            ],
            "responses": _responses({"description": "Ranked results.", "content": _json("SearchResults")}, 400),
        }},
        "/ask": {"post": {
            "operationId": "nlAsk", "tags": ["ask"], "summary": "Ask a question (NLWeb-style)",
            "description": "A question in German or English. JSON by default; Server-Sent Events (`start`, "
                           "`result` per item, `complete`) with `Prefer: streaming=true`, the header "
                           "`prefer.streaming: true` or `prefer.streaming` in the body.",
            "parameters": [_param("Prefer", "header", {"type": "string"},
                                  "`streaming=true` asks for an SSE stream.", example="streaming=true")],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": _schema_ref("AskRequest"), "example": {"query": "Was bedeutet Spatzl?", "limit": 3}}}},
            "responses": {**_responses({"description": "The answer.", "content": {
                **_json("AskResponse"),
                "text/event-stream": {"schema": {
                    "type": "object", "required": ["event", "data"],
                    "description": "Server-Sent Events: `start` (data: the _meta object), one `result` per item "
                                   "(data: a result item), then `complete` (data: result_count, elapsed_ms).",
                    "properties": {"event": {"enum": ["start", "result", "complete"]},
                                   "data": {"type": "string", "contentMediaType": "application/json"}}}}}},
                400, 405, 413, 415, cached=False)},
        }},
        "/mcp": {"post": {
            "operationId": "mcpInvoke", "tags": ["mcp"], "summary": "Model Context Protocol (Streamable HTTP)",
            "description": "JSON-RPC 2.0 messages of the MCP (protocol versions 2025-03-26 to 2026-07-28), "
                           "stateless, answered as JSON, or as one SSE `message` event to a client that accepts "
                           "only text/event-stream. Every error, HTTP refusals included, is a JSON-RPC error "
                           "object; `error.data.code` names HTTP-level refusals like the REST error codes. "
                           "Tools: search, list_names, get_name, list_categories.",
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": _schema_ref("JsonRpcMessage"),
                "example": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}}}},
            "responses": {
                "200": {"description": "The JSON-RPC response.", "headers": _headers(RATE_HEADERS), "content": {
                    **_json("JsonRpcResponse"),
                    "text/event-stream": {"schema": {"type": "string", "description": "One `message` event whose "
                                                     "data is the JSON-RPC response."}}}},
                "202": {"description": "A notification or response was accepted.", "headers": _headers(RATE_HEADERS)},
                **{status: {"description": description, "headers": _headers(RATE_HEADERS),
                            "content": _json("JsonRpcResponse")} for status, description in (
                    ("400", "Not a valid JSON-RPC message (-32700, -32600, -32602) or protocol version."),
                    ("403", "The operator restricted origins and the Origin header is not one of them."),
                    ("406", "The Accept header allows neither application/json nor text/event-stream."),
                    ("413", "Request body too large."),
                    ("415", "The Content-Type is not application/json."),
                    ("421", "The Host header is not this server's (DNS rebinding protection)."),
                    ("500", "Internal error (-32603, logged on the server)."))},
                "429": {**_responses({})["429"], "description": "Rate limited (JSON-RPC code -32010).",
                        "content": _json("JsonRpcResponse")},
            },
        }},
        "/api/status": {"get": {
            "operationId": "getStatus", "tags": ["status"], "summary": "Service status",
            "responses": _responses({"description": "What the runtime has loaded; timestamp is now.",
                                     "content": _json("Status")}, cached=False),
        }},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": site.name, "version": OPENAPI_VERSION,
            "description": f"{site.description} Read-only and anonymous; 60 requests per minute per client IP. "
                           "Every response carries CORS `*` and rate-limit headers; every JSON body a `license`.",
            "license": {"name": site.license["name"], "url": site.license["url"]},
        },
        "servers": [{"url": site.base_url}],
        "tags": [{"name": t} for t in ("names", "categories", "search", "ask", "mcp", "status")],
        "paths": paths,
        "components": {
            "schemas": _components_schemas(site.site),
            "headers": {name: {"description": text, "schema": schema}
                        for name, (text, schema) in {**RATE_HEADERS, **CACHE_HEADERS}.items()},
        },
    }

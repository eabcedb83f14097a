"""The OpenAPI 3.1 document, generated at build time from the resource schemas in petgen.contract.schemas."""

from __future__ import annotations

from typing import Any

from petgen.content.kb import KnowledgeBase
from petgen.contract import limits as L
from petgen.contract import mcp as mcpspec
from petgen.contract.errors import ERROR_CODES
from petgen.contract.events import EVENT_TYPES
from petgen.contract.resources import category_resource, license_of, name_resource, name_summary
from petgen.contract.schemas import DEFS, OPENAPI_VERSION
from petgen.emit.discovery import openapi_examples

ERROR_BY_STATUS = {e.status: e for e in ERROR_CODES}

FACET_PARAMETERS = {
    "relationship": "For whom the name is used: partner, kind, freunde, familie.",
    "gender": "sie, ihn or alle: for whom the name is used.",
    "region": "ueberregional, or a region where the name is at home.",
    "language": "The language a loanword comes from (deutsch for German names).",
}
RATE_HEADERS: dict[str, tuple[str, dict[str, Any]]] = {
    "X-RateLimit-Limit": ("Requests allowed per rolling minute: 60 for this client IP, or a verified bot's quota.",
                          {"type": "integer"}),
    "X-RateLimit-Remaining": ("Requests left in the current window.", {"type": "integer"}),
    "X-RateLimit-Reset": ("Seconds until the window resets (0..60).", {"type": "integer", "minimum": 0}),
    "RateLimit-Policy": (('IETF rate-limit policy, e.g. `"per-ip";q=60;w=60`, or `"bot";q=600;w=60` for a '
                          "verified bot."), {"type": "string"}),
    "RateLimit": ('IETF rate-limit state, e.g. `"per-ip";r=59;t=60`.', {"type": "string"}),
    "X-Petname-Bot": (('Sent when the request carried a Web Bot Auth signature: `verified;name="…"` (counted '
                       "against the bot's quota) or `unverified;reason=…` (counted per IP; the reason, e.g. "
                       "`expired`, says what to fix)."), {"type": "string"}),
}
# Optional on every operation: a registered bot's RFC 9421 signature (Web Bot Auth), which earns its own quota.
SIGNATURE_HEADERS = {
    "Signature-Input": 'Web Bot Auth (RFC 9421, Ed25519), optional: the covered components and parameters, e.g. '
                       '`sig1=("@authority" "signature-agent";key="sig1");created=…;expires=…;keyid="<JWK '
                       'thumbprint>";tag="web-bot-auth"`. A registered bot\'s verified request counts against its own '
                       "quota instead of the per-IP budget; `X-Petname-Bot` says whether it verified.",
    "Signature": "Web Bot Auth, optional: the Ed25519 signature for the `Signature-Input` label, e.g. `sig1=:…:`.",
    "Signature-Agent": 'Web Bot Auth, optional: where the bot publishes its keys, e.g. `sig1="https://bot.example"`; '
                       "when sent, the signature must cover it.",
}
RETRY_AFTER = {"Retry-After": ("Seconds to wait before the next request.", {"type": "integer", "minimum": 0})}
# What the runtime trims from a query, written out: the characters Python's str.split() takes for whitespace.
# `\s` means something else in each regex engine that reads the document (ECMA-262's leaves out U+001C–U+001F
# and U+0085, which Python trims): with `\S.*\S`, q="\x1e0\x1e" was valid by the document and a 400.
TRIMMED = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Two characters that are not trimmed, anything between (`[\s\S]`, as `.` stops at a line break): the text has
# at least 2 characters after trimming.
AFTER_TRIMMING_2 = f"[^{TRIMMED}][\\s\\S]*[^{TRIMMED}]"
CACHE_HEADERS = {
    "ETag": ("Strong validator: the content hash of the body.", {"type": "string"}),
    "Cache-Control": ("`public, max-age=60, must-revalidate` on clean URLs.", {"type": "string"}),
}


def _schema_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _components_schemas(site_id: str) -> dict[str, Any]:
    """The JSON Schemas with their `$defs` references rewritten to OpenAPI components.

    Shapes a code generator turns into classes are named components referenced with `$ref`, never
    inline `oneOf` members with a `title`: generators name classes after titles and collide (two
    nested `query` objects both became `NLWeb054Query` in openapi-python-client). Nullable values
    are `anyOf` with `{"type": "null"}`, never `type: [X, "null"]`, which many generators skip.
    """
    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (v.replace("#/$defs/", "#/components/schemas/") if k == "$ref" else rewrite(v))
                    for k, v in node.items()}
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    return {**rewrite(DEFS), **_ask_schemas(site_id), **_json_rpc_schemas()}


def _ask_schemas(site_id: str) -> dict[str, Any]:
    """`POST /ask` bodies: the flat shape or the NLWeb 0.54 nested shape (only `query` is required)."""
    question = {"type": "string", "minLength": 2, "maxLength": L.ASK_MAX_QUERY, "pattern": AFTER_TRIMMING_2,
                "description": f"The question, German or English; at most {L.QUERY_WORDS} of its words are searched "
                               "(the others are listed in `_meta.ignored`)."}
    site = {"const": site_id, "description": "This service's site identifier (optional)."}
    limit = {"type": "integer", "minimum": 1, "maximum": L.ASK_MAX_LIMIT, "default": L.ASK_DEFAULT_LIMIT,
             "description": "How many results."}
    streaming = {"type": "boolean", "description": "`true` asks for Server-Sent Events."}
    return {
        "AskRequest": {"description": "A question: the flat shape, or the NLWeb 0.54 nested shape.",
                       "oneOf": [_schema_ref("AskFlatRequest"), _schema_ref("AskNLWebRequest")]},
        "AskFlatRequest": {
            "type": "object", "description": "The flat shape: `query` is the question.", "required": ["query"],
            "properties": {"query": question, "site": site, "limit": limit, "streaming": streaming}},
        "AskNLWebRequest": {
            "type": "object", "description": "The NLWeb 0.54 shape: `query.text` is the question.",
            "required": ["query"], "properties": {
                "query": _schema_ref("AskNLWebQuery"), "prefer": _schema_ref("AskNLWebPrefer"), "limit": limit,
                "meta": {"type": "object", "description": "Accepted and ignored."}}},
        "AskNLWebQuery": {"type": "object", "required": ["text"], "properties": {"text": question, "site": site}},
        "AskNLWebPrefer": {"type": "object", "properties": {"streaming": streaming}},
    }


def _json_rpc_schemas() -> dict[str, Any]:
    """JSON-RPC 2.0 (MCP) messages in and responses out."""
    safe = 2 ** 53 - 1  # JSON numbers beyond this lose precision in JavaScript clients
    identifier = {"oneOf": [{"type": "string"}, {"type": "integer", "minimum": -safe, "maximum": safe}]}
    # JSON-RPC defines `params` as an object when present; the server also takes null, so say so
    params = {"anyOf": [{"type": "object"}, {"type": "null"}]}
    return {
        "JsonRpcMessage": {"description": "A JSON-RPC 2.0 request or notification (MCP).",
                           "oneOf": [_schema_ref("JsonRpcRequest"), _schema_ref("JsonRpcNotification")]},
        "JsonRpcRequest": {
            "type": "object", "description": "A request: answered with a JsonRpcResponse carrying its `id`.",
            "required": ["jsonrpc", "id", "method"], "properties": {
                "jsonrpc": {"const": "2.0"}, "id": identifier,
                "method": {"type": "string", "description": "e.g. tools/list; unknown methods get a JSON-RPC error"},
                "params": {**params, "description": "e.g. {\"name\": …, \"arguments\": {…}} for tools/call"}}},
        "JsonRpcNotification": {
            "type": "object", "description": "A notification (no `id`): answered with 202 and no body.",
            "required": ["jsonrpc", "method"], "not": {"required": ["id"]}, "properties": {
                "jsonrpc": {"const": "2.0"},
                "method": {"type": "string", "description": "e.g. notifications/initialized"},
                "params": {**params, "description": "ignored for notifications"}}},
        "JsonRpcResponse": {
            "type": "object", "required": ["jsonrpc", "id"],
            "description": "A JSON-RPC 2.0 response: `result`, or `error` with code and message. `id` is the "
                           "request's, or null when the request could not be read.",
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "result": {"type": "object"}, "error": _schema_ref("JsonRpcError")}},
        "JsonRpcError": {"type": "object", "required": ["code", "message"], "properties": {
            "code": {"type": "integer", "description": "-32700 parse error, -32600 invalid request, -32601 "
                                                       "unknown method, -32602 invalid params"},
            "message": {"type": "string"}, "data": {"description": "any JSON value"}}},
    }


def _headers(*groups: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for group in groups for name in group}


def _json(schema: str, example: Any = None) -> dict[str, Any]:
    media: dict[str, Any] = {"schema": _schema_ref(schema)}
    if example is not None:
        media["example"] = example
    return {"application/json": media}


def _error(status: int, schema: str = "Error") -> dict[str, Any]:
    """An error response, described by its entry in the error catalogue and headed as the runtime sends it."""
    known = ERROR_BY_STATUS[status]
    description = f"`{known.code}`: {known.when}"
    if schema == "JsonRpcResponse":
        description += " Answered as a JSON-RPC error object (`id` null when the message was not read)."
    headers = {429: _headers(RATE_HEADERS, RETRY_AFTER), 503: _headers(RETRY_AFTER)}
    return {"description": description, "headers": headers.get(status, _headers(RATE_HEADERS)),
            "content": _json(schema)}


# What any operation may answer: the rate limit, a fault, and a runtime without a loaded build.
EVERY_OPERATION = (429, 500, 503)


def _responses(ok: dict[str, Any], *errors: int, cached: bool = True, redirect: bool = False) -> dict[str, Any]:
    responses: dict[str, Any] = {"200": {**ok, "headers": _headers(RATE_HEADERS, CACHE_HEADERS if cached else {})}}
    if redirect:
        responses["301"] = {"description": "A non-canonical spelling of the slug; `Location` has the canonical one.",
                            "headers": {**_headers(RATE_HEADERS),
                                        "Location": {"schema": {"type": "string"}, "description": "Canonical URL"}}}
    if cached:
        responses["304"] = {"description": "Not modified (If-None-Match matched the ETag).",
                            "headers": _headers(RATE_HEADERS, CACHE_HEADERS)}
    for status in (*errors, *EVERY_OPERATION):
        responses[str(status)] = _error(status)
    return responses


def _param(name: str, where: str, schema: dict[str, Any], description: str, required: bool = False,
           example: Any = None) -> dict[str, Any]:
    param = {"name": name, "in": where, "required": required or where == "path", "schema": schema,
             "description": description}
    if example is not None:
        param["example"] = example
    return param


def openapi_document(kb: KnowledgeBase) -> dict[str, Any]:
    """Every operation of the API with parameters, bounds, responses, headers and real examples (the entries of
    `petgen.emit.discovery.openapi_examples` and the number of entries; nothing else of the entries)."""
    site = kb.site
    examples = openapi_examples(kb)  # what the unit of this document is keyed by
    example_entry = examples[0] if kb.entries else None
    example_name = name_resource(example_entry, site) if example_entry else None
    example_summary = name_summary(example_entry, site) if example_entry else None
    example_category = None
    if kb.categories:
        names = [name_summary(e, site) for e in examples[1:]]
        example_category = category_resource(kb.categories[0], names, site)
    category_slugs = [c.slug for c in kb.categories]
    mood_slugs = [m.slug for m in kb.moods]
    slug_example = example_entry.slug if example_entry else "baerchen"

    paths: dict[str, Any] = {
        "/api/names": {"get": {
            "operationId": "listNames", "tags": ["names"], "summary": "List pet names",
            "description": "Alphabetical (German collation) list of names, optionally filtered by category, mood "
                           "and the facets relationship, gender, region and language (all filters combine: a name "
                           "must match each), paged by limit and offset; follow `nextUrl` for the next page.",
            "parameters": [
                _param("category", "query", {"type": "string", "enum": category_slugs},
                       "Category slug: a theme, or one of the alias categories kept for published URLs (`fuer-sie` "
                       "= gender sie, `fuer-ihn` = gender ihn, `neutral` = gender alle, `kinder` = relationship "
                       "kind, `freunde` = relationship freunde, `regional` = any region but ueberregional)."),
                _param("mood", "query", {"type": "string", "enum": mood_slugs}, "Mood slug."),
                *(_param(name, "query", {"type": "string", "enum": kb.facets.slugs(name)}, description)
                  for name, description in FACET_PARAMETERS.items()),
                _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": L.NAMES_MAX_LIMIT,
                                         "default": L.NAMES_DEFAULT_LIMIT}, "Page size."),
                _param("offset", "query", {"type": "integer", "minimum": 0, "maximum": L.MAX_OFFSET, "default": 0},
                       "Items to skip."),
            ],
            "responses": _responses({"description": "A page of names.", "content": _json("NameList", {
                "items": [example_summary] if example_summary else [], "total": len(kb.entries), "limit": L.NAMES_DEFAULT_LIMIT,
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
                _param("q", "query",
                       {"type": "string", "minLength": 2, "maxLength": L.SEARCH_MAX_QUERY, "pattern": AFTER_TRIMMING_2},
                       f"The query, at least 2 characters after trimming; its first {L.QUERY_WORDS} words are searched "
                       "(question words and filler dropped), the others ignored.", required=True, example="maus"),
                _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": L.SEARCH_MAX_LIMIT,
                                         "default": L.SEARCH_DEFAULT_LIMIT}, "How many results."),
            ],
            "responses": _responses({"description": "Ranked results.", "content": _json("SearchResults")}, 400),
        }},
        "/ask": {"post": {
            "operationId": "nlAsk", "tags": ["ask"], "summary": "Ask a question (NLWeb-style)",
            "description": "A question in German or English. JSON by default; Server-Sent Events (`start`, "
                           "`result` per item, `complete`) with `Prefer: streaming=true`, the header "
                           "`prefer.streaming: true` or `prefer.streaming` in the body.",
            "parameters": [
                _param("Prefer", "header", {"type": "string"}, "`streaming=true` asks for an SSE stream.",
                       example="streaming=true"),
                _param("prefer.streaming", "header", {"type": "boolean"}, "`true` asks for an SSE stream.",
                       example=True),
            ],
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
                400, 408, 413, 415, cached=False)},
        }},
        "/mcp": {"post": {
            "operationId": "mcpInvoke", "tags": ["mcp"], "summary": "Model Context Protocol (Streamable HTTP)",
            "description": f"JSON-RPC 2.0 messages of the MCP (protocol versions {mcpspec.PROTOCOL_VERSIONS[0]} to "
                           f"{mcpspec.PROTOCOL_VERSIONS[-1]}), "
                           "stateless, answered as JSON, or as one SSE `message` event to a client that accepts "
                           "only text/event-stream. Every error, HTTP refusals included, is a JSON-RPC error "
                           "object; `error.data.code` names HTTP-level refusals like the REST error codes. "
                           f"Tools: {', '.join(mcpspec.tool_names())}.",
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": _schema_ref("JsonRpcMessage"),
                "example": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}}}},
            "responses": {
                "200": {"description": "The JSON-RPC response.", "headers": _headers(RATE_HEADERS), "content": {
                    **_json("JsonRpcResponse"),
                    "text/event-stream": {"schema": {"type": "string", "description": "One `message` event whose "
                                                     "data is the JSON-RPC response."}}}},
                "202": {"description": "A notification or response was accepted.", "headers": _headers(RATE_HEADERS)},
                "400": {**_error(400, "JsonRpcResponse"),
                        "description": "Not a valid JSON-RPC message (-32700, -32600, -32602) or protocol version: a "
                                       "JSON-RPC error."},
                # every refusal is a JSON-RPC error, those of the layers around the endpoint included (429: -32010)
                **{str(status): _error(status, "JsonRpcResponse")
                   for status in (403, 406, 408, 413, 415, 421, *EVERY_OPERATION)},
            },
        }},
        "/api/status": {"get": {
            "operationId": "getStatus", "tags": ["status"], "summary": "Service status",
            "responses": {**_responses({"description": "What the runtime has loaded; timestamp is now.",
                                        "content": _json("Status")}, cached=False),
                          "503": {**_error(503, "Status"),
                                  "description": "`service_unavailable`: the service is `down` (no build is "
                                                 "loaded); the body is the Status resource all the same."}},
        }},
    }
    paths.update(_webhook_paths())
    for item in paths.values():
        for operation in item.values():
            operation["parameters"] = [*operation.get("parameters", []), *(
                _param(name, "header", {"type": "string"}, text) for name, text in SIGNATURE_HEADERS.items())]
    return {
        "openapi": "3.1.0",
        "info": {
            "title": site.name, "version": OPENAPI_VERSION,
            "description": f"{site.description} Read-only and anonymous; 60 requests per minute per client IP. "
                           "Registered bots that sign their requests (Web Bot Auth: RFC 9421, Ed25519; keys at "
                           "/.well-known/http-message-signatures-directory) get a quota of their own. "
                           "Every response carries CORS `*` and rate-limit headers; every JSON body a `license`.",
            "license": {"name": site.license["name"], "url": site.license["url"]},
        },
        "servers": [{"url": site.base_url}],
        "tags": [{"name": t} for t in ("names", "categories", "search", "ask", "mcp", "status", "webhooks")],
        "paths": paths,
        "webhooks": _webhook_events(slug_example, example_entry.title if example_entry else "Bärchen", site.base_url),
        "components": {
            "schemas": _components_schemas(site.site),
            "headers": {name: {"description": text, "schema": schema}
                        for name, (text, schema) in {**RATE_HEADERS, **RETRY_AFTER, **CACHE_HEADERS}.items()},
            "securitySchemes": {"onboardingToken": {
                "type": "http", "scheme": "bearer",
                "description": "The onboarding token the operator issues (`petgen webhooks invite`); needed for "
                               "/webhooks only, every other endpoint is anonymous."}},
        },
    }


WEBHOOKS_NOTE = ("Webhooks (beta): subscriptions need the onboarding token the operator issued "
                 "(`Authorization: Bearer …`); a token sees only its own subscriptions.")


def _webhook_paths() -> dict[str, Any]:
    """/webhooks: subscribe (no operationId: the contract lists none for it), list, show, delete, rotate."""
    security = [{"onboardingToken": []}]
    challenge = {"WWW-Authenticate": {"schema": {"type": "string"}, "description": '`Bearer realm="webhooks"`'}}
    unauthorised = {**_error(401), "headers": {**_headers(RATE_HEADERS), **challenge}}

    def responses(ok: dict[str, Any], *errors: int) -> dict[str, Any]:
        found = {**ok, "401": unauthorised}
        found.update({str(status): _error(status) for status in (*errors, *EVENT_OPERATION_ERRORS)})
        return found

    def answer(description: str, schema: str | None, **extra: Any) -> dict[str, Any]:
        response: dict[str, Any] = {"description": description, "headers": _headers(RATE_HEADERS)}
        if schema:
            response["content"] = _json(schema)
        response["headers"].update(extra)
        return response

    subscription_id = _param("id", "path", {"type": "string", "minLength": 1}, "The subscription's id.",
                             example="wh_abcdefghijklmnop")
    request = {"url": "https://example.com/hooks/petnames", "events": ["entry.published", "entry.updated"],
               "description": "our newsletter"}
    location = {"Location": {"schema": {"type": "string"}, "description": "The new subscription's URL."}}
    return {
        "/webhooks": {
            "get": {"operationId": "listWebhooks", "tags": ["webhooks"], "summary": "List your webhook subscriptions",
                    "description": WEBHOOKS_NOTE, "security": security,
                    "responses": responses({"200": answer("Your subscriptions (without secrets).",
                                                          "SubscriptionList")})},
            "post": {"tags": ["webhooks"], "summary": "Subscribe to webhooks (beta)",
                     "description": f"{WEBHOOKS_NOTE} The answer carries the signing `secret`, shown only here (and "
                                    "after a rotation). The URL must be https and resolve to public addresses only. "
                                    "Events are POSTed there as described under `webhooks`.",
                     "security": security,
                     "requestBody": {"required": True, "content": {"application/json": {
                         "schema": _schema_ref("SubscriptionRequest"), "example": request}}},
                     "responses": responses({"201": answer("Subscribed; the secret is shown only now.", "Subscription",
                                                           **location)}, 400, 409, 413, 415)},
        },
        "/webhooks/{id}": {
            "get": {"operationId": "getWebhook", "tags": ["webhooks"], "summary": "Show one webhook subscription",
                    "description": WEBHOOKS_NOTE, "security": security, "parameters": [subscription_id],
                    "responses": responses({"200": answer("The subscription (without its secret).", "Subscription")},
                                           404)},
            "delete": {"operationId": "deleteWebhook", "tags": ["webhooks"], "summary": "Unsubscribe",
                       "description": f"{WEBHOOKS_NOTE} Pending deliveries are cancelled.", "security": security,
                       "parameters": [subscription_id],
                       "responses": responses({"204": answer("Deleted.", None)}, 404)},
        },
        "/webhooks/{id}/rotate": {
            "post": {"operationId": "rotateWebhookSecret", "tags": ["webhooks"], "summary": "Rotate the signing secret",
                     "description": f"{WEBHOOKS_NOTE} Issues a new secret; the previous one stays valid for 24 hours "
                                    "(`previousSecretExpires`), and meanwhile every delivery carries both signatures.",
                     "security": security, "parameters": [subscription_id],
                     "responses": responses({"200": answer("The new secret, shown only now.", "Subscription")}, 404)},
        },
    }


EVENT_OPERATION_ERRORS = (429, 500, 503)

DELIVERY_HEADERS = {
    "X-Petname-Signature": (("`t=<unix seconds>,v1=<hex>`: HMAC-SHA256 over `<t>.<raw body>` keyed with the secret "
                            "(the whole `whsec_…` string); two `v1=` values while a rotated secret is still valid."),
                            {"type": "string", "pattern": "^t=[0-9]+(,v1=[0-9a-f]{64})+$"}),
    "X-Petname-Event-Id": ("The event's id (also `id` in the body): deduplicate by it.", {"type": "string"}),
    "X-Petname-Event-Type": ("The event type (also `type` in the body).", {"enum": list(EVENT_TYPES)}),
    "X-Petname-Attempt": ("1 for the first attempt, 2 for the first retry, …", {"type": "integer", "minimum": 1}),
    "webhook-id": ("Standard Webhooks: the event's id.", {"type": "string"}),
    "webhook-timestamp": ("Standard Webhooks: the attempt's time, unix seconds.", {"type": "string"}),
    "webhook-signature": (("Standard Webhooks: `v1,<base64>` (space-separated when two), verifiable with the "
                          "`standardwebhooks` libraries and the same secret."), {"type": "string"}),
}


def _webhook_events(slug: str, title: str, base_url: str) -> dict[str, Any]:
    """The OpenAPI 3.1 `webhooks`: what a subscriber's endpoint receives, and what its answer means."""
    url = f"{base_url}/names/{slug}/"
    examples = {
        "entry.published": {"slug": slug, "title": title, "url": url, "datePublished": "2026-11-22",
                            "lastReviewed": "2026-11-22", "categories": ["tiere", "klassiker"]},
        "entry.updated": {"slug": slug, "title": title, "url": url, "lastReviewed": "2026-11-23",
                          "changes": ["meaning", "faq[1].answer"]},
        "category.updated": {"slug": "tiere", "title": "Tiere", "url": f"{base_url}/categories/tiere/",
                             "action": "edited", "changes": [], "added": [slug], "removed": []},
    }
    events = {}
    for event_type, description in EVENT_TYPES.items():
        schema = "".join(part.capitalize() for part in event_type.split(".")) + "Event"
        events[event_type] = {"post": {
            "summary": f"{event_type} (beta)",
            "description": f"{description} POSTed to every subscription of this type, signed; any 2xx within 10 s "
                           "is delivered. Otherwise it is tried again after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h "
                           "and 10 h, then marked failed (the operator can redeliver it). At least once: deduplicate "
                           "by `id`.",
            "tags": ["webhooks"],
            "parameters": [_param(name, "header", header_schema, text, required=True)
                           for name, (text, header_schema) in DELIVERY_HEADERS.items()],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": _schema_ref(schema),
                "example": {"id": "evt_3f2a9c1b0d4e5f60718293a4", "type": event_type, "created": "2026-11-23T08:00:00Z",
                            "data": examples[event_type]}}}},
            "responses": {
                "2XX": {"description": "Delivered."},
                "410": {"description": "Gone: the subscription is disabled and gets no more events."},
                "default": {"description": "Any other answer, or none within 10 s: a failed attempt, tried again."},
            },
        }}
    return events

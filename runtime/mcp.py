"""`POST /mcp`: the Model Context Protocol server (Streamable HTTP), on the official `mcp` SDK.

Stateless with JSON responses, so every request stands alone and protocol negotiation is the
SDK's (2025-03-26 … 2026-07-28). Tools, resources and the prompt read the runtime's loaded dist
at call time, so a reload is picked up at once. Tool results carry `structuredContent` that
validates against the same JSON Schemas as the REST API, and the same JSON as text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlsplit

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from petgen.content import closest
from petgen.discovery import reverse_dns
from petgen.resources import license_of
from petgen.schemas import DEFS, referenced
from petgen.text import slugify
from runtime.dist import Dist
from runtime.names import BadRequest, ListQuery, list_page
from runtime.search import BadSearch, search_results

INSTRUCTIONS = """\
This is the Kosenamen API: a curated, German-language knowledge base of pet names (Kosenamen such
as Schatz, Bärchen, Spatzl) with meaning, origin, usage, examples, variants and FAQs for each.
Use `search` to find names for a word or idea (German or English), `list_names` to browse by
category and mood, `list_categories` for the vocabularies, and `get_name` for a full entry.
Everything is licensed CC BY 4.0: when you quote or use an entry, attribute it as
"Kosenamen API" and link the entry's `url`.
"""

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)


class AgentTool(Tool):
    """A tool whose argument errors read as instructions (`limit: must be at most 50`), not as a
    pydantic report with documentation links."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                for error in cause.errors(include_url=False)
            )
            raise ToolError(f"Invalid arguments for {self.name}: {problems}. The tool's inputSchema lists "
                            "every argument with its type and bounds.") from cause


def output_schema(name: str) -> dict[str, Any]:
    """A resource schema from petgen.schemas as a standalone object schema for `outputSchema`,
    with only the definitions it uses."""
    return {**DEFS[name], "$defs": {k: v for k, v in referenced(name).items() if k != name}}


def _result(data: Any) -> CallToolResult:
    """The same JSON as structured content and as text."""
    return CallToolResult(content=[TextContent(type="text", text=orjson.dumps(data).decode())],
                          structured_content=data)


def _file_json(dist: Dist, route: str) -> Any:
    return orjson.loads(dist.routes[route].body)


def _unknown_slug(dist: Dist, slug: str) -> ToolError:
    near = closest(slugify(slug) or slug, dist.slugs)
    hint = f" Did you mean '{near}'?" if near else ""
    return ToolError(f"No name with the slug '{slug}'.{hint} Call `search` with the word you are looking for, "
                     "or `list_names` to browse; slugs are lowercase with ä→ae, ö→oe, ü→ue, ß→ss.")


def build_mcp(dist: Callable[[], Dist], *, version: str, base_url: str) -> MCPServer:
    """The MCP server with its tools, resources and prompt."""

    def list_names(
        category: Annotated[str | None, Field(description="Category slug, e.g. 'tiere' (see list_categories).")] = None,
        mood: Annotated[str | None, Field(description="Mood slug, e.g. 'kuschelig' (see list_categories).")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Page size, 1 to 200.")] = 50,
        offset: Annotated[int, Field(ge=0, description="How many names to skip.")] = 0,
    ) -> CallToolResult:
        d = dist()
        for kind, value, known in (("category", category, d.categories), ("mood", mood, d.moods)):
            if value is not None and value not in known:
                match = closest(value, known)
                raise ToolError(f"Unknown {kind} '{value}'." + (f" Did you mean '{match}'?" if match else "") +
                                f" Valid values: {', '.join(known)}.")
        try:
            page = list_page(ListQuery(category, mood, limit, offset), d)
        except BadRequest as exc:  # pragma: no cover - bounds are checked by the input schema
            raise ToolError(f"{exc.message} {exc.hint or ''}") from None
        body = page if isinstance(page, bytes) else page.body
        return _result(orjson.loads(body))

    def get_name(slug: Annotated[str, Field(description="The entry's slug, e.g. 'baerchen'.")]) -> CallToolResult:
        d = dist()
        route = f"/api/names/{slug}"
        if route not in d.routes:
            canonical = slugify(slug)
            if f"/api/names/{canonical}" not in d.routes:
                raise _unknown_slug(d, slug)
            route = f"/api/names/{canonical}"
        return _result(_file_json(d, route))

    def list_categories() -> CallToolResult:
        return _result(_file_json(dist(), "/api/categories"))

    def search(
        query: Annotated[str, Field(description="Words or a name to search for, German or English, 2+ characters.")],
        limit: Annotated[int, Field(ge=1, le=50, description="How many results, 1 to 50.")] = 10,
    ) -> CallToolResult:
        q = " ".join(query.split())
        if len(q) < 2:
            raise ToolError("The query must have at least 2 characters, e.g. 'maus' or 'little bear'.")
        try:
            return _result(search_results(q, limit, dist()))
        except BadSearch as exc:  # pragma: no cover - validated above
            raise ToolError(f"{exc.message} {exc.hint}") from None

    tools = []
    for fn, title, description, schema in (
        (list_names, "List pet names",
         "List German pet names alphabetically, optionally filtered by category and/or mood, with paging "
         "(nextUrl, total). Use list_categories to see valid category and mood slugs.", "NameList"),
        (get_name, "Get a pet name",
         "Get the full entry for one pet name by slug: meaning, origin, usage, four examples, variants, "
         "categories, moods, keywords, FAQ, url of its page and license.", "Name"),
        (list_categories, "List categories and moods",
         "List all categories (slug, title, emoji, description, typical moods, number of names) and the "
         "mood vocabulary.", "CategoryList"),
        (search, "Search pet names",
         "Search the knowledge base by word, name or English gloss (typo-tolerant, umlaut-insensitive, "
         "prefix and compound aware). Results are ranked with a score; total counts all matches.",
         "SearchResults"),
    ):
        tool = AgentTool.from_function(fn, title=title, description=description, annotations=READ_ONLY)
        tool.fn_metadata.output_schema = output_schema(schema)
        tools.append(tool)

    server: MCPServer = MCPServer(reverse_dns(base_url), title="Kosenamen API", version=version,
                                  instructions=INSTRUCTIONS, website_url=base_url + "/", tools=tools,
                                  log_level="WARNING")

    @server.resource("petname://names", name="names", title="All pet names",
                     description="Every entry as a summary (slug, title, meaning, categories, moods, url).",
                     mime_type="application/json")
    def names_resource() -> str:
        d = dist()
        return orjson.dumps({"items": d.items, "total": len(d.items), **license_of(d.site)}).decode()

    @server.resource("petname://categories", name="categories", title="Categories and moods",
                     description="The category and mood vocabularies with counts.", mime_type="application/json")
    def categories_resource() -> str:
        return dist().routes["/api/categories"].body.decode()

    @server.resource("petname://corpus", name="corpus", title="The full corpus",
                     description="Every entry as one Markdown document (the same text as /llms-full.txt).",
                     mime_type="text/markdown")
    def corpus_resource() -> str:
        return dist().routes["/llms-full.txt"].body.decode()

    @server.resource("petname://names/{slug}", name="name", title="One pet name",
                     description="The full entry for a slug, as JSON.", mime_type="application/json")
    def name_resource(slug: str) -> str:
        d = dist()
        file = d.routes.get(f"/api/names/{slug}")
        if file is None:
            raise ResourceNotFoundError(str(_unknown_slug(d, slug)))  # JSON-RPC -32602, with the hint
        return file.body.decode()

    @server.prompt(name="find_petname", title="Find a pet name",
                   description="Find fitting German pet names for someone, with meaning and attribution.")
    def find_petname(
        recipient: Annotated[str, Field(description="Who the name is for, e.g. 'my girlfriend', 'unser Baby'.")],
        mood: Annotated[str, Field(description="The mood wanted, e.g. 'verspielt', 'romantic'.")] = "",
        language: Annotated[str, Field(description="Language of the answer: 'de' or 'en'.")] = "de",
    ) -> list[UserMessage]:
        wanted = f" The mood wanted: {mood}." if mood else ""
        answer_in = "German" if language.lower().startswith("de") else "English"
        return [UserMessage(
            f"Find three to five German pet names (Kosenamen) for {recipient}.{wanted}\n"
            "Use the Kosenamen API tools: `search` (German or English words), `list_names` with `category` "
            "and `mood` (see `list_categories` for the slugs), and `get_name` for each name you suggest. "
            "For every suggestion give the name, its meaning, one example sentence from the entry and a "
            "short note on when it fits or could sound wrong, taken from the entry's usage text.\n"
            f"Answer in {answer_in}. Cite each entry's `url`, and end with the attribution "
            "\"Quelle: Kosenamen API, CC BY 4.0\" (https://creativecommons.org/licenses/by/4.0/)."
        )]

    return server


def mcp_routes(server: MCPServer, base_url: str) -> list[BaseRoute]:
    """The SDK's Streamable HTTP endpoint at /mcp: stateless, JSON, Host/Origin checked for base_url."""
    public = urlsplit(base_url)
    host = public.netloc
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[host, public.hostname or host, "127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1",
                       "localhost"],
        allowed_origins=[f"{public.scheme}://{host}", "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    app = server.streamable_http_app(streamable_http_path="/mcp", json_response=True, stateless_http=True,
                                     transport_security=security)
    # Stateless: no server-initiated stream to GET and no session to DELETE. The spec allows 405 for
    # both; without this a GET would hold an SSE stream open that never carries anything.
    refuse = Route("/mcp", _method_not_allowed, methods=["GET", "HEAD", "DELETE", "PUT", "PATCH", "OPTIONS", "TRACE"])
    routes: list[BaseRoute] = [refuse]
    for route in app.routes:
        if isinstance(route, Route) and route.path == "/mcp":
            route = Route("/mcp", JsonOnly(route.app), methods=["POST"])
        routes.append(route)
    return routes


def _rpc_error(status: int, code: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


SAFE_INTEGER = 2 ** 53 - 1  # the largest id a JavaScript client can hold exactly (documented in the OpenAPI)


def _valid_id(message: dict[str, Any]) -> bool:
    """Requests need a string or number id (MCP forbids null); error responses may carry null."""
    value = message["id"]
    if isinstance(value, bool):
        return False
    if isinstance(value, float) and value.is_integer():  # JSON Schema counts 808.0 as an integer
        value = int(value)
    if isinstance(value, int):
        return abs(value) <= SAFE_INTEGER
    return isinstance(value, str) or (value is None and "method" not in message)


class JsonOnly:
    """Checks the SDK leaves to chance, answered as JSON-RPC errors: the body must be JSON, and a request's
    `id` a string or number (the SDK would take `"id": {}` or `"id": null` for a notification)."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        content_type = dict(scope["headers"]).get(b"content-type", b"").split(b";")[0].strip().lower()
        if content_type != b"application/json":
            response = _rpc_error(400, -32600, "Content-Type must be application/json: send JSON-RPC messages.")
            await response(scope, receive, send)
            return
        body, more = b"", True
        while more:  # the body size is already bounded by the runtime's GuardMiddleware
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            data = None  # the SDK answers parse errors itself (-32700)
        messages = data if isinstance(data, list) else [data]
        if any(isinstance(m, dict) and "id" in m and not _valid_id(m) for m in messages):
            await _rpc_error(400, -32600, "Invalid Request: 'id' must be a string or an integer within ±(2^53−1) "
                             "(MCP forbids null in requests).")(scope, receive, send)
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _method_not_allowed(request: Request) -> Response:
    return _rpc_error(405, -32600, f"{request.method} is not supported: this MCP server is stateless and answers "
                      "JSON-RPC messages sent with POST to /mcp.", headers={"allow": "POST"})

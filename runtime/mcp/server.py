"""`POST /mcp`: the Model Context Protocol server (Streamable HTTP), on the official `mcp` SDK.

Stateless with JSON responses, so every request stands alone and protocol negotiation is the
SDK's (2025-03-26 … 2026-07-28). Tools, resources and the prompt read the runtime's loaded dist
at call time, so a reload is picked up at once. Tool results carry `structuredContent` that
validates against the same JSON Schemas as the REST API, and the same JSON as text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Annotated, Any
from urllib.parse import urlsplit

import orjson
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, PromptArgument, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from petgen.content.nearest import closest
from petgen.content.text import slugify
from petgen.contract import mcp as mcpspec
from petgen.contract.limits import (
    MAX_OFFSET,
    NAMES_DEFAULT_LIMIT,
    NAMES_MAX_LIMIT,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    SEARCH_MAX_QUERY,
    SEARCH_MIN_QUERY,
)
from petgen.contract.resources import license_of
from runtime.builds.dist import Dist
from runtime.http.params import shown
from runtime.http.routing import any_method
from runtime.mcp.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, error_body
from runtime.mcp.transport import FastAnswer, McpEndpoint
from runtime.names import BadRequest, ListQuery, check_filters, list_page
from runtime.search import search_results

log = logging.getLogger("petgen.runtime")



def one_line(exc: ValidationError) -> str:
    """A pydantic report as `field: problem; field: problem`, without input values or documentation links."""
    errors = exc.errors(include_url=False)
    shown = "; ".join(f"{'.'.join(str(part) for part in error['loc'])[:100] or 'value'}: {error['msg']}"
                      for error in errors[:3])
    return shown + (f"; and {len(errors) - 3} more" if len(errors) > 3 else "")


class AgentTool(Tool):
    """A tool whose argument errors read as instructions (`limit: must be at most 50`), not as a
    pydantic report with documentation links, and that names an argument it does not know instead of
    ignoring it (a misspelt `catgory` would otherwise list everything).

    These stay tool execution errors (`isError: true`), as MCP 2025-11-25 asks of input validation
    errors (SEP-1303), so a model reads them and corrects its call."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        known = list(self.parameters.get("properties", {}))
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            near = closest(unknown[0], known)
            raise ToolError(f"Invalid arguments for {self.name}: unknown argument '{unknown[0][:100]}'"
                            + (f" (did you mean '{near}'?)" if near else "")
                            + f". Its arguments are: {', '.join(known) or 'none'}.")
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Invalid arguments for {self.name}: {one_line(cause)}. The tool's inputSchema lists "
                            "every argument with its type and bounds.") from cause


class PetgenMCP(MCPServer):
    """The SDK's server with the protocol errors MCP names: an unknown tool, an unknown prompt and a prompt's
    missing or unknown argument are JSON-RPC -32602 (the SDK answers the first as a tool result and the
    others with code 0 and a logged traceback)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tools = [tool.name for tool in await self.list_tools()]
        if name not in tools:
            raise MCPError(INVALID_PARAMS, f"Unknown tool '{name[:100]}'; the tools are {', '.join(tools)}.")
        return await super().call_tool(name, arguments, context)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        prompts = {prompt.name: prompt for prompt in await self.list_prompts()}
        prompt = prompts.get(name)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt '{name[:100]}'; the prompts are {', '.join(prompts)}.")
        declared = {argument.name: argument for argument in prompt.arguments or []}
        given = arguments or {}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            raise MCPError(INVALID_PARAMS, f"Unknown argument '{unknown[0][:100]}' for the prompt {name}; its "
                           f"arguments are {', '.join(declared)}.")
        missing = [arg for arg, spec in declared.items() if spec.required and arg not in given]
        if missing:
            raise MCPError(INVALID_PARAMS, f"Missing argument '{missing[0]}' for the prompt {name}: "
                           f"{declared[missing[0]].description}")
        return await super().get_prompt(name, arguments, context)

    def capabilities(self) -> dict[str, Any]:
        """What `initialize` (and `server/discover` at 2026-07-28) advertises, as JSON: the server card
        publishes exactly this."""
        return self._lowlevel_server.get_capabilities().model_dump(by_alias=True, exclude_none=True, mode="json")


async def plain_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: malformed params are -32602 with a one-line message naming the field (the SDK says
    only "Invalid request parameters"); an unexpected exception is -32603, never the SDK's code 0."""
    try:
        return await call_next(ctx)
    except MCPError:
        raise
    except ValidationError as exc:
        raise MCPError(INVALID_PARAMS, f"Invalid params for {ctx.method}: {one_line(exc)}.") from None
    except Exception:
        log.exception("MCP handler for %s failed", ctx.method)
        raise MCPError(INTERNAL_ERROR, "Internal error; it was logged on the server.") from None


def _result(data: Any) -> CallToolResult:
    """The same JSON as structured content and as text."""
    return CallToolResult(content=[TextContent(type="text", text=orjson.dumps(data).decode())],
                          structured_content=data)


def search_query(query: str) -> str:
    """The search tool's query as searched: whitespace collapsed (valid with 2 to SEARCH_MAX_QUERY characters)."""
    return " ".join(query.split())


def fast_search(dist: Callable[[], Dist]) -> FastAnswer:
    """Answer a plain `tools/call` of `search` (id, name, arguments `query` and optionally `limit`, both valid)
    without the SDK: its per-request transport, session, dispatch and pydantic round trips cost several times
    the search. The body is byte for byte the SDK's (`{"jsonrpc", "id", "result": {"content": [{"text",
    "type"}], "isError", "structuredContent"}}`, tested against it); anything else returns None and goes to
    the SDK, errors included."""

    def answer(rpc: dict[str, Any]) -> bytes | None:
        params = rpc.get("params")
        if rpc.get("method") != "tools/call" or "id" not in rpc or not isinstance(params, dict) \
                or params.keys() - {"name", "arguments"} or params.get("name") != "search":
            return None
        arguments = params.get("arguments")
        if not isinstance(arguments, dict) or arguments.keys() - {"query", "limit"}:
            return None
        query, limit = arguments.get("query"), arguments.get("limit", SEARCH_DEFAULT_LIMIT)
        if not isinstance(query, str) or type(limit) is not int or not 1 <= limit <= SEARCH_MAX_LIMIT:
            return None
        q = search_query(query)
        if not SEARCH_MIN_QUERY <= len(q) <= SEARCH_MAX_QUERY:
            return None
        data = orjson.dumps(search_results(q, limit, dist()))
        return (b'{"jsonrpc":"2.0","id":' + orjson.dumps(rpc["id"]) + b',"result":{"content":[{"text":'
                + orjson.dumps(data.decode()) + b',"type":"text"}],"isError":false,"structuredContent":' + data + b"}}")

    return answer


def _file_json(dist: Dist, route: str) -> Any:
    return orjson.loads(dist.routes[route].body)


def _unknown_slug(dist: Dist, slug: str) -> ToolError:
    near = closest(slugify(slug) or slug, dist.slugs)
    hint = f" Did you mean '{near}'?" if near else ""
    return ToolError(f"No name with the slug '{shown(slug)}'.{hint} Call `search` with the word you are looking "
                     "for, or `list_names` to browse; slugs are lowercase with ä→ae, ö→oe, ü→ue, ß→ss.")


def build_mcp(dist: Callable[[], Dist], *, version: str, base_url: str) -> PetgenMCP:
    """The MCP server with the tools, resources and prompt declared in petgen/contract/mcp.py.

    The functions below validate the arguments (their signatures carry the types and bounds; integers strictly,
    as the declared schema's `integer`: `true`, `"007"`, `1e2` are errors, not 1, 7 and 100); every name,
    title, description and listed schema comes from the declaration, which the server card is written from.
    """

    def list_names(
        category: str | None = None, mood: str | None = None, relationship: str | None = None,
        gender: str | None = None, region: str | None = None, language: str | None = None,
        limit: Annotated[int, Field(ge=1, le=NAMES_MAX_LIMIT, strict=True)] = NAMES_DEFAULT_LIMIT,
        offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, strict=True)] = 0,
    ) -> CallToolResult:
        d = dist()
        try:
            filters = check_filters({"category": category, "mood": mood, "relationship": relationship,
                                     "gender": gender, "region": region, "language": language}, d)
            page = list_page(ListQuery(filters, limit, offset), d)
        except BadRequest as exc:  # one sentence each: "Unknown category 'x'. Did you mean 'y'? Valid values: …"
            hint = exc.hint or ""
            raise ToolError(f"{exc.message} {hint[:1].upper()}{hint[1:]}".strip()) from None
        body = page if isinstance(page, bytes) else page.body
        return _result(orjson.loads(body))

    def get_name(slug: str) -> CallToolResult:
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

    def search(query: str, limit: Annotated[int, Field(ge=1, le=SEARCH_MAX_LIMIT, strict=True)] = SEARCH_DEFAULT_LIMIT
               ) -> CallToolResult:
        q = search_query(query)
        if len(q) < SEARCH_MIN_QUERY:
            raise ToolError(f"The query must have at least {SEARCH_MIN_QUERY} characters, e.g. 'maus' or "
                            "'little bear'.")
        if len(q) > SEARCH_MAX_QUERY:  # the bound of GET /api/search: a long query costs CPU in proportion
            raise ToolError(f"The query must not be longer than {SEARCH_MAX_QUERY} characters; search for a few "
                            "words, e.g. 'maus' or 'little bear'.")
        return _result(search_results(q, limit, dist()))

    functions = {fn.__name__: fn for fn in (list_names, get_name, list_categories, search)}
    tools = []
    for spec in mcpspec.TOOLS:
        tool = AgentTool.from_function(functions[spec["name"]], title=spec["title"], description=spec["description"],
                                       annotations=ToolAnnotations(**mcpspec.READ_ONLY))
        tool.fn_metadata.output_schema = mcpspec.output_schema(spec["output"])
        tool.parameters = spec["inputSchema"]  # listed as declared; the signature validates (tested to agree)
        tools.append(tool)

    # subscriptions=False: this stateless server never sends list-changed or resource-updated notifications
    # (a new dist is announced by webhooks), so it serves no `subscriptions/listen` and advertises
    # listChanged/subscribe false at every protocol version, as the server card says.
    server = PetgenMCP(mcpspec.reverse_dns(base_url), title=mcpspec.TITLE, version=version,
                       instructions=mcpspec.INSTRUCTIONS, website_url=base_url + "/", tools=tools, log_level="WARNING",
                       middleware=[plain_errors], subscriptions=False)

    def names_resource() -> str:
        d = dist()
        return orjson.dumps({"items": list(d.items), "total": len(d.items), **license_of(d.site)}).decode()

    def categories_resource() -> str:
        return dist().routes["/api/categories"].body.decode()

    def corpus_resource() -> str:
        return dist().routes["/llms-full.txt"].body.decode()

    def name_resource(slug: str) -> str:
        d = dist()
        file = d.routes.get(f"/api/names/{slug}")
        if file is None:
            raise ResourceNotFoundError(str(_unknown_slug(d, slug)))  # JSON-RPC -32602, with the hint
        return file.body.decode()

    readers = {"names": names_resource, "categories": categories_resource, "corpus": corpus_resource,
               "name": name_resource}
    for spec in (*mcpspec.RESOURCES, *mcpspec.RESOURCE_TEMPLATES):
        server.resource(spec.get("uri") or spec["uriTemplate"], name=spec["name"], title=spec["title"],
                        description=spec["description"], mime_type=spec["mimeType"])(readers[spec["name"]])

    def find_petname(recipient: str, mood: str = "", language: str = "de") -> list[UserMessage]:
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

    for spec in mcpspec.PROMPTS:
        prompt = Prompt.from_function({"find_petname": find_petname}[spec["name"]], name=spec["name"],
                                      title=spec["title"], description=spec["description"])
        prompt.arguments = [PromptArgument(**argument) for argument in spec["arguments"]]
        server.add_prompt(prompt)

    return server


def mcp_routes(server: MCPServer, base_url: str, allowed_origins: Collection[str] = (),
               runtime_origin: str | None = None, allowed_hosts: Collection[str] = (),
               fast: FastAnswer | None = None) -> list[BaseRoute]:
    """The SDK's Streamable HTTP endpoint at /mcp (stateless, JSON) behind `McpEndpoint`, which checks Host,
    Origin, Content-Type, Accept and the JSON-RPC envelope itself and answers each refusal as JSON-RPC.
    Its Host check allows the host of `base_url`, that of `runtime_origin` (where a CDN proxies /mcp to) and
    the operator's `allowed_hosts` (--allow-host). `fast` answers plain search calls itself (`fast_search`)."""
    # The SDK's own Host/Origin check answers in plain text and refuses every foreign Origin; McpEndpoint
    # does both checks instead (Origin only when the operator restricted origins).
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(streamable_http_path="/mcp", json_response=True, stateless_http=True,
                                     transport_security=security)
    # Stateless: no server-initiated stream to GET and no session to DELETE. The spec allows 405 for
    # both; without this a GET would hold an SSE stream open that never carries anything.
    # /mcp/ too: a POST there is redirected to /mcp (runtime/app.py), anything else is refused the same way.
    netloc = urlsplit(base_url).netloc
    origin_netloc = urlsplit(runtime_origin).netloc if runtime_origin else None
    routes: list[BaseRoute] = []
    for route in app.routes:
        if isinstance(route, Route) and route.path == "/mcp":
            route = Route("/mcp", McpEndpoint(route.app, public_netloc=netloc, allowed_origins=allowed_origins,
                                              other_netlocs=(*((origin_netloc,) if origin_netloc else ()),
                                                             *allowed_hosts), fast=fast), methods=["POST"])
        routes.append(route)
    # Any other method (methods=None, after the POST route), CONNECT and PROPFIND included: 405, Allow: POST.
    return [*routes, *(any_method(path, _method_not_allowed) for path in ("/mcp", "/mcp/"))]


async def _method_not_allowed(request: Request) -> Response:
    body = error_body(None, INVALID_REQUEST, f"Method Not Allowed: {request.method} is not supported; this MCP "
                      "server is stateless and answers JSON-RPC messages sent with POST to /mcp.",
                      {"code": "method_not_allowed", "hint": "POST one JSON-RPC message to /mcp"})
    return Response(body, status_code=405, media_type="application/json", headers={"allow": "POST"})

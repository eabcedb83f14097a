"""The MCP server's published surface, declared once: identity, tools, resources, the prompt, capabilities.

The build writes the server card and the OpenAPI description of `/mcp` from these declarations
without importing the runtime or the MCP SDK; the runtime (runtime/mcp/server.py) builds its SDK server
from the same declarations, so `tools/list`, `resources/list`, `prompts/list` and `initialize` answer
exactly what the card says (tests/runtime/test_mcp.py checks both against each other). The tool
functions' signatures validate arguments; a test checks that they accept what `inputSchema` declares.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from petgen.contract import limits as L
from petgen.contract.schemas import DEFS, referenced

PROTOCOL_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
TITLE = "Kosenamen API"
DESCRIPTION = ("Curated German pet names (Kosenamen): search, browse by category and mood, and read meaning, origin, "
               "usage and examples of each entry. Read-only, no authentication, CC BY 4.0.")
INSTRUCTIONS = """\
This is the Kosenamen API: a curated, German-language knowledge base of pet names (Kosenamen such
as Schatz, Bärchen, Spatzl) with meaning, origin, usage, examples, variants and FAQs for each.
Use `search` to find names for a word or idea (German or English), `list_names` to browse by
category and mood, `list_categories` for the vocabularies, and `get_name` for a full entry.
Everything is licensed CC BY 4.0: when you quote or use an entry, attribute it as
"Kosenamen API" and link the entry's `url`.
"""
# A stateless server: no list-changed or resource-updated notifications (a new build is announced by webhooks).
CAPABILITIES = {"tools": {"listChanged": False}, "prompts": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": False}}
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def reverse_dns(base_url: str, name: str = "api") -> str:
    """`https://kosenamen.example` → `example.kosenamen/api` (the MCP server name, reverse-DNS).

    A local address (an IP or localhost) has no DNS name to reverse: it becomes `localhost/api`.
    """
    host = urlsplit(base_url).hostname or "localhost"
    if host == "localhost" or host.replace(".", "").isdigit() or ":" in host:
        return f"localhost/{name}"
    return ".".join(reversed(host.split("."))) + f"/{name}"


def output_schema(name: str) -> dict[str, Any]:
    """A resource schema from petgen.contract.schemas as a standalone object schema for `outputSchema`,
    with only the definitions it uses."""
    return {**DEFS[name], "$defs": {k: v for k, v in referenced(name).items() if k != name}}


# Arguments in the shape JSON Schema generators give them (pydantic's, which the SDK uses to validate).

def _optional_text(name: str, description: str) -> dict[str, Any]:
    return {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "description": description,
            "title": name.capitalize()}


def _text(name: str, description: str) -> dict[str, Any]:
    return {"type": "string", "description": description, "title": name.capitalize()}


def _whole(name: str, low: int, high: int, default: int, description: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high, "default": default, "description": description,
            "title": name.capitalize()}


def _arguments(tool: str, properties: dict[str, dict[str, Any]]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "title": f"{tool}Arguments", "properties": properties}
    required = [name for name, spec in properties.items() if "default" not in spec]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False  # unknown arguments are refused, naming the nearest known one
    return schema


TOOLS: list[dict[str, Any]] = [
    {"name": "list_names", "title": "List pet names", "output": "NameList",
     "description": ("List German pet names alphabetically, optionally filtered by category and/or mood, with paging "
                     f"like GET /api/names (limit 1 to {L.NAMES_MAX_LIMIT}, default {L.NAMES_DEFAULT_LIMIT}; offset; "
                     "nextUrl, total). Use list_categories to see valid category and mood slugs."),
     "inputSchema": _arguments("list_names", {
         "category": _optional_text("category", "Category (theme) slug, e.g. 'tiere' (see list_categories)."),
         "mood": _optional_text("mood", "Mood slug, e.g. 'kuschelig' (see list_categories)."),
         "relationship": _optional_text("relationship", "For whom: partner, kind, freunde or familie."),
         "gender": _optional_text("gender", "Used for: sie, ihn or alle."),
         "region": _optional_text("region", "Region slug, e.g. 'ueberregional', 'bayern-oesterreich', 'rheinland' "
                                            "(see list_categories: facets)."),
         "language": _optional_text("language", "Origin language, e.g. 'deutsch', 'englisch', 'tuerkisch'."),
         "limit": _whole("limit", 1, L.NAMES_MAX_LIMIT, L.NAMES_DEFAULT_LIMIT,
                         f"Page size, 1 to {L.NAMES_MAX_LIMIT}."),
         "offset": _whole("offset", 0, L.MAX_OFFSET, 0, "How many names to skip."),
     })},
    {"name": "get_name", "title": "Get a pet name", "output": "Name",
     "description": ("Get the full entry for one pet name by slug: meaning, origin, usage, four examples, variants, "
                     "categories, moods, keywords, FAQ, url of its page and license."),
     "inputSchema": _arguments("get_name", {"slug": _text("slug", "The entry's slug, e.g. 'baerchen'.")})},
    {"name": "list_categories", "title": "List categories and moods", "output": "CategoryList",
     "description": ("List all categories (slug, title, emoji, description, typical moods, number of names) and the "
                     "mood vocabulary."),
     "inputSchema": _arguments("list_categories", {})},
    {"name": "search", "title": "Search pet names", "output": "SearchResults",
     "description": ("Search the knowledge base by word, name or English gloss (typo-tolerant, umlaut-insensitive, "
                     "prefix and compound aware). Results are ranked with a score; total counts all matches."),
     "inputSchema": _arguments("search", {
         "query": _text("query", f"Words or a name to search for, German or English, 2 to {L.SEARCH_MAX_QUERY} "
                                 f"characters; its first {L.QUERY_WORDS} words are searched."),
         "limit": _whole("limit", 1, L.SEARCH_MAX_LIMIT, L.SEARCH_DEFAULT_LIMIT,
                         f"How many results, 1 to {L.SEARCH_MAX_LIMIT}."),
     })},
]

RESOURCES: list[dict[str, Any]] = [
    {"uri": "petname://names", "name": "names", "title": "All pet names", "mimeType": "application/json",
     "description": "Every entry as a summary (slug, title, meaning, categories, moods, url)."},
    {"uri": "petname://categories", "name": "categories", "title": "Categories and moods",
     "mimeType": "application/json", "description": "The category and mood vocabularies with counts."},
    {"uri": "petname://corpus", "name": "corpus", "title": "The full corpus", "mimeType": "text/markdown",
     "description": "Every entry as one Markdown document (the same text as /llms-full.txt)."},
]
RESOURCE_TEMPLATES: list[dict[str, Any]] = [
    {"uriTemplate": "petname://names/{slug}", "name": "name", "title": "One pet name", "mimeType": "application/json",
     "description": "The full entry for a slug, as JSON."},
]
PROMPTS: list[dict[str, Any]] = [
    {"name": "find_petname", "title": "Find a pet name",
     "description": "Find fitting German pet names for someone, with meaning and attribution.",
     "arguments": [
         {"name": "recipient", "description": "Who the name is for, e.g. 'my girlfriend', 'unser Baby'.",
          "required": True},
         {"name": "mood", "description": "The mood wanted, e.g. 'verspielt', 'romantic'.", "required": False},
         {"name": "language", "description": "Language of the answer: 'de' or 'en'.", "required": False},
     ]},
]


def tool_listing() -> list[dict[str, Any]]:
    """The tools as `tools/list` answers them."""
    return [{"name": tool["name"], "title": tool["title"], "description": tool["description"],
             "inputSchema": tool["inputSchema"], "outputSchema": output_schema(tool["output"]),
             "annotations": READ_ONLY} for tool in TOOLS]


def tool_names() -> list[str]:
    return [tool["name"] for tool in TOOLS]

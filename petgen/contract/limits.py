"""The published limits of every surface, in one place: the runtime enforces them, the OpenAPI document, the
MCP tool descriptions and the docs state them (each reads them from here)."""

from __future__ import annotations

NAMES_DEFAULT_LIMIT = 200  # GET /api/names and the MCP list_names tool: page size
NAMES_MAX_LIMIT = 200
MAX_OFFSET = 1_000_000_000  # far past any list; keeps numbers within JSON's safe integer range

SEARCH_DEFAULT_LIMIT = 10  # GET /api/search and the MCP search tool
SEARCH_MAX_LIMIT = 50
SEARCH_MIN_QUERY = 2  # characters, after trimming: a single letter is no search (openapi.AFTER_TRIMMING_2 spells it)
# Searching costs time in proportion to the query's words; the bound keeps every search cheap, over
# REST and MCP alike (a 60 KB query took a second of CPU).
SEARCH_MAX_QUERY = 200
# … and a query or question searches at most this many of its words (after question words and filler are
# dropped, in the order written; the words a name or an intent is read from count once): the others are
# ignored, and /ask lists them in `_meta.ignored`. Real questions search one to five; a query of twenty
# common names cost twice the time of any other query class at 50,000 entries.
QUERY_WORDS = 8

ASK_DEFAULT_LIMIT = 5  # POST /ask
ASK_MAX_LIMIT = 20
ASK_MAX_QUERY = 500

# A JSON-RPC message to /mcp nests at most this deep (objects and arrays): no MCP message needs more,
# and the SDK re-encodes what it is given (orjson refuses to encode past 254 levels).
MCP_MAX_DEPTH = 64

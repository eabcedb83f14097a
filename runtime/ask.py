"""`POST /ask`: natural-language questions in German or English, NLWeb-style (JSON or SSE).

Understanding and ranking (runtime/understanding.py) run on the bundled data only: the lexicon
in `content/lexicon.yml` and the search index.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.responses import StreamingResponse

from petgen.content.lexicon import Lexicon
from petgen.contract.limits import ASK_DEFAULT_LIMIT as DEFAULT_LIMIT
from petgen.contract.limits import ASK_MAX_LIMIT as MAX_LIMIT
from petgen.contract.limits import ASK_MAX_QUERY as MAX_QUERY
from petgen.contract.resources import license_of
from petgen.search.query import Hit
from runtime.builds.dist import Dist
from runtime.http.errors import error_response
from runtime.http.params import BadBody, header_map, json_object, read_body
from runtime.reading import Understanding, understand
from runtime.understanding import Answer, answer

__all__ = ["Answer", "Lexicon", "Understanding", "answer", "understand"]

NLWEB_VERSION = "0.54"
RESPONSE_TYPE = "Answer"


class BadAsk(Exception):
    def __init__(self, message: str, hint: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.status = status


@dataclass(frozen=True)
class AskRequest:
    query: str
    site: str
    limit: int
    streaming: bool


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"))


def wants_streaming(headers: Mapping[str, str]) -> bool:
    """`Prefer: streaming=true` (among other preferences) or the header `prefer.streaming: true`.

    `prefer.streaming` is a boolean header parameter in the OpenAPI document, so it is `true` or
    `false` (as generated clients send it) and anything else is refused, not read as false.
    """
    flag = headers.get("prefer.streaming")
    if flag is not None and flag.strip() not in ("true", "false"):
        raise BadAsk(f"The header 'prefer.streaming' must be true or false, not {json.dumps(flag[:40])}.",
                     "send the header 'prefer.streaming: true', or leave it out")
    for preference in headers.get("prefer", "").split(","):
        name, _, value = preference.strip().partition("=")
        if name.strip().lower() == "streaming" and _truthy(value.strip().strip('"')):
            return True
    return flag is not None and flag.strip() == "true"


def parse_ask_request(body: bytes, headers: Mapping[str, str], site: str) -> AskRequest:
    """Accept `{query, site?, limit?}` and the NLWeb 0.54 shape `{query: {text, site?}, prefer: {streaming}}`."""
    try:
        data = json_object(body, headers.get("content-type", ""), '{"query": "Was bedeutet Spatzl?"}')
    except BadBody as exc:
        raise BadAsk(exc.message, exc.hint, exc.status) from None
    query, requested_site, streaming = data.get("query"), data.get("site"), False
    for holder in (data, query if isinstance(query, dict) else {}):
        if "site" in holder and not isinstance(holder["site"], str):
            raise BadAsk("'site' must be text.", f"leave 'site' out or send \"{site}\"")
    if isinstance(query, dict):  # NLWeb 0.54 nested shape
        requested_site = query.get("site", requested_site)
        query = query.get("text")
    for key in ("meta", "prefer"):
        if key in data and not isinstance(data[key], dict):
            raise BadAsk(f"'{key}' must be a JSON object.", f'send "{key}": {{…}} or leave it out')
    prefer = data.get("prefer") or {}
    for where, flags in (("streaming", data), ("prefer.streaming", prefer)):
        if "streaming" in flags and not isinstance(flags["streaming"], bool):
            raise BadAsk(f"'{where}' must be true or false.", f'send "{where.split(".")[-1]}": true')
    streaming = wants_streaming(headers) or prefer.get("streaming") is True or data.get("streaming") is True
    if query is not None and not isinstance(query, str):
        raise BadAsk(f"'query' must be text, not {type(query).__name__}.", 'send {"query": "Was bedeutet Spatzl?"}')
    if not isinstance(query, str):
        raise BadAsk("'query' is required: a question as text (or {\"text\": …} in the NLWeb shape).",
                     'send {"query": "Wie kann ich meinen Freund liebevoll nennen?"}')
    query = " ".join(query.split())
    if len(query) < 2:
        raise BadAsk("'query' must have at least 2 characters.", 'ask a question, e.g. {"query": "Was bedeutet Spatzl?"}')
    if len(query) > MAX_QUERY:
        raise BadAsk(f"'query' must not be longer than {MAX_QUERY} characters.", "ask a shorter question")
    if requested_site is not None and requested_site != site:
        raise BadAsk(f"Unknown site '{requested_site}'.", f"this service answers for site '{site}'; "
                     "leave 'site' out or send that value")
    limit = data.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, float) and limit.is_integer():  # JSON Schema counts 12.0 as an integer
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        shown = json.dumps(limit, ensure_ascii=False)  # stdlib: any value, even integers beyond 64 bits
        raise BadAsk(f"'limit' must be a whole number from 1 to {MAX_LIMIT}, not {shown[:40]}.",
                     f"for example \"limit\": {DEFAULT_LIMIT}")
    return AskRequest(query=query, site=site, limit=limit, streaming=streaming)


# ---------------------------------------------------------------------------------------------
# Responses


EMPTY_HINT = ("nothing in the knowledge base answers this with confidence; ask about a name "
              "('Was bedeutet Spatzl?') or say for whom and how ('frecher Kosename für meine Freundin')")


def meta(request: AskRequest, dist: Dist, found: Answer) -> dict[str, Any]:
    """NLWeb's _meta, plus what was understood, the words ignored, the filters relaxed and, for an
    empty result, a hint and the titles that come closest to the question's words."""
    data: dict[str, Any] = {
        "response_type": RESPONSE_TYPE, "version": NLWEB_VERSION, "site": request.site,
        "query": request.query, "result_count": len(found.hits),
        "understood": found.meaning.summary(), "ignored": found.meaning.ignored, "relaxed": found.relaxed,
    }
    if not found.hits:
        data["hint"] = found.hint or EMPTY_HINT
        data["did_you_mean"] = [hit.title for hit in found.suggestions]
    return {**data, **license_of(dist.site)}


def result_item(hit: Hit, dist: Dist, unmet: list[str] | None = None) -> dict[str, Any]:
    """One result; `unmet`: the relaxed filters it does not meet, if any."""
    item = {"@type": "DefinedTerm", "name": hit.title, "url": hit.url, "description": hit.meaning,
            "score": hit.score, "citation": f"{dist.site.name}, {hit.url}", "slug": hit.slug}
    if unmet:
        item["relaxed"] = unmet
    return item


def ask_json(request: AskRequest, dist: Dist) -> dict[str, Any]:
    found = answer(request.query, dist, request.limit)
    return {"_meta": meta(request, dist, found),
            "result": [result_item(h, dist, found.unmet.get(h.doc)) for h in found.hits]}


def sse(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


async def ask_stream(request: AskRequest, dist: Dist) -> AsyncIterator[bytes]:
    """`start` (the _meta), one `result` per item, `complete` (count and timing)."""
    started = time.perf_counter()
    found = answer(request.query, dist, request.limit)
    yield sse("start", meta(request, dist, found))
    for hit in found.hits:
        yield sse("result", result_item(hit, dist, found.unmet.get(hit.doc)))
    yield sse("complete", {"result_count": len(found.hits),
                           "elapsed_ms": round((time.perf_counter() - started) * 1000, 2)})


ASK_HEADERS = frozenset({b"content-type", b"prefer", b"prefer.streaming"})
JSON_ANSWER = [(b"content-type", b"application/json; charset=utf-8"), (b"cache-control", b"no-store")]


class AskEndpoint:
    """`POST /ask` as a plain ASGI app: the body read straight from `receive`, only the headers it reads decoded,
    a JSON answer sent as is; no per-request Request and Response objects (the answer is computed for the request,
    so it is not to be stored)."""

    def __init__(self, dist: Callable[[], Dist]) -> None:
        self.dist = dist

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        d = self.dist()
        try:
            request = parse_ask_request(await read_body(receive), header_map(scope["headers"], ASK_HEADERS),
                                        d.site.site)
        except BadAsk as exc:
            await error_response(exc.status, exc.message, exc.hint)(scope, receive, send)
            return
        if request.streaming:
            await StreamingResponse(ask_stream(request, d), media_type="text/event-stream; charset=utf-8",
                                    headers={"cache-control": "no-store", "x-accel-buffering": "no"})(scope, receive, send)
            return
        body = orjson.dumps(ask_json(request, d))
        await send({"type": "http.response.start", "status": 200,
                    "headers": [*JSON_ANSWER, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

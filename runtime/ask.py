"""`POST /ask`: natural-language questions in German or English, NLWeb-style (JSON or SSE).

Understanding runs on the bundled data only: question words and filler are dropped, English
words are mapped to German through `content/lexicon.yml` (and the English glosses in every
entry's keywords, which the search index holds), category and mood intents ("for my
boyfriend", "funny", "Bavarian") become filters and boosts, and "what does X mean" answers
with X first.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from petgen.lexicon import Lexicon
from petgen.resources import license_of
from petgen.search import Hit, analyze, words
from runtime.dist import Dist

NLWEB_VERSION = "0.54"
RESPONSE_TYPE = "Answer"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY = 500
# Intent boosts per asked-for category or mood an entry has. With search words they only break
# near-ties (an exact title still beats a compound match); with intents alone they rank.
CATEGORY_BOOST = {"words": 1.5, "intents": 40.0}
MOOD_BOOST = {"words": 1.0, "intents": 25.0}
CLASSIC_PRIOR = 30.0  # questions with intents only ("for my boyfriend"): the well-known names first
PARTNER = {"fuer-ihn", "fuer-sie"}  # names for a partner: also the ones that fit anyone, not friends' names
# Categories that say whom a name is for; words asking for any other category ("Blume", "Märchen",
# "funny") are also searched for, since entries carry them in their keywords.
RECIPIENTS = {"fuer-ihn", "fuer-sie", "neutral", "kinder", "freunde"}
DEFINE_BOOST = 1000.0  # "what does X mean": X itself first
MAX_PHRASE = 4

# "what does X mean", "was bedeutet X", … — X is the name asked about.
DEFINITION = [re.compile(p, re.IGNORECASE) for p in (
    r"\bwhat(?:'s| is| does)?\s+(?:the\s+)?(?:meaning|origin)\s+of\s+(?P<x>.+)",
    r"\bwhat\s+does\s+(?P<x>.+?)\s+(?:mean|stand for)\b",
    r"\bwhere\s+does\s+(?P<x>.+?)\s+come\s+from\b",
    r"\bwhat\s+is\s+(?:an?\s+)?(?P<x>.+?)\s*\?*$",
    r"\bmeaning\s+of\s+(?P<x>.+)",
    r"\bwas\s+(?:bedeutet|hei(?:ß|ss)t|meint)\s+(?:eigentlich\s+)?(?P<x>.+)",
    r"\bwoher\s+(?:kommt|stammt)\s+(?:eigentlich\s+)?(?P<x>.+)",
    r"\bbedeutung\s+(?:von|des\s+kosenamens)\s+(?P<x>.+)",
    r"\bherkunft\s+(?:von|des\s+kosenamens)\s+(?P<x>.+)",
    r"\bwas\s+ist\s+(?:ein(?:e)?\s+)?(?P<x>.+?)\s*\?*$",
)]
_TRIM = " \t\"'„“”‚‘’«»?!.,:;()"


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


def wants_streaming(headers: dict[str, str]) -> bool:
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


def parse_ask_request(body: bytes, headers: dict[str, str], site: str) -> AskRequest:
    """Accept `{query, site?, limit?}` and the NLWeb 0.54 shape `{query: {text, site?}, prefer: {streaming}}`."""
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise BadAsk(f"Content-Type must be application/json, not '{content_type or 'missing'}'.",
                     'send a JSON body such as {"query": "Was bedeutet Spatzl?"}', status=415)
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadAsk(f"The body is not valid JSON ({exc}).", 'send {"query": "…"}') from None
    if not isinstance(data, dict):
        raise BadAsk("The body must be a JSON object.", 'send {"query": "…"}')
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
# Understanding


@dataclass
class Understanding:
    words: list[list[str]]  # groups of alternative folded words to search for
    categories: list[str] = field(default_factory=list)
    moods: list[str] = field(default_factory=list)
    define: str | None = None  # the name asked about in "what does X mean"


def understand(question: str, lexicon: Lexicon, titles: frozenset[str] = frozenset()) -> Understanding:
    """Turn a question into search words, category and mood intents and, maybe, a name to define.

    A phrase that is also an entry's title (`Kumpel`, `Baby`), or that asks for a topic rather than a
    recipient (`Blume`, `funny`), stays a search word besides its intent.
    """
    tokens = words(question)
    result = Understanding(words=[])
    for pattern in DEFINITION:
        match = pattern.search(question)
        if match:
            target = match.group("x").strip(_TRIM)
            target = re.split(r"\s+(?:eigentlich|genau|überhaupt|actually|exactly)\b", target)[0].strip(_TRIM)
            if target and len(words(target)) <= 3:
                result.define = target
                result.words = [[w] for w in analyze(target)]
                return result
    i = 0
    while i < len(tokens):
        for size in range(min(MAX_PHRASE, len(tokens) - i), 0, -1):
            phrase = tokens[i:i + size]
            actions = lexicon.phrases.get(tuple(phrase))
            if actions:
                translation: list[str] = []
                for kind, value in actions:
                    if kind == "translate":
                        translation.extend(w for w in analyze(value) if w not in translation)
                    elif kind == "categories" and value not in result.categories:
                        result.categories.append(value)
                    elif kind == "moods" and value not in result.moods:
                        result.moods.append(value)
                topical = any(kind == "moods" or (kind == "categories" and value not in RECIPIENTS)
                              for kind, value in actions)
                if " ".join(phrase) in titles or (topical and not translation):
                    translation = [*phrase, *(w for w in translation if w not in phrase)]
                if translation:
                    result.words.append(translation)
                i += size
                break
        else:
            token = tokens[i]
            if token not in lexicon.filler and len(token) > 1 and [token] not in result.words:
                result.words.append([token])
            i += 1
    return result


def allowed_docs(categories: list[str], dist: Dist) -> frozenset[int]:
    """Entries that fit the asked-for categories; names for a partner ("für meinen Freund") are the
    partner names for him or for anyone, not names for friends or children."""
    empty: frozenset[int] = frozenset()
    allowed: frozenset[int] = frozenset().union(*(dist.in_category.get(c, empty) for c in categories))
    if PARTNER & set(categories):
        allowed = (allowed | dist.in_category.get("neutral", empty)) & dist.in_facet("relationship", "partner")
    return allowed


def answer(question: str, dist: Dist, limit: int) -> tuple[Understanding, list[Hit]]:
    """Understand the question and rank entries for it."""
    meaning = understand(question, dist.lexicon_index, dist.title_words)
    index = dist.search
    if meaning.define is not None:  # "what does X mean": X itself first
        target = " ".join(words(meaning.define))
        boosts = {doc: DEFINE_BOOST for doc in dist.docs_by_title.get(target, [])}
        return meaning, index.top(meaning.words, limit, boosts=boosts)[0]
    mode = "words" if meaning.words else "intents"
    boosts = {}
    for sets, names, boost in ((dist.in_category, meaning.categories, CATEGORY_BOOST[mode]),
                               (dist.in_mood, meaning.moods, MOOD_BOOST[mode])):
        for name in names:
            for doc in sets.get(name, ()):
                boosts[doc] = boosts.get(doc, 0.0) + boost
    if mode == "intents":
        for doc in dist.in_category.get("klassiker", ()):
            if doc in boosts:
                boosts[doc] += CLASSIC_PRIOR
    allowed = allowed_docs(meaning.categories, dist) if meaning.categories else None

    def ranked(only: frozenset[int] | None) -> tuple[list[Hit], int]:
        if meaning.words:
            return index.top(meaning.words, limit, boosts=boosts, allowed=only)
        return index.rank_docs(boosts, limit, only)  # only intents ("funny names for my boyfriend")

    hits, total = ranked(allowed)  # an asked-for category filters when it can …
    if allowed is not None and total == 0:
        hits, _ = ranked(None)  # … and boosts when nothing would be left
    return meaning, hits


# ---------------------------------------------------------------------------------------------
# Responses


def meta(request: AskRequest, dist: Dist, count: int) -> dict[str, Any]:
    return {"response_type": RESPONSE_TYPE, "version": NLWEB_VERSION, "site": request.site,
            "query": request.query, "result_count": count, **license_of(dist.site)}


def result_item(hit: Hit, dist: Dist) -> dict[str, Any]:
    return {"@type": "DefinedTerm", "name": hit.title, "url": hit.url, "description": hit.meaning,
            "score": hit.score, "citation": f"{dist.site.name}, {hit.url}", "slug": hit.slug}


def ask_json(request: AskRequest, dist: Dist) -> dict[str, Any]:
    _, hits = answer(request.query, dist, request.limit)
    return {"_meta": meta(request, dist, len(hits)), "result": [result_item(h, dist) for h in hits]}


def sse(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


async def ask_stream(request: AskRequest, dist: Dist) -> AsyncIterator[bytes]:
    """`start` (the _meta), one `result` per item, `complete` (count and timing)."""
    started = time.perf_counter()
    _, hits = answer(request.query, dist, request.limit)
    yield sse("start", meta(request, dist, len(hits)))
    for hit in hits:
        yield sse("result", result_item(hit, dist))
    yield sse("complete", {"result_count": len(hits),
                           "elapsed_ms": round((time.perf_counter() - started) * 1000, 2)})

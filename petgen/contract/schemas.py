"""JSON Schemas (2020-12) of every API resource: the one source of truth.

The build's output is validated against them in the tests; the OpenAPI document is generated
from them.
"""

from __future__ import annotations

from typing import Any

from petgen.contract import limits as L
from petgen.contract.errors import ERROR_CODES
from petgen.contract.events import EVENT_TYPES, MAX_URL, SUBSCRIBER_URL

OPENAPI_VERSION = "1.0.0"  # the API's version: info.version of the OpenAPI document, api_version in site.yml

SLUG = {"type": "string", "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$"}
DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "format": "date"}
URL = {"type": "string", "format": "uri", "pattern": "^https?://"}
TEXT = {"type": "string", "minLength": 1}
TEXTS = {"type": "array", "items": TEXT}


LICENSE = {
    "license": {"type": "string", "minLength": 1, "description": "The license label, `CC BY 4.0`.", "examples": ["CC BY 4.0"]},
    "licenseUrl": {**URL, "description": "The license text."},
}


def _object(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """An object schema; `required` lists what clients may rely on (default: every property).

    Resources name their `required` fields deliberately: what the contract promises (its Required
    column, or every field of a table without one) plus `license`, which the contract says every
    entry and response carries. Fields beyond that are documented and sent today, but optional, so
    the service may drop them without breaking a generated client. Tests check the build still
    sends every property (tests/petgen/test_openapi.py).
    """
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required, "additionalProperties": False,
            **extra}


# The facets (content/facets.yml): filterable on /api/names, in every Name and NameSummary.
FACET_PROPERTIES: dict[str, Any] = {
    "relationship": {"type": "array", "items": SLUG, "minItems": 1, "maxItems": 4,
                     "description": "for whom the name is used: partner, kind, freunde, familie"},
    "gender": {**SLUG, "description": "sie, ihn or alle: for whom the name is used"},
    "region": {"type": "array", "items": SLUG, "minItems": 1,
               "description": "ueberregional, or the regions where the name is at home"},
    "language": {**SLUG, "description": "the language a loanword comes from; deutsch for German names"},
}
FACET_VALUE = {"type": "object", "properties": {"slug": SLUG, "title": TEXT, "description": TEXT,
                                                "count": {"type": "integer", "minimum": 0}},
               "required": ["slug", "title", "description", "count"], "additionalProperties": False}

# Properties sent only where they apply (an alias category's facet, an entry's caution or genderNote).
SOMETIMES = frozenset({"facet", "genderNote", "caution"})

# The contract's Category table (CategorySummary is a Category without its names)
CATEGORY_REQUIRED = ["slug", "title", "description", "emoji", "moods", "url"]

DEFS: dict[str, dict[str, Any]] = {
    "FaqItem": _object({"question": TEXT, "answer": TEXT}),
    "Name": _object({
        "slug": SLUG, "title": TEXT,
        "pronunciation": {**TEXT, "description": "German respelling, stressed syllable in capitals"},
        "ipa": {**TEXT, "description": "IPA transcription without slashes"},
        "meaning": TEXT,
        "origin": {**TEXT, "description": "Markdown: etymology and cultural origin"},
        "usage": {**TEXT, "description": "Markdown: who uses it for whom, register, pitfalls"},
        "examples": {**TEXTS, "minItems": 4, "maxItems": 4},
        "variants": TEXTS,
        "categories": {"type": "array", "items": SLUG, "minItems": 1, "maxItems": 4},
        "moods": {"type": "array", "items": SLUG, "minItems": 1, "maxItems": 4},
        **FACET_PROPERTIES,
        "genderNote": {**TEXT, "description": "why the gender differs from a related entry's (only then)"},
        "caution": {**TEXT, "description": "when not to use a name that can hurt or embarrass (only then)"},
        "originCertainty": {"enum": ["belegt", "vermutet", "unbekannt"],
                            "description": "how well the origin is documented"},
        "keywords": TEXTS,
        "related": {"type": "array", "items": SLUG, "description": "slugs of related entries"},
        "faq": {"type": "array", "items": {"$ref": "#/$defs/FaqItem"}, "minItems": 2, "maxItems": 3},
        "datePublished": DATE, "lastReviewed": DATE,
        "url": {**URL, "description": "the entry's human page"},
        **LICENSE,
    }, ["slug", "title", "meaning", "license"]),
    "NameSummary": _object({
        "slug": SLUG, "title": TEXT, "meaning": TEXT,
        "categories": {"type": "array", "items": SLUG}, "moods": {"type": "array", "items": SLUG},
        **FACET_PROPERTIES, "url": URL,
    }, ["slug", "title", "meaning", "categories", "url"]),
    "NameList": _object({
        "items": {"type": "array", "items": {"$ref": "#/$defs/NameSummary"}, "maxItems": L.NAMES_MAX_LIMIT},
        "total": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": L.NAMES_MAX_LIMIT},
        "offset": {"type": "integer", "minimum": 0},
        "nextUrl": {"oneOf": [URL, {"type": "null"}], "description": "absolute URL of the next page, or null"},
        **LICENSE,
    }, ["items", "total", "limit", "offset", "nextUrl", "license"]),
    "CategorySummary": _object({
        "slug": SLUG, "title": TEXT, "emoji": TEXT, "description": TEXT,
        "moods": {"type": "array", "items": SLUG, "description": "moods typical of this category"},
        "count": {"type": "integer", "minimum": 0}, "url": URL,
        "facet": {"type": "object", "properties": {"name": SLUG, "value": {"type": "string", "minLength": 1}},
                  "required": ["name", "value"], "additionalProperties": False,
                  "description": "only on an alias category (kept for published URLs): the facet value it stands "
                                 "for; `region` `*` means any region but ueberregional"},
    }, CATEGORY_REQUIRED),
    "Mood": _object({"slug": SLUG, "title": TEXT, "description": TEXT}),
    "CategoryList": _object({
        "items": {"type": "array", "items": {"$ref": "#/$defs/CategorySummary"}},
        "total": {"type": "integer", "minimum": 0},
        "moods": {"type": "array", "items": {"$ref": "#/$defs/Mood"}},
        "facets": {"type": "object", "description": "each facet's vocabulary, with the number of names per value",
                   "additionalProperties": {"type": "array", "items": FACET_VALUE}},
        **LICENSE,
    }, ["items", "total", "license"]),
    "Status": _object({
        "status": {"enum": ["ok", "degraded", "down"],
                   "description": "ok; degraded: serving, but a check in `checks` fails; down: nothing to serve (503)"},
        "timestamp": {"type": "string", "format": "date-time", "description": "now (the runtime's clock)"},
        "version": TEXT,
        "names": {"type": "integer", "minimum": 0, "description": "number of entries"},
        "categories": {"type": "integer", "minimum": 0, "description": "number of categories"},
        "moods": {"type": "integer", "minimum": 0, "description": "number of moods"},
        "facets": {"type": "object", "description": "names per value of each facet",
                   "additionalProperties": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}},
        "service": TEXT, "site": SLUG,
        "contentHash": {"type": "string", "description": "hash of the content the loaded dist was built from"},
        "checks": {"type": "object", "description": "each check of the runtime: `ok`, or `fail` with a detail",
                   "additionalProperties": {"$ref": "#/$defs/Check"}},
        **LICENSE,
    }, ["status", "timestamp", "version", "names", "categories", "license"]),
    "Check": _object({"status": {"enum": ["ok", "fail"]}, "detail": TEXT}, ["status"]),
    "Error": _object({
        "error": _object({
            "code": {"enum": [e.code for e in ERROR_CODES],
                     "description": "; ".join(f"`{e.code}` ({e.status}): {e.when}" for e in ERROR_CODES)},
            "message": TEXT, "hint": TEXT,
            "docs": {**URL, "description": "the code's documentation (absolute URI)"},
        }, ["code", "message"]),
        **LICENSE,
    }, ["error"]),
}
SCORE = {"type": "number", "minimum": 0, "maximum": 1,
         "description": "confidence from 0 to 1, the same scale for every query (README: Search)"}
DEFS["SearchHit"] = _object({"slug": SLUG, "title": TEXT, "meaning": TEXT, "url": URL, "score": SCORE})
DEFS["SearchResults"] = _object({
    "query": TEXT,
    "items": {"type": "array", "items": {"$ref": "#/$defs/SearchHit"}, "maxItems": L.SEARCH_MAX_LIMIT},
    "total": {"type": "integer", "minimum": 0, "description": "all matches, not just this page"},
    "limit": {"type": "integer", "minimum": 1, "maximum": L.SEARCH_MAX_LIMIT},
    "suggestions": {"type": "array", "items": {"$ref": "#/$defs/SearchHit"}, "maxItems": 5,
                    "description": "only when nothing matched: the titles nearest to the query (did you mean)"},
    **LICENSE,
}, ["query", "items", "total", "license"])
_ONE_OR_MORE = {"oneOf": [SLUG, {"type": "array", "items": SLUG, "minItems": 2}]}
DEFS["AskUnderstood"] = _object({
    **{facet: {**_ONE_OR_MORE, "description": f"the {facet} asked for (a list: any of them)"}
       for facet in ("relationship", "gender", "region", "language", "category", "mood")},
    "letter": {"oneOf": [{"type": "string", "pattern": "^[a-z]$"},
                         {"type": "array", "items": {"type": "string", "pattern": "^[a-z]$"}, "minItems": 2}],
               "description": "the A–Z letter the names start with (umlauts as base letters, as on /a-z/; a list: any)"},
    "length": {"enum": ["einsilbig", "kurz", "lang"],
               "description": "how long the names are: one syllable; one word of at most two syllables and seven "
               "letters; several words, four syllables or eleven letters"},
    "define": {**TEXT, "description": "the name asked about (\"Was bedeutet X?\"), folded"},
    "equivalents": {**TEXT, "description": "the name asked for in `language` (\"Schatz auf Englisch\"), as written: "
                    "the result is that language's corresponding names"},
    "words": {"type": "array", "items": TEXT, "description": "the words searched for (folded, first of each group)"},
    "not": {"type": "array", "items": TEXT, "minItems": 1,
            "description": "what the answer leaves out (\"ohne Tiere\", \"nicht Schatz\"): category, mood or facet "
            "slugs, or words (the names whose titles contain them)"},
}, [], description="What the question was read as; only what was found is present.")
RELAXABLE = ["and", "length", "mood", "category", "language", "region", "gender", "relationship", "letter", "not", "words"]
DEFS["AskMeta"] = _object({
    "response_type": {"const": "Answer"}, "version": TEXT, "site": SLUG, "query": TEXT,
    "result_count": {"type": "integer", "minimum": 0},
    "understood": {"$ref": "#/$defs/AskUnderstood"},
    "ignored": {"type": "array", "items": TEXT,
                "description": "words of the question that played no part: filler, one or two letters, no match"},
    "relaxed": {"type": "array", "items": {"enum": RELAXABLE},
                "description": "filters dropped, in this order, because fewer than `limit` entries met them all; "
                               "`words` last: some results match none of the question's words, only its intents"},
    "hint": {**TEXT, "description": "only with an empty result: how to ask so that there is an answer"},
    "did_you_mean": {"type": "array", "items": TEXT, "maxItems": 5,
                     "description": "only with an empty result: titles near the question's words"},
    **LICENSE,
}, ["response_type", "version", "site", "query", "result_count", "license"])
DEFS["AskResult"] = _object({
    "@type": {"const": "DefinedTerm"}, "name": TEXT, "url": URL, "description": TEXT,
    "score": SCORE, "citation": TEXT, "slug": SLUG,
    "relaxed": {"type": "array", "items": {"enum": RELAXABLE[1:]}, "minItems": 1,
                "description": "only on an entry that does not meet every filter: the filters of `_meta.relaxed` it "
                               "does not meet (it fills up a list the entries meeting them all leave short)"},
}, ["@type", "name", "url", "description", "score", "citation"])
DEFS["AskResponse"] = _object({
    "_meta": {"$ref": "#/$defs/AskMeta"},
    "result": {"type": "array", "items": {"$ref": "#/$defs/AskResult"}, "maxItems": L.ASK_MAX_LIMIT},
})
DEFS["Category"] = _object(
    {**DEFS["CategorySummary"]["properties"],
     "names": {"type": "array", "items": {"$ref": "#/$defs/NameSummary"}},
     **LICENSE},
    [*CATEGORY_REQUIRED, "names", "license"],
)


# Webhooks (beta): the subscription resources of /webhooks and the bodies of the three events.
WHEN = {"type": "string", "format": "date-time", "description": "ISO 8601, UTC"}
EVENT_LIST = {"type": "array", "items": {"enum": list(EVENT_TYPES)}, "minItems": 1, "uniqueItems": True,
              "description": "the event types delivered to this subscription"}
SUBSCRIPTION = {
    "id": {"type": "string", "pattern": "^wh_[a-z2-7]{16}$", "description": "the subscription's id"},
    "url": {"type": "string", "format": "uri", "pattern": "^https?://", "maxLength": MAX_URL,
            "description": "where events are POSTed (https; plain http to loopback only in development)"},
    "events": EVENT_LIST,
    "description": {"type": "string", "maxLength": 200},
    "status": {"enum": ["active", "disabled"], "description": "disabled: the endpoint answered 410 Gone"},
    "created": WHEN,
    "disabledReason": TEXT,
    "secret": {"type": "string", "pattern": "^whsec_[A-Za-z0-9+/=]+$",
               "description": "the signing secret; only in the answers that make it (subscribe, rotate)"},
    "previousSecretExpires": {**WHEN, "description": "after a rotation: until then deliveries are signed with the "
                                                     "previous secret too"},
}
DEFS["Subscription"] = _object({**SUBSCRIPTION, **LICENSE}, ["id", "url", "events", "description", "status",
                                                             "created"])
DEFS["SubscriptionList"] = _object({
    "items": {"type": "array", "items": {"$ref": "#/$defs/Subscription"}},
    "total": {"type": "integer", "minimum": 0},
    **LICENSE,
}, ["items", "total", "license"])
DEFS["SubscriptionRequest"] = _object({
    "url": {"type": "string", "format": "uri", "pattern": SUBSCRIBER_URL, "maxLength": MAX_URL,
            "description": "your endpoint: https and a host name whose addresses are all public"},
    "events": {**EVENT_LIST, "description": "the event types to receive (default: all)"},
    "description": {"type": "string", "maxLength": 200, "description": "a note for yourself"},
}, ["url"])
CHANGES = {"type": "array", "items": TEXT,
           "description": "changed field paths such as `meaning`, `faq[1].answer`, `variants[0]`"}
NAME_SLUGS = {"type": "array", "items": SLUG}
DEFS["EntryPublishedData"] = _object({
    "slug": SLUG, "title": TEXT, "url": URL, "datePublished": DATE, "lastReviewed": DATE, "categories": NAME_SLUGS})
DEFS["EntryUpdatedData"] = _object({"slug": SLUG, "title": TEXT, "url": URL, "lastReviewed": DATE,
                                    "changes": CHANGES})
DEFS["CategoryUpdatedData"] = _object({
    "slug": SLUG, "title": TEXT, "url": URL,
    "action": {"enum": ["created", "edited", "deleted"]},
    "changes": {**CHANGES, "description": "the category's own fields that changed (`title`, `moods[1]` …); all of "
                                          "them when created, none when only its names changed"},
    "added": {**NAME_SLUGS, "description": "names that joined the category"},
    "removed": {**NAME_SLUGS, "description": "names that left it (moved, or no longer published)"},
})
for _type, _data in (("entry.published", "EntryPublishedData"), ("entry.updated", "EntryUpdatedData"),
                     ("category.updated", "CategoryUpdatedData")):
    DEFS[_data.removesuffix("Data") + "Event"] = _object({
        "id": {"type": "string", "pattern": "^evt_[0-9a-z_]+$",
               "description": "the event's id: the same for every attempt and every replica; deduplicate by it"},
        "type": {"const": _type},
        "created": {**WHEN, "description": "when the change was derived"},
        "data": {"$ref": f"#/$defs/{_data}"},
    }, description=EVENT_TYPES[_type])


def referenced(name: str) -> dict[str, dict[str, Any]]:
    """The definition `name` and every definition it references, transitively."""
    found: dict[str, dict[str, Any]] = {}
    pending = [name]
    while pending:
        current = pending.pop()
        if current in found:
            continue
        found[current] = DEFS[current]
        text = str(DEFS[current])
        pending += [ref.split("'")[0] for ref in text.split("#/$defs/")[1:]]
    return found


def schema_for(name: str) -> dict[str, Any]:
    """A standalone schema document for one resource."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": DEFS, "$ref": f"#/$defs/{name}"}

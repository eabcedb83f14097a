"""Query-string parsing shared by the GET endpoints that take parameters: strict and explained.

Unknown or repeated parameters are errors (a typo such as `catgory` must not silently answer the
unfiltered list), so are bytes that do not decode as UTF-8 (`%FF` was searched for as `�`), and
numbers are plain ASCII digits only: Python's `int()` would also take `+5`, ` 5`, `5_0` and `٥`
(Arabic-Indic five), which no other implementation of the contract would accept.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.requests import ClientDisconnect

from petgen.content.nearest import closest

DIGITS = re.compile(r"[0-9]+")


class BadRequest(Exception):
    """A parameter is missing or invalid: `message` says what, `hint` how to fix it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def query_params(query_string: str, allowed: tuple[str, ...]) -> dict[str, str]:
    """The parameters of a query string, each at most once and each one of `allowed`."""
    seen: dict[str, str] = {}
    try:
        pairs = parse_qsl(query_string, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise BadRequest("The query string is not valid UTF-8 once percent-decoded.",
                         "percent-encode text as UTF-8, e.g. q=b%C3%A4rchen") from None
    for name, value in pairs:
        if name not in allowed:
            match = closest(name, allowed)
            raise BadRequest(f"Unknown parameter '{shown(name)}'.", f"did you mean '{match}'?" if match else
                             f"allowed parameters: {', '.join(allowed)}")
        if name in seen:
            raise BadRequest(f"Parameter '{name}' is given more than once.", f"send '{name}' once")
        seen[name] = value
    return seen


def whole_number(name: str, raw: str, low: int, high: int, example: int) -> int:
    """`raw` as an integer from `low` to `high`, written as plain ASCII digits."""
    bounds = f"from {low} to {high}"
    if not DIGITS.fullmatch(raw):
        raise BadRequest(f"'{name}' must be a whole number {bounds} (digits 0-9 only), not '{shown(raw)}'.",
                         f"for example {name}={example}")
    digits = raw.lstrip("0") or "0"  # leading zeros do not make a number larger
    value = int(digits) if len(digits) <= 18 else high + 1  # no need to convert a thousand digits to know
    if not low <= value <= high:
        raise BadRequest(f"'{name}' must be {bounds}, not {shown(digits)}.",
                         f"use {name}={max(low, min(value, high))}")
    return value


def shown(text: str, width: int = 40) -> str:
    """Client text quoted back in a message: bounded, so an error never echoes a megabyte."""
    return text if len(text) <= width else text[:width - 1] + "…"


class BadBody(Exception):
    """A request body that is not a JSON object: `status` (415 or 400), `message`, `hint` (with `example`)."""

    def __init__(self, status: int, message: str, hint: str) -> None:
        super().__init__(message)
        self.status, self.message, self.hint = status, message, hint


def json_object(body: bytes, content_type: str, example: str) -> dict[str, Any]:
    """The JSON object a POST body holds, sent as `application/json` in UTF-8 (RFC 8259: JSON exchanged between
    systems is UTF-8; a `charset` naming anything else is refused rather than misread); `example` goes in the hint."""
    media, _, parameters = content_type.partition(";")
    if media.strip().lower() != "application/json":
        raise BadBody(415, f"Content-Type must be application/json, not '{shown(media.strip()) or 'missing'}'.",
                      f"send a JSON body such as {example}")
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        charset = value.strip().strip('"').lower()
        if name.strip().lower() == "charset" and charset not in ("utf-8", "utf8"):
            raise BadBody(415, f"JSON is sent in UTF-8, not '{shown(charset)}'.",
                          "encode the body as UTF-8 and send Content-Type: application/json")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            raise BadBody(400, "The body is not UTF-8, which JSON is sent in.", "encode the body as UTF-8") from None
        raise BadBody(400, f"The body is not valid JSON ({exc}).", f"send {example}") from None
    if not isinstance(data, dict):
        raise BadBody(400, "The body must be a JSON object.", f"send {example}")
    return data


async def read_body(receive: Any) -> bytes:
    """The whole request body from ASGI `receive` (its size and time are bounded by runtime/http/guard.py, which
    raises Starlette's ClientDisconnect itself when it stops short)."""
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


def header_map(raw: list[tuple[bytes, bytes]], names: frozenset[bytes], *, first: bool = True) -> dict[str, str]:
    """The request headers named in `names` (lowercase), decoded as Latin-1, without decoding the others; of a
    header sent twice, the first (as Starlette's `Headers.get`) or, with `first=False`, the last."""
    found: dict[str, str] = {}
    for name, value in raw:
        if name in names and (not first or name.decode("latin-1") not in found):
            found[name.decode("latin-1")] = value.decode("latin-1")
    return found

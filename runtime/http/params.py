"""Query-string parsing shared by the GET endpoints that take parameters: strict and explained.

Unknown or repeated parameters are errors (a typo such as `catgory` must not silently answer the
unfiltered list), so are bytes that do not decode as UTF-8 and control characters (`%FF`, `%00` were
searched for as `�` and as two characters), and numbers are plain ASCII digits only: Python's `int()`
would also take `+5`, ` 5`, `5_0` and `٥` (Arabic-Indic five), which no other implementation of the
contract would accept.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from petgen.content.model import closest

DIGITS = re.compile(r"[0-9]+")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # C0 and C1, but tab and line breaks (whitespace)


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
        if CONTROL.search(value) or CONTROL.search(name):
            raise BadRequest(f"Parameter '{shown(name)}' contains control characters (such as %00).",
                             "send printable text")
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

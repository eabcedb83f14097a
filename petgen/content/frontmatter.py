"""A fast reader for the plain front matter every entry is written in, with the line of every key.

`model.parse_yaml` (PyYAML's C parser, every node composed in Python, checked for anchors, depth and
duplicate keys) costs more per entry than anything else the parse workers do. Entries are written in a
small, regular part of YAML: `key: value` lines, flow lists `[a, b]`, block lists of text (`  - "…"`) and
of question/answer mappings (`  - question: …` / `    answer: …`). `PlainReader.read` reads exactly that part,
line by line, and returns what `parse_yaml` would, with the same line map (`key`, `key[i]`,
`key[i].sub`), or None the moment a line is anything else: a comment, a blank line, a block scalar, a
continued line, an escape, an anchor, a value YAML would read as a number, date-less boolean or null, a
duplicate key. The caller then parses the text with `parse_yaml`, which finds and reports what is wrong,
so every error message and line stays as before: this is only a shortcut for text that has none.
`split_front_matter` cuts an entry file into its front matter and its body.
"""

from __future__ import annotations

import re
from sys import intern
from typing import Any

# What starts something other than plain text in YAML (an indicator), as the first character of a value.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_SPECIAL = re.compile(r"[\[\]{}#:`]")  # inside a flow list: only plain items separated by commas


MEMO_SIZE = 4096  # values `PlainReader` remembers whether YAML reads as text (then it starts again)


class _NotPlain(Exception):
    """The text uses more of YAML than `PlainReader` reads."""


def _pair(text: str) -> tuple[str, str] | None:
    """`key: value` (a key of ASCII letters, digits and `_`, not starting with a digit) as (key, value)."""
    key, colon, value = text.partition(":")
    if colon and value[:1] == " " and key.isascii() and key.isidentifier():
        return key, value[1:]
    return None


class PlainReader:
    """Reads the plain part of YAML described above, given the loader's implicit resolvers (a plain value
    any of them matches is not text: a number, a boolean, null, …)."""

    def __init__(self, resolvers: dict[Any, list]) -> None:
        anywhere = [pattern for _, pattern in resolvers.get(None, [])]
        self.patterns: dict[str, tuple[re.Pattern[str], ...]] = {
            first: tuple([pattern for _, pattern in found] + anywhere)
            for first, found in resolvers.items() if first is not None}
        self.anywhere = tuple(anywhere)
        self.known: dict[str, bool] = {}  # short values seen, and whether one resolves: keys and slugs recur


    def read(self, text: str, first_line: int) -> tuple[dict[str, Any], dict[str, int]] | None:
        """The mapping of `text` and the line of each key and item (the text's first line numbered
        `first_line`), or None if the text is not written in the plain part of YAML."""
        if not text.replace("\n", " ").isprintable():  # control characters, odd spaces, line breaks: the parser's
            return None
        try:
            return self._read(text.split("\n"), first_line)
        except _NotPlain:
            return None

    def _read(self, rows: list[str], first_line: int) -> tuple[dict[str, Any], dict[str, int]]:
        # The keys of the line map are interned: the same few dozen recur in every entry, and pickled once per
        # chunk of entries (pickle refers back to a string it has written), the entries pickle and load faster.
        data: dict[str, Any] = {}
        lines: dict[str, int] = {}
        scalar, resolves = self._scalar, self._resolves
        n, count = 0, len(rows)
        while n < count:
            key, colon, value = rows[n].partition(":")  # `key: value`, or `key:` alone, the key as `_pair` takes it
            if not colon or (value and value[0] != " ") or not key.isascii() or not key.isidentifier():
                raise _NotPlain
            value = value[1:] if value else None
            if key in data or resolves(key):
                raise _NotPlain
            line = first_line + n
            lines[intern(key)] = line
            n += 1
            if value is not None:
                if value[:1] == "[":
                    items = data[key] = self._flow_list(value)
                    for i in range(len(items)):
                        lines[intern(f"{key}[{i}]")] = line
                else:
                    data[key] = scalar(value)
                continue
            items = []
            while n < count and rows[n][:2] == "  ":
                row = rows[n]
                if row[:4] != "  - ":
                    raise _NotPlain
                pair = _pair(row[4:])
                if pair is None:
                    lines[intern(f"{key}[{len(items)}]")] = first_line + n
                    items.append(scalar(row[4:]))
                    n += 1
                    continue
                mapping: dict[str, str] = {}
                at = intern(f"{key}[{len(items)}]")
                lines[at] = first_line + n
                while pair is not None:
                    sub, value = pair
                    if sub in mapping or resolves(sub):
                        raise _NotPlain
                    mapping[sub] = scalar(value)
                    lines[intern(f"{at}.{sub}")] = first_line + n
                    n += 1
                    pair = _pair(rows[n][4:]) if n < count and rows[n][:4] == "    " else None
                items.append(mapping)
            if not items:
                raise _NotPlain  # `key:` alone is null
            data[key] = items
        if not data:
            raise _NotPlain
        return data, lines

    def _resolves(self, value: str) -> bool:
        """Whether YAML would read this plain value as something other than text (as `Resolver.resolve`)."""
        patterns = self.patterns.get(value[:1], self.anywhere)
        if not patterns:  # the common case: no resolver for this first character
            return False
        found = self.known.get(value)
        if found is None:
            found = any(pattern.match(value) for pattern in patterns)
            if len(value) <= 40:
                if len(self.known) >= MEMO_SIZE:
                    self.known.clear()
                self.known[value] = found
        return found

    def _scalar(self, value: str) -> str:
        """A value on one line: plain text, or text in double or single quotes without escapes."""
        if not value or "\t" in value:
            raise _NotPlain
        first = value[0]
        if first == '"' or first == "'":
            if len(value) < 2 or value[-1] != first or first in value[1:-1] or "\\" in value:
                raise _NotPlain
            return value[1:-1]
        if (first in _INDICATORS or first == " " or value[-1] == " " or value[-1] == ":" or ": " in value
                or " #" in value or self._resolves(value)):
            raise _NotPlain
        return value

    def _flow_list(self, value: str) -> list[str]:
        """`[a, b, c]` of plain text items on one line."""
        if value[-1] != "]":
            raise _NotPlain
        inner = value[1:-1]
        if not inner:
            return []
        if _FLOW_SPECIAL.search(inner) or "\t" in inner:
            raise _NotPlain
        items = [item.strip(" ") for item in inner.split(",")]
        for item in items:
            if not item or item[0] in _INDICATORS or self._resolves(item):
                raise _NotPlain
        return items


def split_front_matter(text: str) -> tuple[str, str, int] | None:
    """Split `---\\nYAML\\n---\\nbody` into (yaml, body, first line of body), or None."""
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 2
    return None

"""A fast reader for the plain front matter every entry is written in, with the line of every key.

`model.parse_yaml` (PyYAML's C parser, every node composed in Python, checked for anchors, depth and
duplicate keys) costs more per entry than anything else the parse workers do. Entries are written in a
small, regular part of YAML: `key: value` lines, flow lists `[a, b]`, block lists of text (`  - "…"`) and
of question/answer mappings (`  - question: …` / `    answer: …`). `PlainReader.read` reads exactly that part,
line by line (the values not in quotes checked together at the end), and returns what `parse_yaml` would, with the same line map (`key`, `key[i]`,
`key[i].sub`), or None the moment a line is anything else: a comment, a blank line, a block scalar, a
continued line, an escape, an anchor, a value YAML would read as a number, date-less boolean or null, a
duplicate key. The caller then parses the text with `parse_yaml`, which finds and reports what is wrong,
so every error message and line stays as before: this is only a shortcut for text that has none.
`split_front_matter` cuts an entry file into its front matter and its body.
"""

from __future__ import annotations

import re
from operator import itemgetter
from sys import intern
from typing import Any

# What starts something other than plain text in YAML (an indicator), as the first character of a value.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_SPECIAL = re.compile(r"[\[\]{}#:`]")  # inside a flow list: only plain items separated by commas
_NOT_FIRST = _INDICATORS | {" "}  # what a plain value must not start with


MEMO_SIZE = 4096  # values (and keys) `PlainReader` remembers whether YAML reads as text (then it starts again)


class _NotPlain(Exception):
    """The text uses more of YAML than `PlainReader` reads."""


class PlainReader:
    """Reads the plain part of YAML described above, given the loader's implicit resolvers (a plain value
    any of them matches is not text: a number, a boolean, null, …)."""

    def __init__(self, resolvers: dict[Any, list]) -> None:
        anywhere = [pattern for _, pattern in resolvers.get(None, [])]
        # For each first character, its resolvers' patterns as one (a match of one is a match of any: one call)
        self.patterns: dict[str, re.Pattern[str] | None] = {
            first: _either([pattern for _, pattern in found] + anywhere)
            for first, found in resolvers.items() if first is not None}
        self.anywhere = _either(anywhere)
        self.firsts = frozenset(self.patterns)  # the first characters a resolver is tried for (and `anywhere`)
        self.known: dict[str, bool] = {}  # short values seen, and whether one resolves: keys and slugs recur
        # Keys seen that are plain text (interned), and the names of their items in the line map (`key[0]`, …):
        # the same few dozen recur in every entry, so each is checked and made once.
        self.keys: dict[str, str] = {}
        self.items: dict[str, list[str]] = {}

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
        # The common cases are written out in the loop (the memos of `_key` and `_item_names` looked up here): a
        # function call or two per line cost a tenth of the reading.
        data: dict[str, Any] = {}
        lines: dict[str, int] = {}
        plain: list[str] = []  # the values not in quotes, checked all at once at the end (`_check_plain`)
        keys, key_of, names_of, item_names = self.keys, self._key, self.items, self._item_names
        n, count = 0, len(rows)
        while n < count:
            key, colon, value = rows[n].partition(":")  # `key: value`, or `key:` alone
            if not colon or (value and value[0] != " ") or key in data:
                raise _NotPlain
            key = keys.get(key) or key_of(key)
            line = first_line + n
            lines[key] = line
            n += 1
            if value:
                value = value[1:]
                first = value[:1]
                if first == "[":  # `[a, b, c]` on one line, each item still to be checked as plain text
                    if value[-1] != "]":
                        raise _NotPlain
                    inner = value[1:-1]
                    if not inner:
                        data[key] = []
                        continue
                    if _FLOW_SPECIAL.search(inner):
                        raise _NotPlain
                    items = data[key] = [item.strip(" ") for item in inner.split(",")]
                    plain += items
                    names = names_of.get(key)
                    if names is None or len(names) < len(items):
                        names = item_names(key, len(items))
                    lines.update(dict.fromkeys(names[:len(items)], line))
                elif first == '"' or first == "'":
                    data[key] = _quoted(value)
                else:
                    data[key] = value
                    plain.append(value)
                continue
            items = []
            names = names_of.get(key) or item_names(key, 1)
            while n < count:
                row = rows[n]
                if row[:4] != "  - ":
                    if row[:2] == "  ":
                        raise _NotPlain
                    break
                if len(names) <= len(items):
                    names = item_names(key, len(items) + 1)
                at = names[len(items)]
                lines[at] = first_line + n
                text = row[4:]
                # `sub: value` (a key of ASCII letters, digits and `_`, not starting with a digit) starts a mapping
                sub, colon, value = text.partition(":")
                if not colon or value[:1] != " " or not sub.isascii() or not sub.isidentifier():
                    first = text[:1]
                    if first == '"' or first == "'":
                        text = _quoted(text)
                    else:
                        plain.append(text)
                    items.append(text)
                    n += 1
                    continue
                mapping: dict[str, str] = {}
                while True:
                    if sub in mapping:
                        raise _NotPlain
                    sub = keys.get(sub) or key_of(sub)
                    value = value[1:]
                    first = value[:1]
                    if first == '"' or first == "'":
                        value = _quoted(value)
                    else:
                        plain.append(value)
                    mapping[sub] = value
                    lines[intern(f"{at}.{sub}")] = first_line + n
                    n += 1
                    if n >= count or rows[n][:4] != "    ":
                        break
                    sub, colon, value = rows[n][4:].partition(":")
                    if not colon or value[:1] != " " or not sub.isascii() or not sub.isidentifier():
                        break
                items.append(mapping)
            if not items:
                raise _NotPlain  # `key:` alone is null
            data[key] = items
        if not data:
            raise _NotPlain
        if plain:
            self._check_plain(plain)
        return data, lines

    def _check_plain(self, values: list[str]) -> None:
        """Raise `_NotPlain` unless YAML reads each value as the text it is (the values of a text without tabs):
        not empty, not starting with an indicator or a space, not ending with a space or colon, without `: `
        or ` #`, not resolved to another type (a number, a boolean, null, …)."""
        joined = "\n".join(values)
        if ": " in joined or " #" in joined or " \n" in joined or ":\n" in joined or joined.endswith((" ", ":")):
            raise _NotPlain
        if not all(values):  # an empty value is null
            raise _NotPlain
        firsts = set(map(itemgetter(0), values))
        if not firsts.isdisjoint(_NOT_FIRST):
            raise _NotPlain
        if self.anywhere is not None:
            if any(map(self._resolves, values)):
                raise _NotPlain
        elif not firsts.isdisjoint(self.firsts):  # only values starting with one of these can resolve
            tried = firsts & self.firsts
            if any(map(self._resolves, [value for value in values if value[0] in tried])):
                raise _NotPlain

    def _key(self, key: str) -> str:
        """`key` interned, if it is a plain key: ASCII letters, digits and `_`, not starting with a digit, not
        read as anything but text."""
        known = self.keys.get(key)
        if known is not None:
            return known
        if not key.isascii() or not key.isidentifier() or self._resolves(key):
            raise _NotPlain
        if len(self.keys) >= MEMO_SIZE:
            self.keys.clear()
            self.items.clear()
        known = self.keys[key] = intern(key)
        return known

    def _item_names(self, key: str, count: int) -> list[str]:
        """The names of (at least) the first `count` items of list `key` in the line map (`key[0]`, …), interned."""
        names = self.items.get(key)
        if names is None:
            names = self.items[key] = []
        while len(names) < count:
            names.append(intern(f"{key}[{len(names)}]"))
        return names

    def _resolves(self, value: str) -> bool:
        """Whether YAML would read this plain value as something other than text (as `Resolver.resolve`)."""
        pattern = self.patterns.get(value[:1], self.anywhere)
        if pattern is None:  # the common case: no resolver for this first character
            return False
        found = self.known.get(value)
        if found is None:
            found = pattern.match(value) is not None
            if len(value) <= 40:
                if len(self.known) >= MEMO_SIZE:
                    self.known.clear()
                self.known[value] = found
        return found


def _either(patterns: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One pattern that matches where any of `patterns` (a resolver's: without backreferences or global inline
    flags) matches, each with its flags (a verbose one's comment ends at the line break put after it); None if
    there are none."""
    if len(patterns) < 2:
        return patterns[0] if patterns else None
    scoped = []
    for pattern in patterns:
        letters = "".join(letter for flag, letter in _SCOPED_FLAGS if pattern.flags & flag)
        scoped.append(f"(?{letters}:{pattern.pattern}{chr(10) if pattern.flags & re.VERBOSE else ''})")
    return re.compile("|".join(scoped))


_SCOPED_FLAGS = ((re.ASCII, "a"), (re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))


def _quoted(value: str) -> str:
    """The text of a value in double or single quotes without escapes (of more than the quotes)."""
    first = value[0]
    if len(value) < 2 or value[-1] != first or first in value[1:-1] or "\\" in value:
        raise _NotPlain
    return value[1:-1]


def split_front_matter(text: str) -> tuple[str, str, int] | None:
    """Split `---\\nYAML\\n---\\nbody` into (yaml, body, first line of body), or None."""
    text = text.lstrip("\ufeff")
    start, end = text.find("\n"), text.find("\n---")
    if 0 <= start <= end and text[:start].rstrip() == "---":  # the first line after it that starts with `---`
        after = text.find("\n", end + 1)
        if text[end + 1:after if after >= 0 else len(text)].rstrip() == "---":  # ends the front matter
            return text[start + 1:end], text[after + 1:] if after >= 0 else "", text.count("\n", 0, end) + 3
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 2
    return None

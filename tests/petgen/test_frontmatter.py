"""The fast front-matter reader gives exactly what PyYAML's reading gives, or steps aside."""

from __future__ import annotations

import random
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from petgen.content.frontmatter import PlainReader, _either
from petgen.content.model import ContentLoader, parse_yaml, split_front_matter
from petgen.content.problems import Problems
from petgen.content.synthetic import synthetic_entry

REPO = Path(__file__).resolve().parents[2]
# What changes how YAML reads a line: indicators, quotes, escapes, comments, numbers, booleans, odd spaces.
ALPHABET = list(" \t\n:-#[]{},'\"&*!|>%@`?~.0123456789aynNTfFoO=<\\\x01\u2028\u00a0\u00ad\ufeffä„")


def fronts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "content" / "names").glob("*.md"))[:120]]
    rng = random.Random(7)
    texts += [synthetic_entry(i, rng)[1] for i in range(60)]
    return [parts[0] for parts in map(split_front_matter, texts) if parts is not None]


def slow(front: str) -> tuple[object, dict[str, int], list]:
    problems = Problems()
    data, lines = parse_yaml(front, "x.md", problems, line_offset=1)
    return data, lines, problems.items


def test_plain_front_matter_is_read_as_pyyaml_reads_it() -> None:
    reader = PlainReader(ContentLoader.yaml_implicit_resolvers)
    found = fronts()
    assert len(found) >= 150
    for front in found:
        assert reader.read(front, first_line=2) == slow(front)[:2]


def test_anything_else_is_left_to_pyyaml() -> None:
    """Random edits of real front matter: whatever the fast reader reads, PyYAML reads the same way and
    without a problem; the rest (errors included) it leaves to PyYAML."""
    reader = PlainReader(ContentLoader.yaml_implicit_resolvers)
    rng = random.Random(17)
    found = fronts()
    read = left = 0
    for _ in range(4000):
        chars = list(rng.choice(found))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(chars))
            edit = rng.random()
            if edit < 0.4:
                chars.insert(at, rng.choice(ALPHABET))
            elif edit < 0.7:
                del chars[at]
            else:
                chars[at] = rng.choice(ALPHABET)
        front = "".join(chars)
        fast = reader.read(front, first_line=2)
        if fast is None:
            left += 1
            continue
        read += 1
        data, lines, problems = slow(front)
        assert problems == [] and fast == (data, lines), front
    assert read > 500 and left > 500  # both ways were taken


def test_special_values_are_left_to_pyyaml() -> None:
    reader = PlainReader(ContentLoader.yaml_implicit_resolvers)
    for value in ("yes", "No", "~", "null", "12", "0x1F", "1.5", "10:30", "- a", "'it''s'", '"a\\tb"', "a: b",
                  "a #c", "[1, 2]", "[a, yes]", "&x a", "*x", "!!str a", "|", ">", "a "):
        assert reader.read(f"title: {value}", first_line=2) is None, value
    assert reader.read("title: Bärchen\nmoods: [a, b]", first_line=2) == (
        {"title": "Bärchen", "moods": ["a", "b"]}, {"title": 2, "moods": 3, "moods[0]": 3, "moods[1]": 3})
    assert reader.read("title: a\ntitle: b", first_line=2) is None  # a duplicate key: PyYAML reports it


def _split_line_by_line(text: str) -> tuple[str, str, int] | None:
    """`split_front_matter` as it was written first: the lines split, the closing `---` looked for one by one."""
    lines = text.lstrip("\ufeff").split("\n")
    if lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:]), i + 2
    return None


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(["---", "--- ", "----", "---\r", "--", "a: b", "", " ---", "\ufeff---", "x---"]),
                max_size=8))
def test_front_matter_is_split_at_the_first_closing_line(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert split_front_matter(text) == _split_line_by_line(text)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET[:40] + ["e", "E", "x", "_", "b", "inf", ".nan", "<<", "yes", "null", "C"]),
                min_size=1, max_size=6).map("".join))
def test_a_first_characters_resolvers_are_tried_as_one_pattern(value: str) -> None:
    """`PlainReader` tries the resolvers of a value's first character as one pattern: it matches where one of them
    does (flags, verbose comments and all)."""
    reader = PlainReader(ContentLoader.yaml_implicit_resolvers)
    resolvers = ContentLoader.yaml_implicit_resolvers.get(value[:1], [])
    assert reader._resolves(value) == any(pattern.match(value) for _, pattern in resolvers)
    either = _either([re.compile("a b # not c", re.VERBOSE), re.compile("^C$", re.IGNORECASE)])
    assert either is not None
    assert (either.match(value) is not None) == bool(re.match("ab", value) or re.match("^C$", value, re.IGNORECASE))

"""`closest` (the "did you mean" of hints and 404s) answers as difflib's `get_close_matches` over the sorted choices,
only without comparing the word with every choice in Python."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from petgen.content.nearest import CLOSE_ENOUGH, closest
from petgen.content.text import slugify


def reference(word: str, choices: list[str] | set[str]) -> str | None:
    matches = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=CLOSE_ENOUGH)
    return matches[0] if matches else None


SLUG_LETTERS = "abcdeilmnorstuz-0123456789"  # few letters: many near matches, ties and ratios at the cutoff
slugs = st.text(alphabet=SLUG_LETTERS, min_size=1, max_size=14)


@settings(max_examples=400, deadline=None)
@given(word=st.text(alphabet=SLUG_LETTERS + "äöüß ", max_size=16), choices=st.lists(slugs, max_size=60))
def test_the_same_answer_as_difflib(word: str, choices: list[str]) -> None:
    assert closest(word, choices) == reference(word, choices)
    assert closest(word, set(choices)) == reference(word, choices)
    assert closest(word, dict.fromkeys(choices, "a value")) == reference(word, choices)  # a mapping: its keys
    assert closest(word, iter(choices)) == reference(word, choices)


def test_typos_of_many_names() -> None:
    names = [slugify(f"{first} {second}") for first in ("Bärchen", "Schatz", "Mausi", "Spatzl", "Hasi", "Engel")
             for second in ("klein", "groß", "süß", "mein", "lieb", "1", "22", "333")]
    names += [f"name-{i}" for i in range(2000)]
    words = ["baerchn", "schaz-klein", "mausi-gros", "spatz", "hase", "engel-lib", "x", "zzzz", "name-19999", "nam-7",
             "baerchen-kleinn", "name"]
    answers = [closest(word, names) for word in words]
    assert answers == [reference(word, names) for word in words]
    assert answers[0] is not None and answers[0].startswith("baerchen")  # the test's words do have matches
    assert answers[7] is None  # and some have none


def test_a_bound_at_the_cutoff_is_no_match() -> None:
    """rapidfuzz's bound reaches the cutoff where difflib's ratio does not (its matching blocks miss part of the
    longest common subsequence): no suggestion, as difflib."""
    for word, choice in (("acdba", "aadab"), ("acdeebc", "aebebdc"), ("bceaabe", "beade")):
        assert closest(word, [choice]) is None
        choices = [choice, word[::-1] + "zzzzzzzzzz"]
        assert closest(word, choices) == reference(word, choices)

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from petgen.content.model import Entry
from petgen.content.problems import Problems
from petgen.content.text import collation_key, letter_runs, slugify, word_count, word_runs
from petgen.content.validate import (
    _MARK_AND_SENTENCE_END,
    SENTENCE_END,
    _cut_sentences,
    _norms_of,
    check_entry_alone,
    entry_words,
    fold,
    fold_each,
    mentions,
    name_forms,
)
from petgen.search.index import document_terms


@pytest.mark.parametrize("title, slug", [
    ("Bärchen", "baerchen"), ("Honey Bunny", "honey-bunny"), ("Chérie", "cherie"), ("Süßmaus", "suessmaus"),
    ("Cariño", "carino"), ("  --Mon   Amour!! ", "mon-amour"), ("Schätzle", "schaetzle"), ("ÄÖÜ", "aeoeue"),
    ("Zwerg 7", "zwerg-7"), ("Straße", "strasse"),
    # letters Unicode does not decompose: Turkish dotless i, Polish ł, Danish ø
    ("Aşkım", "askim"), ("Canım", "canim"), ("Słoneczko", "sloneczko"), ("Søde", "sode"), ("İnci", "inci"),
])
def test_slug_rule(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_german_collation() -> None:
    titles = ["Zucker", "Öl", "Apfel", "Äffchen", "Übel", "ohr", "Ulme", "Bär", "Bar", "baer"]
    assert sorted(titles, key=collation_key) == ["Äffchen", "Apfel", "baer", "Bar", "Bär", "ohr", "Öl", "Übel",
                                                 "Ulme", "Zucker"]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=20))
def test_ascii_collation_is_the_general_rule(title: str) -> None:
    """An ASCII title's key (a shortcut) is what the rule for any title makes of it: with a trailing `ä` (which takes
    the general path) the key only gains its base letter."""
    assert collation_key(title + "ä") == (collation_key(title)[0] + "a", title + "ä")


PROSE = st.text(alphabet=st.sampled_from(list("abzÄäöüßİ²٣_-'.,;:!?„“”–…»«\x01\x00\t\n \xa0\x1c€Ab0\ud800")), max_size=60)


@settings(max_examples=3000, deadline=None)
@given(PROSE)
def test_word_runs_are_the_regular_expressions_words(text: str) -> None:
    """`word_runs` (punctuation blanked out, split at spaces) finds exactly what `\\w+` finds, and `letter_runs`
    what `[^\\W_]+` finds, with and without a character kept as a token of its own, and `word_count` what its
    expression counts, on any text."""
    assert word_runs(text) == re.findall(r"\w+", text)
    assert word_runs(text, "\x01") == re.findall(r"\w+|\x01", text)
    assert letter_runs(text) == re.findall(r"[^\W_]+", text)
    assert letter_runs(text, "\x00") == re.findall(r"[^\W_]+|\x00", text)
    assert word_count(text) == len(re.findall(r"\w+(?:[-']\w+)*", text))


@settings(max_examples=2000, deadline=None)
@given(st.lists(PROSE, min_size=1, max_size=5))
@example(["Bär_chen", "", "\u0308Ä x\x00", "Ä"])
def test_folding_many_texts_at_once_folds_each(texts: list[str]) -> None:
    """`fold_each` (the texts joined by a NUL between spaces, split into words at once) folds as `fold` each text."""
    assert fold_each(texts) == [fold(text) for text in texts]


@settings(max_examples=1000, deadline=None)
@given(st.lists(PROSE, min_size=1, max_size=4), st.lists(PROSE, max_size=4), PROSE, st.lists(PROSE, max_size=5))
@example(["Bär\x00", "Ä"], ["honey"], "Bär x", ["Bären", "ä"])
def test_an_entrys_words_are_found_once_for_its_checks_and_its_search_terms(
        names: list[str], keywords: list[str], meaning: str, examples: list[str]) -> None:
    """`entry_words` (the names, keywords, meaning and examples folded in one pass) gives the checks the names' keys
    and the examples `fold` gives, and the search the terms it finds on its own."""
    entry = Entry(slug="x", path="x.md", title=names[0], pronunciation="x", ipa="x", meaning=meaning,
                  variants=names[1:], categories=[], moods=[], keywords=keywords, examples=examples, related=[],
                  faq=[], datePublished="2026-01-01", lastReviewed="2026-01-01", origin="", usage="")
    found, problems = entry_words(entry), Problems()
    check_entry_alone(entry, problems, found)
    assert entry.name_keys == tuple(fold(name) for name in names)
    forms = name_forms(entry)
    assert [p.message for p in problems.items if p.message.startswith("example ")] == [
        f"example {i + 1} does not contain '{entry.title}' or one of its variants"
        for i, text in enumerate(examples) if not mentions(text, forms)]
    assert document_terms(entry.search_fields(), found) == document_terms(entry.search_fields())


@settings(max_examples=3000, deadline=None)
@given(st.lists(PROSE, min_size=1, max_size=5))
@example(["Im 18. Jahrhundert. Dann  kam ²2. Mal.\tEnde!  „Ja“ … Nein?\xa0Ä. _so_ *so*", "Ende. ", " Ä. B.C. D"])
def test_sentence_keys_of_all_texts_at_once_are_those_of_each(texts: list[str]) -> None:
    """The comparison keys of the sentences found in all of an entry's texts at once (NUL between them) are those
    of the sentences `SENTENCE_END` splits each text into, in order; a text holding a NUL is left to the caller."""
    assert _norms_of(["a", "b\x00c"]) is None
    texts = [text.replace("\x00", " ") for text in texts]
    assert [_cut_sentences(text) for text in texts] == [_MARK_AND_SENTENCE_END.sub("\x00", text) for text in texts]
    assert _norms_of(texts) == [" ".join(sentence.casefold().split()).rstrip(".!?… ")
                                for text in texts for sentence in SENTENCE_END.split(text)]

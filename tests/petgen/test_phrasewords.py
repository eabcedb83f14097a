"""The repeated-phrase check's words found as arrays (petgen/content/phrasewords.py) are its words found one by one."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np

from petgen.content.model import Entry, parse_entry
from petgen.content.phrasewords import word_ids
from petgen.content.synthetic import synthetic_entry
from petgen.content.validate import (
    _flat_phrase_words,
    _phrase_hashes,
    _window_hashes,
    _word_hashes,
    sentence_hashes,
    sign_entries,
)

REPO = Path(__file__).resolve().parents[2]


def entries() -> list[Entry]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "content" / "names").glob("*.md"))[:80]]
    rng = random.Random(3)
    texts += [synthetic_entry(i, rng)[1] for i in range(40)]
    found = [parse_entry(f"names/{i}.md", text)[0] for i, text in enumerate(texts)]
    return [entry for entry in found if entry is not None]


def odd(entry: Entry, rng: random.Random) -> Entry:
    """The entry with its name where the replacement has choices to make, and characters that need care."""
    words = entry.origin.split()
    kind = rng.randrange(6)
    if kind == 0:  # the name again and again, in capitals, next to itself
        return replace(entry, origin=f"{entry.origin} {entry.title} {entry.title}{entry.title.upper()}")
    if kind == 1:  # the separator of two texts inside one
        return replace(entry, meaning=f"{entry.meaning}\x01{entry.title}", examples=["\x01", *entry.examples[1:]])
    if kind == 2:  # variants that overlap each other in the text, and an empty one
        return replace(entry, variants=[" ".join(words[3:6]), " ".join(words[4:8]), words[0], "", "–"])
    if kind == 3:  # letters that casefold to two, a combining dot, letters outside the BMP, `_` in a word
        return replace(entry, title="Straße İstanbul 𝔘x ǅ", usage=f"{entry.usage} STRASSE İstanbul 𝔘x ǆ a_b ½ ٣")
    if kind == 4:  # a name of one word written twice, then the word alone
        return replace(entry, variants=[f"{words[2]} {words[2]}", words[2]], origin=entry.origin + f" {words[2]}" * 5)
    return replace(entry, examples=["", "_", "x_y __ ", "\x00 a b c d e f"])


def test_word_ids_are_the_words_found_one_by_one() -> None:
    found = entries()
    rng = random.Random(5)
    found += [odd(entry, rng) for entry in found]
    for size in (1, 5, 64):
        for start in range(0, len(found), size):
            batch = found[start:start + size]
            ids, bounds = word_ids(batch)
            for i, entry in enumerate(batch):
                mine = ids[bounds[i]:bounds[i + 1]]
                assert mine.tolist() == _word_hashes([*_flat_phrase_words(entry), "\x01"]).tolist(), entry.title


def test_phrase_hashes_are_the_windows_of_those_words() -> None:
    found = entries()
    for entry, packed in zip(found, _phrase_hashes(found)):
        expected = np.unique(_window_hashes(_flat_phrase_words(entry))[0])
        assert np.frombuffer(packed, dtype=np.int64).tolist() == expected.tolist()


def test_signing_with_the_prose_casefolded_once_gives_the_hashes_of_each_check() -> None:
    """`sign_entries` casefolds an entry's prose once for the sentences and the phrases (sentence ends as NULs): the
    hashes are those of `sentence_hashes` and `_phrase_hashes` made each from the entry, odd texts included."""
    found = entries()
    rng = random.Random(11)
    found += [odd(entry, rng) for entry in found]
    found += [replace(entry, faq=[{"question": "Echt?  Ja. Nein", "answer": "So.  Weiter?"}, *entry.faq],
                      usage=f"{entry.usage}  Ende.\u2028Neu.  ") for entry in found[:20]]
    signed = [replace(entry) for entry in found]
    sign_entries(signed)
    assert [entry.sentences for entry in signed] == [sentence_hashes(entry) for entry in found]
    assert [entry.phrases for entry in signed] == _phrase_hashes(found)

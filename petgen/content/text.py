"""Text normalisation shared by every part of the project: slugs, folding, collation."""

from __future__ import annotations

import re
import unicodedata

_GERMAN_TRANSLIT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "ẞ": "ss"})
_GERMAN_BASE = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss", "ẞ": "ss"})
_NON_SLUG = re.compile(r"[^a-z0-9]+")
_WORD = re.compile(r"\w+(?:[-']\w+)*")


# Latin letters that Unicode does not decompose into a base letter and a mark: Turkish dotless i,
# Polish ł, Scandinavian ø and æ, … (`Aşkım` → `Askim`, `Słoneczko` → `Sloneczko`).
_UNDECOMPOSED = {"ı": "i", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE",
                 "œ": "oe", "Œ": "OE", "þ": "th", "Þ": "TH", "ð": "d", "Ð": "D", "ħ": "h", "Ħ": "H"}


class _AccentTable(dict[int, str]):
    """Per-character translation table for `str.translate`, filled on first sight of a character."""

    def __missing__(self, codepoint: int) -> str:
        if chr(codepoint) in _UNDECOMPOSED:
            self[codepoint] = _UNDECOMPOSED[chr(codepoint)]
            return self[codepoint]
        decomposed = unicodedata.normalize("NFKD", chr(codepoint))
        value = "".join(c for c in decomposed if not unicodedata.combining(c))
        self[codepoint] = value
        return value


_ACCENTS = _AccentTable()


def strip_accents(text: str) -> str:
    """Remove combining marks: `Chérie` → `Cherie` (compatibility forms fold too: `ﬁ` → `fi`)."""
    return text if text.isascii() else text.translate(_ACCENTS)


def slugify(text: str) -> str:
    """Apply the content guide's slug rule: `Bärchen` → `baerchen`, `Honey Bunny` → `honey-bunny`."""
    lowered = unicodedata.normalize("NFC", text).lower().translate(_GERMAN_TRANSLIT)
    return _NON_SLUG.sub("-", strip_accents(lowered)).strip("-")


def collation_key(text: str) -> tuple[str, str]:
    """Sort key for German titles (DIN 5007-1): umlauts as base letters, case-insensitive.

    The original text breaks ties so that the order is total and deterministic.
    """
    if text.isascii():  # most titles: then NFC, casefold, the umlauts and the accents change nothing but case
        return (text.lower(), text)
    base = strip_accents(unicodedata.normalize("NFC", text).casefold().translate(_GERMAN_BASE))
    return (base, text)


def initial(title: str) -> str:
    """A title's A–Z letter: the first letter of its collation key (umlauts as base letters), `#` else."""
    first = collation_key(title)[0][:1]
    return first if "a" <= first <= "z" else "#"


SHORT_LETTERS, SHORT_SYLLABLES = 7, 2
LONG_LETTERS, LONG_SYLLABLES = 11, 4
_VOWELS = re.compile(r"[aeiouyäöü]+")


def length_class(title: str) -> str:
    """How long a name is to say: "einsilbig" (one word of one syllable: Schatz, Maus), "kurz" (one word of at
    most two syllables and seven letters: Bärchen, Hasi), "lang" (several words, or at least four syllables or eleven letters: Honigbienchen, Bessere Hälfte),
    "" in between. Syllables are counted as groups of vowels (ei, au, ie count once)."""
    parts = re.findall(r"[^\W\d_]+", title.lower())
    letters = sum(len(p) for p in parts)
    syllables = sum(max(1, len(_VOWELS.findall(p))) for p in parts)
    if len(parts) == 1 and syllables == 1:
        return "einsilbig"
    if len(parts) == 1 and letters <= SHORT_LETTERS and syllables <= SHORT_SYLLABLES:
        return "kurz"
    if len(parts) > 1 or letters >= LONG_LETTERS or syllables >= LONG_SYLLABLES:
        return "lang"
    return ""


def word_count(text: str) -> int:
    """Count words the way an editor would (hyphenated compounds count once)."""
    if "-" in text or "'" in text:
        return len(_WORD.findall(text))
    return len(word_runs(text))  # no hyphen or apostrophe to join two runs: the same count, found faster


# ASCII characters that no `\w` matches, other than the spaces `str.split` splits on: blanked out in the UTF-8
# bytes (every other character's bytes stay as they were); and the non-ASCII punctuation of German prose.
_ASCII_PUNCTUATION = bytes(c for c in range(128) if not chr(c).isalnum() and c != ord("_") and not chr(c).isspace())
_PROSE_PUNCTUATION = "–—„“”‚‘’»«…·"
_BLANKS: dict[tuple[str, bool], bytes] = {}  # (`keep`, underscore kept) -> the table blanking out the rest


def word_runs(text: str, keep: str = "") -> list[str]:
    """`re.findall(r"\\w+|K", text)` (K: `keep`, an ASCII character no `\\w` matches, or none), a few times
    faster on prose: punctuation is blanked out and the text split at spaces in C. Text with other characters
    than letters, digits, spaces and common punctuation (`_`, symbols, …), or with `keep` beside a word,
    goes to the regular expression."""
    return _runs(text, keep, True)


def letter_runs(text: str, keep: str = "") -> list[str]:
    """`re.findall(r"[^\\W_]+|K", text)`: the words the search engine folds (`\\w` without `_`), found as
    `word_runs` finds its runs, `_` blanked out with the punctuation."""
    return _runs(text, keep, False)


def _runs(text: str, keep: str, underscore: bool) -> list[str]:
    """`word_runs` (`underscore`: `_` is a word character, as in `\\w`) or `letter_runs`."""
    table = _BLANKS.get((keep, underscore))
    if table is None:
        blanked = bytes(c for c in _ASCII_PUNCTUATION if chr(c) != keep) + (b"" if underscore else b"_")
        table = _BLANKS[keep, underscore] = bytes.maketrans(blanked, b" " * len(blanked))
    spaced = text.encode("utf-8", "surrogatepass").translate(table).decode("utf-8", "surrogatepass")
    if not spaced.isascii():
        for mark in _PROSE_PUNCTUATION:
            if mark in spaced:
                spaced = spaced.replace(mark, " ")
    runs = spaced.split()
    letters = "".join(runs)
    alone = True  # `keep` nowhere beside a word character
    if keep and keep in letters:
        alone = runs.count(keep) == letters.count(keep)
        letters = letters.replace(keep, "")
    if alone and (letters.isalnum() or not letters):  # `\\w` is `str.isalnum` or `_`: each run is a run of them
        return runs
    word = r"\w+" if underscore else r"[^\W_]+"
    return re.findall(f"{word}|{re.escape(keep)}" if keep else word, text)

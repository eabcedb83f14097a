"""The search engine: one module for both sides (ARCHITECTURE.md, contract 4).

`build_index` says what the index of some documents is; the build makes the same index flat, in array
operations (`petgen.search.update.build`), and writes it as shards by term prefix (as Pagefind does, for
browsers) and as one pack file (petgen/search/pack.py) that the runtime maps into a `SearchIndex`
and queries. Queries and documents go
through the same `analyze`, so a query is normalised exactly as the documents were.

Normalisation: NFC, case folding, `ß→ss`, accents stripped, umlauts folded to their base letters
and the umlaut-less spellings `ae/oe/ue` too (`Bärchen`, `Baerchen`, `barchen` → `barchen`),
punctuation and hyphens split words. Each word is indexed as itself (for prefix and typo
matching), by its German and English Snowball stems (exact matching), and, for compounds, by the
known words it starts or ends with (`Zuckermaus` → `zucker`, `maus`).

The query side (reading the pack file, scores in 0..1, the caps on a query's cost) is
petgen/search/query.py.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
import Stemmer

from petgen.content.text import collation_key, letter_runs, strip_accents

INDEX_VERSION = 1
FIELDS = ("title", "variants", "keywords", "meaning")
WEIGHTS = {"title": 8.0, "variants": 5.0, "keywords": 3.0, "meaning": 1.0}
# Match confidences the query side multiplies a field's confidence by (petgen/search/query.py); a prefix
# counts 0.5 + 0.4 × the typed share of the word, so "prefix" here is its most.
QUALITY = {"exact": 1.0, "stem": 0.9, "prefix": 0.9, "compound": 0.65, "typo1": 0.6, "typo2": 0.5}

STOPWORDS = frozenset(
    "der die das des dem den ein eine einer einen einem eines und oder mit fur von zu zum zur im in am an auf "
    "ist sind es er sie ihr wir ich du mich dich sich als auch so wie the a an and or of to for with is are my "
    "me you your it its on in at be".split()
)

_WORD = re.compile(r"[^\W_]+")
_UMLAUT = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss"})
_DIGRAPHS = (("ae", "a"), ("oe", "o"), ("ue", "u"))
# PyStemmer's own cache (10,000 words by default) is off: with it, stemming a build's vocabulary (each word once)
# takes three times as long. `stems` keeps a cache of its own for queries.
_german = Stemmer.Stemmer("german", 0)
_english = Stemmer.Stemmer("english", 0)


@lru_cache(maxsize=65536)
def fold_word(word: str) -> str:
    """One lowercase word folded: umlauts and their ae/oe/ue spellings to base letters, no accents."""
    word = strip_accents(word.translate(_UMLAUT))
    for digraph, base in _DIGRAPHS:
        word = word.replace(digraph, base)
    return word


def words(text: str) -> list[str]:
    """The folded words of a text, in order."""
    return [fold_word(w) for w in _WORD.findall(unicodedata.normalize("NFC", text).casefold())]


def words_each(texts: list[str]) -> list[list[str]]:
    """`words` of each text, in one pass over all of them (NUL between them: as a starter that composes with
    nothing, it keeps NFC and casefolding to each text; as a non-word, out of every word; with spaces around it,
    a token of its own for `letter_runs`)."""
    joined = " \x00 ".join(texts)
    if joined.count("\x00") != len(texts) - 1:  # the separator itself in a text
        return [words(text) for text in texts]
    tokens = fold_words(letter_runs(unicodedata.normalize("NFC", joined).casefold(), "\x00"))  # `_WORD`'s words, NULs
    found, start = [], 0
    for _ in range(len(texts) - 1):
        end = tokens.index("\x00", start)
        found.append(tokens[start:end])
        start = end + 1
    found.append(tokens[start:])
    return found


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def fold_words(tokens: list[str]) -> list[str]:
    """`fold_word` of each lowercase word, all of them at once: folded joined by spaces (which no word has and
    folding leaves alone; else, if some character folds to a space, one by one). Umlauts and accents are folded
    character by character, in the runs of other than ASCII only (`str.translate` of a whole text that has any is
    several times slower)."""
    folded = _NON_ASCII.sub(_fold_letters, " ".join(tokens))
    for digraph, base in _DIGRAPHS:
        folded = folded.replace(digraph, base)
    found = folded.split(" ")
    return found if len(found) == len(tokens) else list(map(fold_word, tokens))


def _fold_letters(letters: re.Match[str]) -> str:
    return strip_accents(letters[0].translate(_UMLAUT))


@lru_cache(maxsize=65536)
def stems(word: str) -> tuple[str, ...]:
    """German and English Snowball stems of a folded word (one if they agree)."""
    german, english = _german.stemWord(word), _english.stemWord(word)
    return (german,) if german == english else (german, english)


def stems_each(words: list[str]) -> list[tuple[str, ...]]:
    """`stems` of each word, each stemmer over all of them at once (the build stems its whole vocabulary)."""
    return [(german,) if german == english else (german, english)
            for german, english in zip(_german.stemWords(words), _english.stemWords(words))]


def analyze(text: str) -> list[str]:
    """Words to search for: folded, without stopwords (unless nothing else is left)."""
    found = words(text)
    kept = [w for w in found if w not in STOPWORDS]
    return kept or found


# ---------------------------------------------------------------------------------------------
# Build side


@dataclass
class Document:
    slug: str
    title: str
    meaning: str
    url: str
    fields: dict[str, list[str]]  # field -> its texts
    terms: dict[str, float] | None = None  # `document_terms(fields)`, if computed already


def digest(document: Document) -> bytes:
    """What a document's postings and stored fields are made of (`petgen.search.update` compares them)."""
    return hashlib.blake2b(orjson.dumps([document.slug, document.title, document.meaning, document.url,
                                         document.fields]), digest_size=16).digest()


def document_terms(fields: dict[str, list[str]], found: list[list[str]] | None = None) -> dict[str, float]:
    """Each word of a document once, at the weight of the best field it occurs in (each text `analyze`d, all of
    them in one pass). `found`: the `words` of the fields' texts in order (FIELDS', then each field's), if found
    already (more lists after them are left alone)."""
    texts = [text for name in FIELDS for text in fields.get(name, [])]
    weights = [WEIGHTS[name] for name in FIELDS for _ in fields.get(name, [])]
    seen: dict[str, float] = {}
    assert found is None or len(found) >= len(texts), "`found` holds the words of every text, in FIELDS' order"
    for weight, each in zip(weights, found if found is not None else words_each(texts)):
        for word in [w for w in each if w not in STOPWORDS] or each:
            if seen.get(word, 0.0) < weight:
                seen[word] = weight
    return seen


def build_index(documents: list[Document]) -> dict[str, Any]:
    """Index documents; return {"docs", "stems", "words", "parts"}, postings as `[docs, weights]`, each kind's
    terms in sorted order (so that an index made flat or updated entry by entry, petgen/search/update.py, is
    the same: tests/petgen/test_search_update.py)."""
    stem_post: dict[str, dict[int, float]] = {}
    word_post: dict[str, dict[int, float]] = {}
    part_post: dict[str, dict[int, float]] = {}
    doc_words = [document.terms if document.terms is not None else document_terms(document.fields)
                 for document in documents]
    for doc, seen in enumerate(doc_words):
        for word, weight in seen.items():
            word_post.setdefault(word, {})[doc] = weight
        for stem, weight in doc_stems(seen).items():
            stem_post.setdefault(stem, {})[doc] = weight
    known = {w for w, postings in word_post.items() if is_known(w, postings.values())}
    parts_of: dict[tuple[str, bool], list[str]] = {}  # most words recur across documents
    for doc, seen in enumerate(doc_words):
        for part, weight in doc_parts(seen, known, parts_of).items():
            part_post.setdefault(part, {})[doc] = weight
    return {
        "docs": [[d.slug, d.title, d.meaning, d.url] for d in documents],
        "stems": _freeze(stem_post),
        "words": _freeze(word_post),
        "parts": _freeze(part_post),
    }


def is_known(word: str, weights: Iterable[float]) -> bool:
    """Whether a word is a known part of compounds: three letters or more, in a title, variant or keyword."""
    return len(word) >= 3 and max(weights, default=0.0) > WEIGHTS["meaning"]


def doc_stems(seen: dict[str, float]) -> dict[str, float]:
    """A document's stems (of its words `seen`), each at the weight of its best word."""
    found: dict[str, float] = {}
    for word, weight in seen.items():
        for stem in stems(word):
            if found.get(stem, 0.0) < weight:
                found[stem] = weight
    return found


def doc_parts(seen: dict[str, float], known: set[str], parts_of: dict[tuple[str, bool], list[str]]) -> dict[str, float]:
    """A document's compound parts: known words (from titles, variants, keywords) a longer word starts or ends
    with, and, for names (titles and variants), every tail of four letters or more (`Quatschkopf` → `kopf`);
    each at the weight of its best word. `parts_of` remembers the parts of words seen before."""
    found: dict[str, float] = {}
    for word, weight in seen.items():
        if len(word) < 6:
            continue
        key = (word, weight >= WEIGHTS["variants"])
        parts = parts_of.get(key)
        if parts is None:
            parts = parts_of[key] = compound_parts(word, known, tails=key[1])
        for part in parts:
            if found.get(part, 0.0) < weight:
                found[part] = weight
    return found


def compound_parts(word: str, known: set[str], *, tails: bool = False) -> list[str]:
    """Known words of three letters or more at the start or end of a longer word; with `tails`, also
    every ending of four letters or more after a head of three (the last part of a compound)."""
    if len(word) < 6:
        return []
    parts = {word[:i] for i in range(3, len(word) - 2) if word[:i] in known}
    parts |= {word[i:] for i in range(3, len(word) - 2) if word[i:] in known or (tails and len(word) - i >= 4)}
    return sorted(parts)


def _freeze(postings: dict[str, dict[int, float]]) -> dict[str, list[list[float]]]:
    """Postings as `[docs, weights]`: two flat lists, docs ascending (they were added in doc order); terms sorted."""
    return {term: [list(row), list(row.values())] for term, row in sorted(postings.items())}


def title_order(docs: list[list[str]]) -> list[int]:
    """Each document's rank in title order (shorter titles first, then alphabetical, then the document
    order): how the engine breaks ties between equal scores."""
    ranked = sorted(range(len(docs)), key=lambda d: (len(docs[d][1]), collation_key(docs[d][1])))
    order = [0] * len(docs)
    for rank, d in enumerate(ranked):
        order[d] = rank
    return order


def shard_key(term: str) -> str:
    """Terms are sharded by their first two characters (one shard for very short terms)."""
    return term[:2] if len(term) >= 2 else "_"


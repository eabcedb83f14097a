"""Equivalents in another language: "Schatz auf Englisch", "the German word for sweetheart", "Wie sagt man Hase
auf Türkisch?".

A question that names an entry (the source) and asks for it in a language is answered with the entries in that
language that correspond to it, each scored by the strongest of these signs (0..1), plus `BOTH` for each further
sign:
- one lists the other as related (`related`): `RELATED`;
- its title is one of the source's keywords (Schatz: treasure, darling, sweetheart, honey → Darling, Sweetheart,
  Honey): `KEYWORD`;
- its own text names the source (its keywords, meaning or usage): `MENTION` + `MENTION_SPAN` × the search
  engine's confidence;
- its text names at least two of the source's keywords (Liebling: darling, sweetheart, beloved → Chérie, whose
  keywords say them; one shared gloss such as "sweetheart" says little): `GLOSS` + `GLOSS_SPAN` × the engine's
  confidence, for each keyword.
A word that is no title but a word of some entry ("Was heißt Liebe auf Spanisch?") is answered with the entries in
that language whose text names it (Mi Amor: "Liebe" in its keywords), scored as a mention.
When the source itself is in the language asked for ("Süße auf Deutsch"), it comes first with 1.0. A single word that
is neither a title nor in the lexicon ("the German word for pumpkin") gets an empty result and a hint. A source the
knowledge base has no equivalent of in that language (none scoring at least /ask's confidence floor) gets an empty result and a hint naming the language.
`_meta.understood` says `equivalents` (the source's title, as written) and `language`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import orjson

from petgen.content.lexicon import Lexicon
from petgen.search.index import stems, words
from petgen.search.query import Hit
from runtime.builds.dist import Dist

RELATED = 0.9
KEYWORD = 0.85
MENTION, MENTION_SPAN = 0.45, 0.4  # a mention scores 0.45 + 0.4 × the engine's confidence (a meaning's 0.5: 0.65)
GLOSS, GLOSS_SPAN = 0.35, 0.4  # a shared keyword scores 0.35 + 0.4 × the engine's confidence (a keyword's: 0.75) …
GLOSSES = 2  # … when at least this many are shared
BOTH = 0.05
SOURCE_FIRST = 0.99  # when the source is in the language asked for, the others score at most this
GERMAN = "deutsch"
MAX_SOURCE_WORDS = 3

_LANG = r"[\"'„“]?(?P<lang>[^\W\d_]+)[\"'“”]?"
_X = r"[\"'„“‚]?(?P<x>[^\"'„“”‚‘]+?)[\"'“”‘]?"
_END = r"\s*[?!.…]*\s*$"
PATTERNS = [re.compile(p, re.IGNORECASE) for p in (
    # "Was heißt Schatz auf Englisch?", "Wie sagt man Hase auf Türkisch?", "Wie übersetzt man Schatz ins Englische?"
    (rf"^(?:und\s+)?(?:was|wie)\s+(?:hei(?:ß|ss)t|sagt\s+man(?:\s+zu)?|sage\s+ich(?:\s+zu)?|nennt\s+man|übersetzt\s+man)\s+"
    rf"{_X}\s+(?:auf|in|im|ins)\s+{_LANG}{_END}"),
    # "How do you say Schatz in English?", "What is Schatz in English?", "translate Schatz into English"
    (rf"^(?:how\s+(?:do\s+(?:you|i|we)|would\s+you|to|can\s+i|does\s+one)\s+say|what(?:'s|s|\s+is)|translate)\s+"
    rf"{_X}\s+in(?:to)?\s+{_LANG}{_END}"),
    # "Schatz auf Englisch", "sweetheart in German?", "Hase ins Türkische"
    rf"^{_X}\s+(?:auf|in|im|ins|into)\s+{_LANG}{_END}",
    # "the English word for Schatz", "English for Schatz", "the German equivalent of darling"
    (rf"^(?:what(?:'s|\s+is)\s+)?(?:the\s+|an?\s+)?{_LANG}\s+(?:(?:word|term|name|pet\s+name|equivalent|version|"
    rf"translation)\s+(?:for|of)|for)\s+{_X}{_END}"),
    # "das englische Wort für Schatz", "englischer Kosename für Schatz", "deutsche Entsprechung von Honey"
    (rf"(?:^|\s){_LANG}\s+(?:wort|begriff|kosename|ausdruck|entsprechung|übersetzung|pendant|gegenstück)\s+"
    rf"(?:für|zu|von)\s+{_X}{_END}"),
    # "Übersetzung von Schatz ins Englische", "translation of Schatz into English"
    rf"(?:übersetzung|translation)\s+(?:von|of|für|for)\s+{_X}\s+(?:ins|in|into|auf)\s+{_LANG}{_END}",
)]
# Words around the name that do not belong to it: "mein Schatz", "das Wort Schatz", "the name Honey".
# Said after the question: "Schätzchen auf Italienisch bitte", "… in German as a pet name?"
POLITE = re.compile(r"(?:[\s,]+(?:bitte|please|danke|thanks|thank you|als\s+kosename|as\s+an?\s+(?:pet\s+)?name)"
                    r"[\s?!.…:)]*)+$", re.IGNORECASE)
_AROUND = frozenset({"mein", "meine", "meinen", "my", "das", "der", "die", "den", "the", "a", "an", "wort", "word",
                     "kosename", "kosenamen", "name", "spitzname", "nickname", "pet", "begriff", "term"})

_LISTS = frozenset({"kosenamen", "spitznamen", "namen", "names", "nicknames", "worter", "words"})  # folded


@dataclass(frozen=True)
class Request:
    written: str  # the source as the question wrote it
    docs: tuple[int, ...]  # the entries titled so (folded), the first is the source
    language: str  # the language facet value asked for
    word: str = ""  # with no such entry: the source as folded words, if some entry's text has them (else "")


def _languages(lexicon: Lexicon) -> dict[str, str]:
    """The lexicon's one-word language phrases and their German stems -> the language facet value (cached)."""
    found = getattr(lexicon, "_languages", None)
    if found is None:
        found = {}
        for phrase, actions in lexicon.phrases.items():
            for kind, value in actions:
                if kind == "language" and len(phrase) == 1:
                    for word in (phrase[0], *stems(phrase[0])):
                        found.setdefault(word, value)
        object.__setattr__(lexicon, "_languages", found)
    return found


def language_of(word: str, lexicon: Lexicon) -> str | None:
    """The language a word names ("Englisch", "English", "ins Englische", "englisches"), or None."""
    folded = words(word)
    if len(folded) != 1:
        return None
    table = _languages(lexicon)
    return next((table[w] for w in (folded[0], *stems(folded[0])) if w in table), None)


def read(question: str, dist: Dist) -> Request | None:
    """The source and language of a question asking for a name in another language, or None. The source must be
    an entry's title (folded), or a phrase the lexicon translates into one ("treasure" → Schatz)."""
    table = _languages(dist.lexicon_index)
    if not any(t in table or t[:-1] in table or t[:-2] in table for t in words(question)):
        return None  # no language named: not this kind of question (checked before the patterns, for speed)
    question = POLITE.sub("", question)
    for pattern in PATTERNS:
        match = pattern.search(question)
        if match is None:
            continue
        language = language_of(match.group("lang"), dist.lexicon_index)
        if language is None:
            continue
        written = match.group("x").strip(" ,;:")
        key_words = [w for w in words(written) if w not in _AROUND]
        if _LISTS.intersection(words(written)):  # "süße Kosenamen auf Englisch" asks for a list
            return None
        if not key_words or len(key_words) > MAX_SOURCE_WORDS:
            continue
        key = " ".join(key_words)
        docs = dist.docs_by_title.get(key)
        if docs is None:
            for kind, value in dist.lexicon_index.phrases.get(tuple(key_words), []):
                if kind == "translate" and " ".join(words(value)) in dist.docs_by_title:
                    docs = dist.docs_by_title[" ".join(words(value))]
                    break
        if docs:
            return Request(written, tuple(docs), language)
        if language != GERMAN and all(dist.search.knows(w) for w in key_words):  # "Liebe auf Spanisch": the
            return Request(written, (), language, key)  # names that say it (German ones: through the glosses)
        if len(key_words) == 1 and not dist.lexicon_index.phrases.get(tuple(key_words)):
            return Request(written, (), language)  # "the German word for pumpkin": no such name to translate
    return None


def _docs_of_slug(dist: Dist, slug: str) -> list[int]:
    """The document of a slug, through its entry's title (the runtime keeps no slug → document table)."""
    route = f"/api/names/{slug}"
    if route not in dist.routes:
        return []
    title = orjson.loads(dist.routes[route].body).get("title", "")
    return [d for d in dist.docs_by_title.get(" ".join(words(title)), []) if dist.items.slug_list[d] == slug]


def rank(request: Request, dist: Dist, limit: int, floor: float) -> list[Hit]:
    """The entries in the language asked for that correspond to the source, best first (module docstring)."""
    index = dist.search
    in_language = dist.mask("language", request.language)
    if not request.docs:
        if not request.word:
            return []
        docs, conf = index.group([request.word], prefix=False)
        keep = in_language[docs] & (MENTION + MENTION_SPAN * conf >= floor)
        return index.ranked(docs[keep], (MENTION + MENTION_SPAN * conf)[keep], limit)
    source = request.docs[0]
    summary = dist.items[source]
    route = f"/api/names/{summary['slug']}"
    entry = orjson.loads(dist.routes[route].body) if route in dist.routes else {}
    signs: dict[int, list[float]] = {}

    def add(docs: np.ndarray | list[int], value: float | np.ndarray) -> None:
        values = np.broadcast_to(np.asarray(value, dtype=np.float64), (len(docs),))
        for doc, v in zip(np.asarray(docs, dtype=np.int64).tolist(), values.tolist()):
            if in_language[doc] and doc not in request.docs and v > 0:
                signs.setdefault(doc, []).append(v)

    for slug in entry.get("related", []):
        add(_docs_of_slug(dist, slug), RELATED)
    for keyword in entry.get("keywords", []):
        add(dist.docs_by_title.get(" ".join(words(keyword)), []), KEYWORD)
    title_words = words(summary["title"])
    if title_words:  # the entries whose own text names the source (keywords first: "Schatz" in Honey's)
        docs, conf = index.group([" ".join(title_words)] if len(title_words) > 1 else title_words, prefix=False)
        add(docs, MENTION + MENTION_SPAN * conf)
    # the entries whose text says what two or more of the source's keywords say, in the language asked for (array
    # operations: a common gloss matches thousands of entries in a large knowledge base)
    found = [index.group([keyword], prefix=False) for keyword in
             {" ".join(words(k)) for k in entry.get("keywords", []) if language_of(k, dist.lexicon_index) is None}
             if keyword and keyword != " ".join(title_words)]
    if found:
        docs = np.concatenate([d for d, _ in found])
        conf = np.concatenate([c for _, c in found])
        keep = in_language[docs]
        docs, conf = docs[keep], conf[keep]
        order = np.lexsort((-conf, docs))  # by document, its best confidence first
        docs, conf = docs[order], conf[order]
        unique, first, counts = np.unique(docs, return_index=True, return_counts=True)
        shared = counts >= GLOSSES
        add(unique[shared], GLOSS + GLOSS_SPAN * conf[first[shared]])
    if in_language[source]:
        signs = {source: [1.0], **{doc: [min(SOURCE_FIRST, v) for v in values] for doc, values in signs.items()}}
    if not signs:
        return []
    docs = np.fromiter(signs, dtype=np.int32, count=len(signs))
    cap = SOURCE_FIRST if in_language[source] else 1.0
    scores = np.array([1.0 if doc == source else min(cap, max(v) + BOTH * (len(v) - 1)) for doc, v in signs.items()])
    confident = scores >= floor
    return index.ranked(docs[confident], scores[confident], limit)


def none_hint(request: Request, dist: Dist) -> str:
    if request.word:
        return (f"no {request.language} name in the knowledge base says '{request.written}'; ask what a name means "
                "('Was bedeutet Spatzl?') or for names in that language alone ('Kosenamen auf Englisch')")
    if not request.docs:
        return (f"the knowledge base has no name '{request.written}' to give in another language; ask what a name "
                "means ('Was bedeutet Spatzl?') or for names in a language ('Kosenamen auf Englisch')")
    title = dist.items.title_list[request.docs[0]]
    return (f"the knowledge base has no {request.language} equivalent of {title}; its keywords and related names "
            "are on its page; or ask for names in that language alone ('Kosenamen auf Englisch')")

"""How `/ask` reads a question (runtime/understanding.py ranks the entries for it).

The question's words are folded like the index (petgen/search/index.py) and matched
against `content/lexicon.yml`, longest phrase first (up to four words), exactly or by German stem
(`frecher` → `frech`), a phrase of two words in either order (`der gern kuschelt`: `kuschelt gern`). A phrase can ask for facet values (relationship, gender, region, language),
a category, a mood, or stand for German words to search for (translations and traits: `little
mouse` → Mäuschen, `schläft gern` → Langschläfer, Schlafmütze). Several values of one facet
are a union ("Wien oder Bayern"), and so are two words joined by "oder"/"or" ("Sterne oder Sonne": an
entry matching either counts as matching the pair, by its better match). A phrase that is also an entry's title (`Baby`, `Kumpel`) is
searched for as a name, and its intents only boost, unless it follows "für"/"for"/"zu"/"to"
("für ein Baby"). Filler, words of one or two letters and words that match no entry are ignored
and reported; a word that only occurs in meanings is ignored when the question says more. What follows "ohne",
"nicht", "kein", "not", "without", "anderes als" (`NEGATIONS`, `OTHER_THAN`) is left out of the answer (`excluded`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from rapidfuzz.distance import OSA
from rapidfuzz.process import extract

from petgen.content.lexicon import Lexicon
from petgen.content.model import EVERY_REGION
from petgen.content.text import initial
from petgen.contract.limits import QUERY_WORDS
from petgen.search.index import analyze, stems, words


def folded(vocabulary: set[str]) -> frozenset[str]:
    """Words as a question's tokens are folded (petgen/search/index.py `words`: "colleague" → "colleagu")."""
    return frozenset(" ".join(words(w)) for w in vocabulary)


RECIPIENT_CUES = frozenset({"fur", "furs", "for", "zu", "zum", "zur", "to", "an"})  # "für ein Baby": Baby is whom it is for
# … "for my sweetheart": whose (not "a word for treasure")
POSSESSIVES = frozenset({"my", "your", "his", "her", "our", "their", "mein", "meine", "meinen", "meinem", "meiner",
                         "dein", "deine", "deinen", "deinem", "deiner", "unser", "unsere", "unseren", "unserem", "unserer"})
UNION_CUES = frozenset({"oder", "or"})  # "Sterne oder Sonne": either word
NEGATIONS = folded({"nicht", "nichts", "nix", "kein", "keine", "keinen", "keiner", "keinem", "keines", "ohne", "nie",
                       "niemals", "statt", "anstatt", "ausser", "not", "no", "nothing", "never", "without", "except",
                       "instead", "dont", "don", "doesnt", "doesn", "isnt", "isn", "arent", "aren", "wont", "won", "non"})  # the next phrase is left out (`Understanding.excluded`)
OTHER_THAN = frozenset({"anderes", "andere", "anderen", "anderer", "other", "different", "alternative", "alternatives",
                        "alternativen"})
# "ausgefallene Kosenamen", "unusual pet names": not the classics (`excluded`, as "nicht klassisch")
UNUSUAL = folded({"ausgefallen", "ausgefallene", "ausgefallenen", "ausgefallener", "ungewohnlich", "ungewohnliche",
                     "ungewohnlichen", "originell", "originelle", "originellen", "selten", "seltene", "seltenen",
                     "unusual", "unique", "uncommon", "original", "rare", "creative", "kreativ", "kreative", "kreativen",
                     "besondere", "besonderen", "extravagant", "extravagante", "exotisch", "exotische", "exotic",
                     "unbekannt", "unbekannte", "unbekannten", "obscure", "unpopular"})
# … and phrases saying the same ("least common pet names", "Kosenamen, die keiner kennt")
UNUSUAL_PHRASES = tuple(phrase.split() for phrase in folded({
    "least common", "less common", "least popular", "less popular", "lesser known", "little known", "least known",
    "keiner kennt", "kennt keiner", "niemand kennt", "kennt niemand", "kaum bekannt", "kaum bekannte",
    "wenig bekannt", "wenig bekannte", "wenig bekannten", "nicht so bekannt", "nicht so bekannte"}))
# Words that only stress what follows: a lexicon phrase matches across them ("der mich immer beschützt").
INSERTS = frozenset({"immer", "oft", "sehr", "so", "ganz", "total", "echt", "wirklich", "besonders", "einfach", "mega",
                     "richtig", "standig", "extrem", "always", "really", "very", "too", "often", "totally",
                     "constantly", "extremely"})
# Questions about something else: how to do a thing, how old or long, where to buy, prices, lyrics, the weather, who won
# (folded word sequences; `off_topic`). "how to call …", "how to say …" ask for names.
OFF_TOPIC = (("how", "to"), ("how", "long"), ("how", "old"), ("how", "much"), ("how", "many"), ("where", "can"),
             ("where", "to"), ("buy",), ("lyrics",), ("recipe",), ("brands",), ("price",), ("weather",), ("who", "won"),
             ("wie", "alt"), ("wie", "lange"), ("wie", "viel"), ("wie", "viele"), ("wo", "kann"), ("kaufen",),
             ("rezept",), ("preis",), ("wetter",), ("songtext",), ("wer", "hat"), ("joke",), ("witz",), ("code",),
             ("python",), ("javascript",), ("calculate",), ("berechne",), ("rechne",), ("news",), ("nachrichten",),
             ("thanks",), ("thank", "you"), ("danke",), ("bye",), ("tschuss",), ("hallo",), ("hello",), ("guten", "morgen"),
             ("good", "morning"), ("how", "are", "you"), ("wie", "geht"), ("symptoms",), ("symptome",), ("gedicht",),
             ("poem",), ("essay",), ("aufsatz",), ("wie", "spat"), ("what", "time"), ("how", "far"), ("wie", "weit"),
             ("when", "is"), ("wann", "ist"), ("moin",), ("servus",), ("hi", "there"), ("was", "fressen"),
             ("how", "do", "i", "bake"), ("how", "do", "i", "make"), ("how", "do", "i", "cook"))
_OFF_BY_FIRST: dict[str, list[tuple[str, ...]]] = {}
for _cue in OFF_TOPIC:
    _OFF_BY_FIRST.setdefault(_cue[0], []).append(_cue)
ASKS_FOR_NAMES = frozenset({"call", "calling", "called", "name", "address", "nickname", "pronounce", "spell", "nennen", "nenn",
                            "nenne", "nennst", "nennt", "rufen", "ruf", "rufe", "rufst", "ansprechen", "aussprechen",
                            "ausspricht", "schreiben", "schreibt", "anreden", "anrede", "kosewort", "koseworte",
                            "koseworter", "liebevoll", "lovingly", "affectionately", "endearment", "endearments"})
COMPARISONS = frozenset({"besser", "better", "lieber", "rather", "eher", "more", "mehr", "which", "welcher", "welches",
                         "welchen", "sweeter", "cuter", "nicer", "prettier", "funnier", "schoner"})
AND_CUES = frozenset({"und", "and", "sowie"})  # "Sonne und Mond": both first, then either (`Understanding.anded`)
MAX_PHRASE = 4
MIN_WORD = 3
TYPO_WORD = 6  # a word of the question this long that is no lexicon word and in no entry may be a lexicon word
TYPO_WORD_2 = 9  # misspelt: by one edit (two from this length), with the same first letter (`_misspelt`)
CLASSICS = "klassiker"  # the category of the classics: its words ("bekannt", "popular") ask how common a name is

# "what does X mean", "was bedeutet X", … — X is the name asked about.
DEFINITION = [re.compile(p, re.IGNORECASE) for p in (
    r"\bwhat(?:'s|s| is| does)?\s+(?:the\s+)?(?:meaning|origin)\s+of\s+(?P<x>.+)",
    r"\bwhat\s+does\s+(?P<x>.+?)\s+(?:mean|stand for)\b",
    r"\bwhere\s+does\s+(?P<x>.+?)\s+come\s+from\b",
    r"(?:^|[.!?]\s+)what(?:\s+is|'s|s)\s+(?:an?\s+)?(?P<x>.+?)\s*\?*$",  # at the start: "…, what is sweeter?" compares
    r"\bmeaning\s+of\s+(?P<x>.+)",
    r"\bwas\s+(?:bedeutet|hei(?:ß|ss)t|meint)\s+(?:eigentlich\s+)?(?P<x>.+)",
    r"\bwoher\s+(?:kommt|stammt)\s+(?:eigentlich\s+)?(?P<x>.+)",
    r"\bbedeutung\s+(?:von|des\s+kosenamens)\s+(?P<x>.+)",
    r"\bherkunft\s+(?:von|des\s+kosenamens)\s+(?P<x>.+)",
    r"(?:^|[.!?]\s+)was\s+ist\s+(?:ein(?:e)?\s+)?(?P<x>.+?)\s*\?*$",
    r"\berz(?:ä|ae)hle?\s+(?:mir\s+)?(?:bitte\s+)?(?:etwas|was|mehr|alles)?\s*(?:über|ueber|zu|von)\s+(?P<x>.+)",
    r"\btell\s+me\s+(?:something\s+|more\s+|everything\s+)?about\s+(?P<x>.+)",
    r"\bwie\s+alt\s+ist\s+(?:der\s+kosename\s+|der\s+name\s+|das\s+wort\s+)(?P<x>.+)",
    r"\bhow\s+(?:do\s+(?:you|i)\s+|to\s+)(?:pronounce|spell|say)\s+(?P<x>.+)",
    r"\bwie\s+(?:spricht|schreibt)\s+man\s+(?P<x>.+?)(?:\s+aus)?\s*\?*$",
    r"\baussprache\s+(?:von\s+)?(?P<x>.+)",
    r"\bhow\s+old\s+is\s+the\s+(?:pet\s+)?(?:name|word|nickname)\s+(?P<x>.+)",
    r"\b(?:story|history)\s+(?:behind|of)\s+(?:the\s+(?:pet\s+)?(?:name|nickname)\s+)?(?P<x>.+)",
    r"\bgeschichte\s+(?:hinter|von|des\s+kosenamens|zu)\s+(?P<x>.+)",
    r"\bwas\s+versteht\s+man\s+unter\s+(?P<x>.+)",
    r"\bwer\s+wird\s+(?P<x>.+?)\s+genannt\b",
    r"\bzu\s+wem\s+sagt\s+man\s+(?P<x>.+)",
    r"\bwho\s+(?:is|gets|do\s+you)\s+call(?:ed)?\s+(?P<x>.+)",
    r"^(?P<x>[^–—:,-]+?)\s*[–—:,-]+\s*(?:was\s+(?:hei(?:ß|ss)t|bedeutet|meint)\s+das|what\s+does\s+(?:it|that)\s+mean)\b",
)]
# "Ist Spatzl frech?", "Is Knirps a funny name?", "Kann man Schatz zu Kollegen sagen?": a yes-or-no question about a
# name is answered by that name first (its entry says what it is); the name is the first title in the question.
YES_NO = re.compile(r"^\s*(?:is|isn't|are|ist|sind|kann|darf|can|could|should|may|sollte|klingt|sounds|passt|does|"
                    r"would|wäre|waere|findest\s+du|do\s+you\s+think)\b", re.IGNORECASE)
RAW_WORD = re.compile(r"[\w'’-]+")
# "what is X"/"was ist X" define only a name: a title, or one word ("was ist Spatzl?", not "was ist der beliebteste …")
WEAK_DEFINITION = frozenset(p for p in DEFINITION if p.pattern.startswith("(?:^|[.!?]\\s+)"))
# "names starting with S", "Kosenamen mit S", "mit dem Buchstaben Ä": the A–Z letter asked for (an intent).
LETTER = [re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:start(?:s|ing)?|begin(?:s|ning)?)\s+with\s+(?:the\s+letter\s+|an?\s+)?[\"'“„]?(?P<x>[a-z])[\"'”“]?(?=[\s?!.,;:]|$)",
    (r"(?:\b(?:fangen|fängt|faengt|beginnen|beginnt|starten|startet|anfangen|anfängt)\s+)?"
     r"\b(?:mit|auf)\s+(?:dem\s+|einem\s+)?(?:anfangs)?(?:buchstaben\s+)?[\"'“„]?(?P<x>[a-zäöü])[\"'”“]?(?=[\s?!.,;:]|$)"
     r"(?:\s+(?:an|anfangen|anfängt|beginnen|beginnt|starten|startet)\b)?"),
    r"\b(?:letter|anfangsbuchstaben?|buchstaben?)\s+[\"'“„]?(?P<x>[a-zäöü])[\"'”“]?(?=[\s?!.,;:]|$)",
    r"\bwith\s+(?:an?\s+|the\s+)?[\"'“„]?(?P<x>[a-z])[\"'”“]?(?=[\s?!.,;:]|$)",  # "names with a K"
)]
# "kurze Kosenamen", "short pet names", "Spitznamen, die kurz sind", "einsilbige Namen": how long the names are
# (petgen.content.text.length_class), when the word describes names: before a name word (up to two words
# between), or after one with "die … sind"/"that are" between; a syllable count needs no name word.
LENGTHS = {"kurz": frozenset({"kurz", "kurze", "kurzer", "kurzes", "kurzen", "knapp", "knappe", "knapper", "knappen",
                              "short", "shorter", "shortest", "brief", "kurzeste", "kurzesten", "kurzester"}),
           "lang": frozenset({"lang", "lange", "langer", "langes", "langen", "langere", "langeren", "long", "longer",
                              "longest", "langste", "langsten", "langster"})}
SYLLABLES = {"zweisilbig": "kurz", "zweisilbige": "kurz", "zweisilbigen": "kurz", "einsilbig": "einsilbig", "einsilbige": "einsilbig", "einsilbiger": "einsilbig",
             "einsilbigen": "einsilbig", "monosyllabic": "einsilbig"}
_RELATIVE = frozenset({"die", "der", "das", "that", "which", "are", "is", "sind", "ist", "moglichst", "sehr", "very",
                       "rather", "eher", "ziemlich", "recht", "nicht", "zu"})
PRONOUNS = frozenset({"es", "das", "er", "sie", "dies", "it", "that", "this", "he", "she", "they", "der", "die"})
OTHER_LETTERS = re.compile(r"\s*(?:,|\boder\b|\bor\b|\bund\b|\band\b)\s*[\"'“„]?(?P<x>[a-zäöü])[\"'”“]?(?=[\s?!.,;:]|$)",
                           re.IGNORECASE)
_TRIM = " \t\"'„“”‚‘’«»?!.,:;()"
NAME_WORDS = {"kosename", "kosenamen", "name", "namen", "names", "spitzname", "spitznamen", "nickname", "nicknames", "pet"}
_NOISE = {"der", "die", "das", "the", *NAME_WORDS}  # around the name asked about: "Was bedeutet der Kosename Spatzl?"
# Words that praise the name itself before "Kosename"/"name" ("ein schöner Kosename", "gute Spitznamen"):
# read as filler when the rest of the question asks for something, as a wish ("schöne Kosenamen") otherwise.
QUALITY = frozenset({"schon", "schone", "schoner", "schones", "schonen", "gut", "gute", "guter", "gutes", "guten",
                     "toll", "tolle", "toller", "tolles", "tollen", "nett", "nette", "netter", "nettes", "netten",
                     "passend", "passende", "passender", "passendes", "passenden", "beautiful", "nice", "good"})
# … and words that say the names should be sweet: with the rest of the question asking for something, they only boost
# the names that say them (a topic: "süße Spitznamen mit M für meine Freundin" keeps its letter)
SWEET = frozenset({"suss", "susse", "susser", "susses", "sussen", "niedlich", "niedliche", "niedlicher", "niedlichen",
                   "lieb", "liebe", "lieben", "sweet", "cute", "lovely", "adorable"})


@dataclass
class Understanding:
    words: list[list[str]] = field(default_factory=list)  # groups of alternative folded words to search for
    topics: list[list[str]] = field(default_factory=list)  # words that come with an intent: they boost
    relations: set[int] = field(default_factory=set)  # the topics that come with a relationship alone
    praise: set[int] = field(default_factory=set)  # the topics of a word praising the names asked for ("cute names")
    topic_of: dict[str, int] = field(default_factory=dict)  # an intent kind -> its topic group (one per kind)
    intents: dict[str, list[str]] = field(default_factory=dict)  # facet, "category" or "mood" -> values
    soft: set[str] = field(default_factory=set)  # intents that only boost (from an entry's title)
    define: str | None = None  # the name asked about in "what does X mean", as written
    define_key: str = ""  # … folded, as titles are looked up
    equivalents: str | None = None  # the name asked for in another language ("Schatz auf Englisch"), as written
    ignored: list[str] = field(default_factory=list)
    joined: set[int] = field(default_factory=set)  # word groups that form a union with the group before them
    anded: set[int] = field(default_factory=set)  # … that follow it with "und"/"and": joined when both are too few
    recipients: list[str] = field(default_factory=list)  # unknown words after "für"/"for" (whom a name is for)
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (kind, value) or ("title", word): left out
    tokens: list[str] = field(default_factory=list)  # the question's folded words
    # the posting lists of word groups as ranking looked them up (runtime/understanding.py `_sources`)
    sources: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def add_word_group(self, group: list[str], *, union: bool) -> None:
        if union and self.words:
            self.joined.add(len(self.words))
        self.words.append(group)

    def search_groups(self) -> list[list[str]]:
        """What /api/search searches for: the words and the topics (those of a relationship only when there is
        nothing else: "bavarian names for a baby" searches for Bavarian names, "für meinen Bruder" for Bruder)."""
        topics = [g for n, g in enumerate(self.topics) if n not in self.relations]
        return (self.words + topics or self.words + self.topics)[:QUERY_WORDS]  # topics count: they are searched

    def add_intent(self, kind: str, value: str) -> None:
        values = self.intents.setdefault(kind, [])
        if value not in values:
            values.append(value)

    def ignore(self, word: str) -> None:
        if word not in self.ignored:
            self.ignored.append(word)

    def summary(self) -> dict[str, Any]:
        """What `_meta.understood` says: each intent (a slug, or a list for a union), the words searched."""
        found: dict[str, Any] = {k: v[0] if len(v) == 1 else list(v) for k, v in self.intents.items() if k != "not"}
        if self.excluded:
            found["not"] = [value for _, value in self.excluded]
        if self.define is not None:
            found["define"] = self.define
        if self.equivalents is not None:
            found["equivalents"] = self.equivalents
        searched = [g[0] for g in self.words if g[0] not in self.ignored]
        if searched:
            found["words"] = searched
        return found


def _lookup(lexicon: Lexicon, phrase: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """Actions for a phrase, matched exactly or, failing that, by German stem (`frecher` → `frech`); a phrase of
    two words also in the other order, as a German clause puts its verb last ("der gern kuschelt" for the
    lexicon's `kuschelt gern`)."""
    actions = _lookup_in_order(lexicon, phrase)
    if actions is None and len(phrase) == 2:
        actions = _lookup_in_order(lexicon, phrase[::-1])
    return actions


def _lookup_in_order(lexicon: Lexicon, phrase: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """A phrase's actions, exactly or by stem; by stem only from a word at least as long as the lexicon's ("frecher"
    is "frech", but "nicht" is not "Nichte" and "lieb" not "liebster")."""
    actions = lexicon.phrases.get(phrase)
    if actions is None:
        by_stem, heads = _stem_index(lexicon)
        first = stems(phrase[0])[0]
        if len(phrase) > 1 and (len(phrase), first) not in heads:
            return None  # no phrase of the lexicon this long starts with this word: the common case, found cheaply
        for lengths, value in by_stem.get((first, *(stems(w)[0] for w in phrase[1:])), ()):
            if all(len(w) >= n for w, n in zip(phrase, lengths)):
                return value
    return actions


def _stem_index(lexicon: Lexicon) -> tuple[dict[tuple[str, ...], list[tuple[tuple[int, ...], Any]]], set[tuple[int, str]]]:
    """The lexicon's phrases by the first stems of their words (with each word's length), and the (length, first
    stem) of every phrase of two or more words; made on first use and kept on the lexicon."""
    found = getattr(lexicon, "_stem_index", None)
    if found is None:
        by_stem: dict[tuple[str, ...], list[tuple[tuple[int, ...], Any]]] = {}
        for key, value in lexicon.phrases.items():
            by_stem.setdefault(tuple(stems(w)[0] for w in key), []).append((tuple(map(len, key)), value))
        found = by_stem, {(len(key), key[0]) for key in by_stem if len(key) > 1}
        object.__setattr__(lexicon, "_stem_index", found)
    return found


def _people(question: str, lexicon: Lexicon, titles: frozenset[str]) -> set[str]:
    """Capitalised words right after a word for whom a name is for ("Freund Tom", "colleague Anna") that are no
    title and no lexicon word: a person's name (folded)."""
    raw = RAW_WORD.findall(question)
    found: set[str] = set()
    for before, word in itertools.pairwise(raw):
        if not word[:1].isupper() or not word[1:].islower():
            continue
        folded, previous = " ".join(words(word)), " ".join(words(before))
        if folded in titles or folded in lexicon.filler or _lookup(lexicon, (folded,)) is not None:
            continue
        if any(kind == "relationship" for kind, _ in _lookup(lexicon, (previous,)) or []):
            found.add(folded)
    return found


def _without_phrases(tokens: list[str], phrases: tuple[list[str], ...]) -> tuple[list[str], bool]:
    """The tokens without every occurrence of the phrases (lists of tokens), and whether there was one."""
    found = False
    for phrase in phrases:
        if phrase[0] not in tokens:  # most questions: one scan in C per phrase
            continue
        n, i = len(phrase), 0
        while i + n <= len(tokens):
            if tokens[i:i + n] == phrase:
                tokens, found = tokens[:i] + tokens[i + n:], True
            else:
                i += 1
    return tokens, found


def names_word(token: str) -> bool:
    """A word for names: "Kosenamen", "names", or a compound of one ("Tiernamen", "Koseworte", "Spitznamen")."""
    return token in NAME_WORDS or len(token) > 6 and token.endswith(("namen", "name", "names", "wort", "worte", "worter"))


def compares(tokens: list[str], lexicon: Lexicon) -> bool:
    """Whether a question compares ("was ist romantischer", "which is sweeter", "besser", "rather"): a comparison
    word, or a comparative of a lexicon word ("romantischer" of romantisch)."""
    return bool(COMPARISONS.intersection(tokens)) or any(
        len(t) > 5 and t.endswith("er") and _lookup(lexicon, (t[:-2],)) for t in tokens)


def off_topic(tokens: list[str]) -> bool:
    """Whether a question's words ask about something else (`OFF_TOPIC`) and never for names."""
    if NAME_WORDS.intersection(tokens) or ASKS_FOR_NAMES.intersection(tokens):
        return False
    return any(tuple(tokens[i:i + len(cue)]) == cue for i, token in enumerate(tokens) for cue in _OFF_BY_FIRST.get(token, ()))


def _misspelt(lexicon: Lexicon, word: str, titles: frozenset[str],
              known: Callable[[str], bool]) -> tuple[str, list[tuple[str, str]]] | None:
    """The lexicon word (an intent's or filler) that `word` misspells and what it says, if `word` is of TYPO_WORD
    letters or more, no title, in no entry (`known`), and within one edit (two from TYPO_WORD_2 letters) of
    lexicon words with the same first letter that say something alike (what they all say); else None. Words that only translate are not candidates: a
    misspelt English word is more often another word ("bake" is not "babe")."""
    if len(word) < TYPO_WORD or word in titles or known(word):
        return None
    near: dict[str, list[str]] | None = getattr(lexicon, "_near", None)
    if near is None:
        near = {}
        single = [k[0] for k, actions in lexicon.phrases.items()
                  if len(k) == 1 and any(kind != "translate" for kind, _ in actions)]
        for candidate in sorted({*single, *lexicon.filler}):
            if len(candidate) >= TYPO_WORD - 1:
                near.setdefault(candidate[0], []).append(candidate)
        object.__setattr__(lexicon, "_near", near)
    limit = 2 if len(word) >= TYPO_WORD_2 else 1
    found = extract(word, near.get(word[0], []), scorer=OSA.distance, score_cutoff=limit, limit=8)
    if not found:
        return None
    best = min(distance for _, distance, _ in found)
    nearest = [candidate for candidate, distance, _ in found if distance == best]
    readings = [[] if w in lexicon.filler else lexicon.phrases[(w,)] for w in nearest]
    agreed = [action for action in readings[0] if all(action in other for other in readings[1:])]
    if agreed or not any(readings):  # what all of them say ("verlobtn": verlobte, verlobten → partner)
        return nearest[0], agreed
    return None


def _recipient(translation: list[str], lexicon: Lexicon) -> list[tuple[str, str]]:
    """Whom a word is for, through the words it translates to ("sweetheart" → Schatz → a partner)."""
    return [(kind, value) for word in translation for kind, value in _lookup(lexicon, (word,)) or []
            if kind in ("relationship", "gender")]


def _after_cue(tokens: list[str], start: int, lexicon: Lexicon) -> bool:
    """Whether the phrase at `start` follows "für"/"for"/"zu"/"to", with only filler in between (not "alternatives
    to", "Alternativen zu": what follows those is a name to leave out, not whom it is for)."""
    i = start - 1
    while i >= 0 and tokens[i] in lexicon.filler and tokens[i] not in RECIPIENT_CUES:
        i -= 1
    return i >= 0 and tokens[i] in RECIPIENT_CUES and not (i and tokens[i - 1] in OTHER_THAN)


def _definition(question: str, titles: frozenset[str]) -> tuple[str, str] | None:
    for pattern in DEFINITION:
        match = pattern.search(question)
        if match:
            target = match.group("x").strip(_TRIM)
            target = re.split(r"\s+(?:eigentlich|genau|überhaupt|actually|exactly)\b", target)[0].strip(_TRIM)
            target = re.split(r"\s+(?:und|and|oder|or|but|aber)\s+|\s*[,;:–—?!]\s*|\s+-\s+", target)[0].strip(_TRIM)
            if target.lower() in PRONOUNS or target.split()[0].lower() in PRONOUNS - {"der", "die"}:
                continue  # "… und woher kommt es?", "was heißt das auf Hochdeutsch": the name came earlier
            target_words = [w for w in words(target) if w not in _NOISE]
            if pattern in WEAK_DEFINITION and len(target_words) > 1 and " ".join(target_words) not in titles:
                continue  # "Was ist der beliebteste Kosename in Deutschland?" asks for names, not a meaning
            if pattern in WEAK_DEFINITION and UNION_CUES.intersection(words(question)):
                continue  # "Was ist romantischer, Hase oder Maus?" compares
            if target_words and len(target_words) <= 3:
                return target, " ".join(target_words)
    return _asked_about(question, titles) if YES_NO.match(question) else None


def _asked_about(question: str, titles: frozenset[str]) -> tuple[str, str] | None:
    """The first title in a question (up to MAX_PHRASE words; not a word for names), as written and folded."""
    raw = RAW_WORD.findall(question)
    folded = [" ".join(words(w)) for w in raw]
    for i in range(1, len(raw)):  # the first word is the question's verb
        if folded[i] in NAME_WORDS:
            continue
        for size in range(min(MAX_PHRASE, len(raw) - i), 0, -1):
            key = " ".join(f for f in folded[i:i + size] if f)
            if key in titles:
                return " ".join(raw[i:i + size]), key
    return None


def understand(question: str, lexicon: Lexicon, titles: frozenset[str] = frozenset(),
               aliases: dict[str, tuple[str, str]] | None = None,
               known: Callable[[str], bool] | None = None) -> Understanding:
    """Turn a question into word groups, intents and ignored words (see the module's docstring)."""
    result = Understanding()
    define = _definition(question, titles)
    if define is not None:
        result.define, result.define_key = define
        result.words = [[w] for w in analyze(result.define_key)]
        return result
    for pattern in LETTER:
        match = pattern.search(question)
        if match and not (match.group("x") == "a" and re.match(r"\s+\w", question[match.end():])
                          and not re.match(r"\s+(?:an|anfangen|anfängt|beginnen|beginnt|starten)\b", question[match.end():])):  # "with a sweet …"
            negated = bool(NEGATIONS.intersection(words(question[:match.start()])[-2:]))  # "nicht mit S", "not starting"
            letters = [initial(match.group("x"))]
            end = match.end()
            for more in OTHER_LETTERS.finditer(question, end):  # "mit L oder M", "with A, B or C": any of them
                if more.start() != end:
                    break
                letters.append(initial(more.group("x")))
                end = more.end()
            for letter in letters:
                if negated:
                    result.excluded.append(("letter", letter))
                else:
                    result.add_intent("letter", letter)
            before = question[:match.start()]
            if negated:  # "nicht mit S anfangen für mein Baby": the negation was the letter's, not the next phrase's
                for raw in list(RAW_WORD.finditer(before))[-2:][::-1]:
                    if NEGATIONS.intersection(words(raw.group())):
                        before = before[:raw.start()] + " " + before[raw.end():]
            question = before + " " + question[end:]
            break
    tokens = words(question)
    length = _length(tokens, lexicon)
    if length is not None:
        at, value = length
        result.add_intent("length", value)
        said = LENGTHS.get(value, frozenset())  # "knappe, kurze Kosenamen": both words say it
        tokens = [t for i, t in enumerate(tokens) if i not in at and t not in said]
    people = _people(question, lexicon, titles)
    if people:  # "meinen Freund Tom", "my colleague Anna": whom it is for, by name; not a word to search
        for name in people:
            result.ignore(name)
        tokens = [t for t in tokens if t not in people]
    tokens, unusual = _without_phrases(tokens, UNUSUAL_PHRASES)
    if unusual or UNUSUAL.intersection(tokens):
        result.excluded.append(("category", CLASSICS))
        tokens = [t for t in tokens if t not in UNUSUAL]
    quality = [i for i in range(len(tokens) - 1) if tokens[i] in QUALITY | SWEET and names_word(tokens[i + 1])]
    if quality:  # "ein schöner Kosename für meine Mama": read without "schöner" when the rest asks for something
        rest = _read([t for i, t in enumerate(tokens) if i not in quality], lexicon, titles, aliases, known,
                     replace(result, intents={k: list(v) for k, v in result.intents.items()}))
        if rest.words or rest.intents:
            for i in quality:
                if tokens[i] in SWEET:  # as the lexicon translates it ("sweet" → Süße, Süßer)
                    said = [w for kind, value in _lookup(lexicon, (tokens[i],)) or [] if kind == "translate"
                            for w in analyze(value)]
                    rest.topics.append(list(dict.fromkeys(said)) or [tokens[i]])
                    rest.praise.add(len(rest.topics) - 1)
                else:
                    rest.ignore(tokens[i])
            rest.tokens = tokens
            return _bounded(rest)
    found = _bounded(_read(tokens, lexicon, titles, aliases, known, result))
    found.tokens = tokens
    _languages_of_names(found, tokens, lexicon)
    categories = found.intents.get("category", [])
    if CLASSICS in categories and (len(categories) > 1 and not UNION_CUES.intersection(tokens) or "region" in found.intents):
        categories.remove(CLASSICS)  # "klassische Tiernamen": animal names, the classics first (by their standing);
        if not categories:  # "typisch Berliner": a region's names are seldom classics anywhere
            del found.intents["category"]
    return found


def _languages_of_names(result: Understanding, tokens: list[str], lexicon: Lexicon) -> None:
    """Of several languages, the ones said of the names ("English pet names", "italienische Kosenamen") when
    another is said of people ("… Germans use", "… my German friends"): "english pet names germans use"
    asks for English names."""
    languages = result.intents.get("language", [])
    if len(languages) < 2:
        return
    def language(token: str) -> list[str]:
        return [value for kind, value in _lookup(lexicon, (token,)) or [] if kind == "language"]

    of_names: list[str] = []
    for j, token in enumerate(tokens):  # the languages right before a word for names, with "or"/"and" between
        k = j - 1 - (j > 0 and tokens[j - 1] == "pet")
        while names_word(token) and k >= 0 and (language(tokens[k]) or tokens[k] in UNION_CUES | AND_CUES):
            of_names.extend(language(tokens[k]))
            k -= 1
    if of_names and set(of_names) < set(languages):
        result.intents["language"] = [value for value in languages if value in of_names]


def _bounded(result: Understanding) -> Understanding:
    """The first QUERY_WORDS word groups searched, the others ignored: a query's cost grows with its words."""
    for group in result.words[QUERY_WORDS:]:
        result.ignore(group[0])
    del result.words[QUERY_WORDS:]
    result.joined = {n for n in result.joined if n < QUERY_WORDS}
    result.anded = {n for n in result.anded if n < QUERY_WORDS}
    return result


def _snapshot(result: Understanding) -> Understanding:
    return replace(result, words=list(result.words), topics=[list(g) for g in result.topics],
                   relations=set(result.relations), praise=set(result.praise), topic_of=dict(result.topic_of),
                   intents={k: list(v) for k, v in result.intents.items()}, soft=set(result.soft),
                   joined=set(result.joined), anded=set(result.anded), recipients=list(result.recipients))


def _leave_out(result: Understanding, before: Understanding) -> None:
    """What the last phrase added (words, intents) becomes what the answer leaves out; the rest is as before."""
    for group in result.words[len(before.words):]:
        result.excluded.extend(("title", w) for w in group if ("title", w) not in result.excluded)
    for kind, values in result.intents.items():
        if kind in result.soft and kind not in before.soft:
            continue  # "nicht Schatz": the name is left out, not every partner name
        result.excluded.extend((kind, v) for v in values if v not in before.intents.get(kind, [])
                               and (kind, v) not in result.excluded)
    for name in ("words", "topics", "relations", "praise", "topic_of", "intents", "soft", "joined", "anded", "recipients"):
        setattr(result, name, getattr(before, name))


def _length(tokens: list[str], lexicon: Lexicon) -> tuple[tuple[int, ...], str] | None:
    """The positions and value of the words asking for short or long names (see LENGTHS), if any. A length word that
    begins a lexicon phrase is that phrase ("long distance" says whom a name is for, not how long it is)."""
    names = [i for i, t in enumerate(tokens) if names_word(t)]
    for i, token in enumerate(tokens):
        if token in SYLLABLES:
            return (i,), SYLLABLES[token]
        if token in ("syllable", "silbe", "syllables", "silben") and i and tokens[i - 1] in ("one", "single", "einer", "1"):
            return (i - 1, i), "einsilbig"  # "one-syllable", "1 syllable"
        if token in ("syllable", "syllables", "silben") and i and tokens[i - 1] in ("two", "zwei", "2"):
            return (i - 1, i), "kurz"  # "mit zwei Silben", "1-2 syllable"
        value = next((v for v, said in LENGTHS.items() if token in said), None)
        if value is None or any(_lookup(lexicon, tuple(tokens[i:i + n])) for n in range(2, MAX_PHRASE + 1)
                                if i + n <= len(tokens)):
            continue
        if any(0 < j - i <= 3 for j in names):  # "kurze Kosenamen", "short cute pet names"
            return (i,), value
        if any(0 < i - j <= 4 and all(t in _RELATIVE for t in tokens[j + 1:i]) and i - j > 1 for j in names):
            return (i,), value  # "Kosenamen, die kurz sind", "names that are short"
    return None


def _read(tokens: list[str], lexicon: Lexicon, titles: frozenset[str], aliases: dict[str, tuple[str, str]] | None,
          known: Callable[[str], bool] | None, result: Understanding) -> Understanding:
    """The question's words read into `result`, phrase by phrase; a word `_misspelt` is corrected in `tokens`."""
    i = 0
    # a name typed is that name, not the names it translates to ("honey": Honey, not Schatz), unless the question
    # asks for another language ("how do Italians say sweetheart": Tesoro, through Schatz)
    foreign = any(kind == "language" and value != "deutsch" for t in tokens for kind, value in _lookup(lexicon, (t,)) or [])
    after_words = False  # the last phrase read (filler aside) added a word group
    cue = ""  # "oder" or "und" followed it
    negate = negated = False  # "ohne"/"nicht"/"not" came before the next phrase; the last phrase was left out
    while i < len(tokens):
        if tokens[i] in NEGATIONS and not any(_lookup(lexicon, tuple(tokens[i:i + n]))  # not "nicht binär", "nie aus dem Bett"
                                              for n in range(2, MAX_PHRASE + 1) if i + n <= len(tokens)):
            negate, i = True, i + 1
            continue
        if tokens[i] in OTHER_THAN and i + 1 < len(tokens) and tokens[i + 1] in ("als", "than", "to", "zu") \
                or tokens[i] in ("anything", "everything", "alles") and i + 1 < len(tokens) and tokens[i + 1] in ("but", "ausser"):
            negate, i = True, i + 2  # "etwas anderes als Schatz", "other than Schatz", "anything but honey", "alles außer"
            continue
        union = cue == "or" and after_words  # "X oder Y": Y joins X's group when both are read as words
        anded = cue in ("and", "") and after_words  # "X und Y", "X Y": the same, when both together are too few
        count, filler = len(result.words), False
        leave_out = negate or (negated and cue in ("and", "or"))  # "ohne Tiere und Blumen": both left out
        before = _snapshot(result) if leave_out else None
        for size in range(min(MAX_PHRASE, len(tokens) - i), 0, -1):
            phrase = tokens[i:i + size]
            actions = [] if size == 1 and tokens[i] in lexicon.filler else _lookup(lexicon, tuple(phrase))
            if actions is None and size > 2 and INSERTS.intersection(phrase[1:-1]):
                bare = [phrase[0], *(t for t in phrase[1:] if t not in INSERTS)]
                actions = _lookup(lexicon, tuple(bare))
                phrase = bare if actions is not None else phrase
            if actions is None and size == 1 and known is not None:
                corrected = _misspelt(lexicon, tokens[i], titles, known)
                if corrected is not None:  # "romantsche" → romantische, "girlfreind" → girlfriend
                    tokens[i], actions = corrected
                    phrase = [tokens[i]]
            if actions is None:
                continue
            if not actions:  # filler: a word, or a phrase the lexicon lists without translations ("den ganzen Tag")
                for token in tokens[i:i + size]:
                    result.ignore(token)
                filler = True
                cue = cue or ("or" if tokens[i] in UNION_CUES else "and" if tokens[i] in AND_CUES else "")
                i += size
                break
            text = " ".join(phrase)
            as_name = text in titles and not _after_cue(tokens, i, lexicon) \
                and not (i + size < len(tokens) and names_word(tokens[i + size])  # "Baby-Kosenamen", "baby nicknames"
                         and any(kind == "relationship" for kind, _ in actions))
            translation: list[str] = []
            intents = []
            standing = False  # a word for the classics ("bekannt", "popular") says how common a name is, not its topic
            for kind, value in actions:
                if kind == "translate":
                    translation.extend(w for w in analyze(value) if w not in translation)
                    continue
                if kind == "categories" and aliases and value in aliases and aliases[value][1] != EVERY_REGION:
                    kind, value = aliases[value]
                kind = {"categories": "category", "moods": "mood"}.get(kind, kind)
                if (kind, value) == ("category", CLASSICS):
                    standing = True
                else:
                    intents.append(kind)
                result.add_intent(kind, value)
                if as_name:
                    result.soft.add(kind)
            if as_name:
                if size == 1:
                    result.words.append([*phrase, *(w for w in translation if w not in phrase and (foreign or w not in titles))])
                else:
                    result.words.extend([w] for w in phrase)
            elif intents or standing:
                topical = [k for k in intents if k in ("category", "mood", "region", "relationship")]  # not language:
                # "German" would boost the names whose glosses say "Swiss German"
                group = translation or (list(phrase) if topical and size == 1 else [])
                at = result.topic_of.get(topical[0]) if len(topical) == 1 else None
                if group and at is not None:  # "Saxon or Franconian": one facet's words are one group, any of them
                    result.topics[at].extend(w for w in group if w not in result.topics[at])
                elif group:
                    result.topics.append(group)
                    if len(topical) == 1:
                        result.topic_of[topical[0]] = len(result.topics) - 1
                    if topical == ["relationship"]:  # "Bruder": boosts /ask's names about brothers, not search's
                        result.relations.add(len(result.topics) - 1)
            elif translation and i and tokens[i - 1] in POSSESSIVES and _after_cue(tokens, i, lexicon) \
                    and (whom := _recipient(translation, lexicon)):
                for kind, value in whom:  # "for my sweetheart": whom it is for, as
                    result.add_intent(kind, value)  # "für meinen Schatz" says it
            elif translation:
                result.add_word_group(translation, union=union)
            i += size
            break
        else:
            token = tokens[i]
            if len(token) < MIN_WORD and token not in titles:
                result.ignore(token)
                filler = True  # as filler: "isn't flirty" (isn, t) still leaves out what follows
            elif [token] not in result.words:
                result.add_word_group([token], union=union)
                if _after_cue(tokens, i, lexicon):  # "für meine Zwillinge": whom for, if nothing answers it
                    result.recipients.append(token)
            i += 1
        if not filler:
            if before is not None:
                _leave_out(result, before)
            if anded and len(result.words) == count + 1:
                result.anded.add(count)
            after_words, cue = len(result.words) > count, ""
            negate, negated = False, before is not None
    return result



"""How `/ask` ranks entries for a question read by runtime/reading.py (runtime/ask.py sends the answer).

Each entry gets a score in 0..1: the weighted mean of how well it matches each word
group (confidence from petgen/search/query.py; weight 1, or 0.5 for a topic word that comes with an
intent, like `Blume` with the category natur or `Bruder` with the relationship familie) and of each intent it satisfies (weight 0.5; for
gender, a name for anyone counts 0.9), times 0.92, plus 0.08 × its standing (`standing`: a classic, a name
used everywhere when the question asks no region, and how often other entries name it as related). Intents
filter: only entries that satisfy all of them are answered. When fewer than `limit` entries above
the confidence floor (`FLOOR`) would be left, filters are relaxed one at a time in `RELAX_ORDER`
(length, mood, category, language, region, gender, relationship, letter, not); a relaxed intent still counts in the
score, and `_meta.relaxed` names it. Entries below the floor are never answered: a question the
knowledge base cannot answer confidently gets an empty result and a hint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from petgen.content.model import SUPRAREGIONAL
from petgen.search.query import Hit, SearchIndex, prefix_share, prefix_words
from petgen.search.stored import HEAD, Posting
from petgen.search.topk import HEAD_GROWTH, MAX_HEAD, Source, Weighted
from runtime import equivalents
from runtime.builds.dist import Dist
from runtime.reading import (ASKS_FOR_NAMES, CLASSICS, MIN_WORD, NAME_WORDS, RECIPIENT_CUES, Understanding, compares, folded,
                             off_topic, understand)

FLOOR = 0.4  # no answer scores below this
PLACES = frozenset({"region", "language", "not"})  # intents that a question about something else names as often
WEAK = 0.5  # a word group no entry matches better than this (meanings only) is dropped when there is more
INTENT_WEIGHT = 0.5
SOFT_WEIGHT = 0.1  # an intent that comes with an entry's title ("Baby"): a tie-breaker, not a filter
TOPIC_WEIGHT = 0.5
# a topic of a word praising the names asked for ("cute names for my cat", "süße Kosenamen für meine Katze"), beside
# words to search: it orders the names that match them alike, but does not lift a name that matches them worse (Putzi,
# "cute", a pet's name) over one that matches them better (Kätzchen); with no words, it weighs as any topic
PRAISE_WEIGHT = 0.25
ANYONE = 0.9  # a name for anyone, when a gender was asked for
CLASSIC_SHARE = 0.08  # of the score: a name's standing (`standing`): a classic, and used everywhere
# the standing of a classic, of a name used everywhere (when no region is asked), of the name most often named as
# related by other entries (others: by the log of their count against its)
CLASSIC, EVERYWHERE, CITED = 0.5, 0.3, 0.2
FACETS = ("relationship", "gender", "region", "language")
RELAX_ORDER = ("length", "mood", "category", "language", "region", "gender", "relationship", "letter", "not")
# Family members whose names say whom they are for (Schwesterchen, Bruderherz): a question about another member
# leaves them out ("Kosename für meine Mama" does not answer Schwesterchen).
FAMILY = {"schwester": {"schwester", "sister", "schwesterchen"}, "bruder": {"bruder", "brother", "bruderchen"},
          "mama": {"mama", "mutter", "mom", "mum", "mother", "mami", "mutti", "schwiegermutter", "schwiegermama",
                   "stiefmutter", "stepmom", "stepmother", "eltern", "parents"},
          "papa": {"papa", "vater", "dad", "father", "papi", "vati", "schwiegervater", "schwiegerpapa", "stiefvater",
                   "stepdad", "stepfather", "eltern", "parents"},
          "oma": {"oma", "omi", "grandma", "granny", "grandmother", "grossmutter", "grosseltern", "grandparents"},
          "opa": {"opa", "opi", "grandpa", "grandfather", "grossvater", "grosseltern", "grandparents"},
          "tochter": {"tochter", "daughter"}, "sohn": {"sohn", "son"}, "tante": {"tante", "aunt"},
          "onkel": {"onkel", "uncle"}}
# Whom one works with, lives next to or learns with: romantic and passionate names are left out ("Spitzname für den
# Chef" does not answer Liebste, nor "für meine Nachbarin").
ACQUAINTANCES = frozenset({"nachbar", "nachbarin", "nachbarn", "neighbor", "neighbour", "neighbors", "neighbours",
                           "mitbewohner", "mitbewohnerin", "roommate", "flatmate", "mitschuler", "mitschulerin",
                           "classmate", "lehrer", "lehrerin", "teacher"})
WORKPLACE = folded({"buro", "office", "work", "arbeit", "team", "chef", "chefin", "boss", "kollege", "kollegin", "kollegen", "vorgesetzter", "vorgesetzte",
                       "vorgesetzten", "arbeitskollege", "arbeitskollegin", "arbeitskollegen", "coworker",
                       "teamkollege", "teamkollegin", "colleague", "colleagues", "coworkers", "teammate", "teammates",
                       "abteilung", "firma", "job", "kollegium", "workplace"})
# … nor cuddly or tender ones ("office nicknames for colleagues" does not answer Knuddel)
AT_WORK = (("mood", "romantisch"), ("mood", "leidenschaftlich"), ("mood", "kuschelig"), ("mood", "zaertlich"))
# An older family member or an elderly person: names only children are given (for children, not for partners or
# friends) are left out
# ("nostalgische Kosenamen für den Opa" does not answer Dreikäsehoch).
ELDERS = folded({"oma", "omi", "opa", "opi", "grandma", "grandpa", "granny", "grandmother", "grandfather", "grossmutter",
                 "grossvater", "grosseltern", "grandparents", "mama", "mutter", "mom", "mum", "mother", "mami", "mutti",
                 "papa", "vater", "dad", "father", "papi", "vati", "eltern", "parents", "tante", "aunt", "onkel",
                 "uncle", "schwiegermutter", "schwiegervater", "schwiegermama", "schwiegerpapa", "stiefmutter",
                 "stiefvater", "stepmom", "stepdad", "stepmother", "stepfather", "senioren", "seniorin", "senior",
                 "seniors", "elderly", "rentner", "rentnerin", "pensioner", "pensioners"})
FOR_CHILDREN = ("childish", "kind")  # an exclusion: the names for children only (`left_out`) …
YOUNG = ("klein", "jung", "madl", "deern", "baby", "bub")  # … and the names whose title says young or little
NOT_WEIGHT = 0.1  # what leaving something out counts in the score: it filters, it hardly ranks
BOUNDED_HEAD = 512  # /ask ranks from heads of up to this many documents per long list before scoring every match


# ---------------------------------------------------------------------------------------------
# Ranking


@dataclass
class Answer:
    meaning: Understanding
    hits: list[Hit]
    relaxed: list[str] = field(default_factory=list)
    suggestions: list[Hit] = field(default_factory=list)
    hint: str | None = None  # why the result is empty, when the general hint would not say
    unmet: dict[int, list[str]] = field(default_factory=dict)  # document -> the relaxed filters it does not meet


def satisfaction(kind: str, values: list[str], dist: Dist) -> np.ndarray:
    """Per document: 1 if it has one of the asked-for values, ANYONE for a name for anyone when a
    gender was asked for, 0 otherwise (computed once per distinct filter)."""
    return _filter(kind, values, dist)[0]


def _filter(kind: str, values: list[str], dist: Dist) -> tuple[np.ndarray, Posting]:
    def make() -> np.ndarray:
        if kind == "not":  # every entry but those left out
            kept = np.ones(len(dist.items))
            for value in values:
                kept[left_out(*value.split("=", 1), dist)] = 0.0
            return kept
        found = np.zeros(len(dist.items))
        for value in values:
            found[dist.mask(kind, value)] = 1.0
        if kind == "gender" and "alle" not in values:
            anyone = dist.mask("gender", "alle")
            found[anyone] = np.maximum(found[anyone], ANYONE)
        return found

    return dist.search.posting_of((kind, tuple(values)), make)


def left_out(kind: str, value: str, dist: Dist) -> np.ndarray:
    """The entries an exclusion names, as a boolean array: a facet, category or mood value, ("title", word) the
    names whose folded title contains the word ("ohne Maus": Maus, Mausi, Mäuschen, Kuschelmaus), ("begins", word)
    those whose title starts with it (another family member's names: Schwesterchen, Bruderherz), `FOR_CHILDREN` the
    names given to children only."""
    if kind == FOR_CHILDREN[0]:  # given to children, and to no partner or friend
        return dist.mask("relationship", "kind") & ~dist.mask("relationship", "partner") & ~dist.mask("relationship", "freunde")
    if kind not in ("title", "begins"):
        return dist.mask(kind, value)
    return dist.titles_with(value, at_start=kind == "begins")


def standing(dist: Dist, everywhere: bool, native: bool = True) -> tuple[np.ndarray, Posting]:
    """Per document, 0..1: CLASSIC for a classic, plus EVERYWHERE for a name used everywhere (region
    ueberregional) when the question asks no region (`everywhere`): Schatz before Madl and Deern, unless asked;
    — and, when it asks no language (`native`), a German one: Bär before Habibi for a grandfather —
    plus up to CITED by how often other entries name it as related (`Dist.cited_share`): Schatz before Hasi."""
    def make() -> np.ndarray:
        values = dist.classic_mask * (CLASSIC if everywhere else CLASSIC + EVERYWHERE) + CITED * dist.cited_share
        if everywhere:
            used = dist.mask("region", SUPRAREGIONAL)
            values = values + EVERYWHERE * (used & dist.mask("language", "deutsch") if native else used)
        return values

    return dist.search.posting_of(("standing", everywhere, native), make)


def answer(question: str, dist: Dist, limit: int) -> Answer:
    """Understand the question and rank entries for it."""
    wanted = equivalents.read(question, dist)
    if wanted is not None:  # "Schatz auf Englisch": the entries in that language that correspond to it
        meaning = Understanding(intents={"language": [wanted.language]}, equivalents=wanted.written)
        hits = equivalents.rank(wanted, dist, limit, FLOOR)
        if hits or not wanted.word:  # a word no name says in that language: read as any other question
            return Answer(meaning, hits, hint=None if hits else equivalents.none_hint(wanted, dist))
    meaning = understand(question, dist.lexicon_index, dist.title_words, dist.aliases, dist.search.knows)
    _named_recipient(meaning, dist)
    missing = _without_entries(meaning, dist)
    if missing is not None:  # "russische Kosenamen": none of that language; not German names in its place
        return Answer(meaning, [], suggestions=[], hint=missing)
    said = set(meaning.tokens)
    asked = {member for member, words_for in FAMILY.items() if words_for & said or member in said}
    for member in [member for member in FAMILY if member not in asked] if asked else ():  # in a stable order
        if ("begins", member) not in meaning.excluded and left_out("begins", member, dist).any():
            meaning.excluded.append(("begins", member))
    if ELDERS & said and FOR_CHILDREN not in meaning.excluded:
        meaning.excluded.append(FOR_CHILDREN)
        meaning.excluded.extend(("title", word) for word in YOUNG if ("title", word) not in meaning.excluded)
    if (WORKPLACE | ACQUAINTANCES) & said:
        meaning.excluded.extend(x for x in AT_WORK if x not in meaning.excluded)
    if meaning.excluded:  # what names no entry is not left out ("ohne xyz"), the rest filters as "not"
        for kind, value in list(meaning.excluded):
            if not left_out(kind, value, dist).any():
                meaning.excluded.remove((kind, value))
                meaning.ignore(value)
        if meaning.excluded:
            meaning.intents["not"] = [f"{kind}={value}" for kind, value in meaning.excluded]
    if not (meaning.words or meaning.topics or meaning.define) and set(meaning.intents) <= {"not"} \
            and NAME_WORDS & set(meaning.tokens) and ("category", CLASSICS) not in meaning.excluded:
        meaning.add_intent("category", CLASSICS)  # "Kosenamen", "pet names, nothing cheesy": the classics
    if sum(g[0] in dist.title_words for g in meaning.words) >= 2 and compares(meaning.tokens, dist.lexicon_index):
        meaning.soft |= set(meaning.intents) - {"not"}  # "Hase oder Maus – was ist romantischer?": both, first
    if off_topic(meaning.tokens) and meaning.define is None:  # "how to train a puppy", "wie alt ist …", "… lyrics"
        return Answer(meaning, [], suggestions=[], hint=None)
    found = _rank(meaning, dist, limit)
    if found is not None and meaning.anded and (len(found[0]) < limit or found[1]):
        found = _either(meaning, dist, limit, found)
    if found is None:
        return Answer(meaning, [], suggestions=dist.search.suggest(question), hint=recipient_hint(meaning))
    hits, relaxed = descending(found[0]), found[1]
    suggestions = dist.search.suggest(meaning.define or question) if not hits else []
    missed = unmet(meaning, relaxed, hits, dist)
    wordless = _without_words(meaning, dist, hits)
    for doc in wordless:
        missed.setdefault(doc, []).append("words")
    return Answer(meaning, hits, [*relaxed, "words"] if wordless else relaxed, suggestions,
                  hint=None if hits else recipient_hint(meaning), unmet=missed)


def _without_words(meaning: Understanding, dist: Dist, hits: list[Hit]) -> list[int]:
    """The hits that match none of the question's words, only what it asks for besides ("Kosename für mein Baby,
    das ständig kichert": Kichererbse, then names for babies that say nothing of giggling): they fill up a list,
    and say so (`relaxed: ["words"]`)."""
    searched = [g for g in meaning.words if g[0] not in meaning.ignored]
    if not hits or not searched or meaning.define is not None or not (meaning.intents or meaning.topics):
        return []
    index, docs = dist.search, np.asarray([hit.doc for hit in hits], dtype=np.int32)
    fanout = _fanout(meaning)  # as the ranking looked the groups up: `_sources` has them
    matched = np.zeros(len(docs), dtype=bool)
    for group in searched:
        matched |= index.values_at(_sources(meaning, index, group, len(group[0]) >= MIN_WORD, fanout), docs) > 0
    return [int(doc) for doc in docs[~matched]]


def _fanout(meaning: Understanding) -> int:
    """Each word's share of prefix completions: the question's words and topic words share the engine's budget, as
    a search query's words do (none for a definition, which searches no prefixes)."""
    if meaning.define is not None:
        return prefix_share(0)
    return prefix_share(prefix_words([g for g in (*meaning.words, *meaning.topics) if len(g[0]) >= MIN_WORD]))


def _sources(meaning: Understanding, index: SearchIndex, group: list[str], prefix: bool, fanout: int,
             typos: bool = True) -> list[Source]:
    """A word group's posting lists, looked up once per question (ranking, "either", the words check all ask)."""
    key = (tuple(group), prefix, fanout, typos)
    found = meaning.sources.get(key)
    if found is None:
        found = meaning.sources[key] = index.sources(group, prefix=prefix, fanout=fanout, typos=typos)
    return found


def _without_entries(meaning: Understanding, dist: Dist) -> str | None:
    """Intent values no entry has are dropped (and ignored); when every language or region asked for is such a
    value, there is nothing to answer: the hint names the ones the knowledge base has."""
    for kind in ("language", "region", "category", "mood"):
        values = meaning.intents.get(kind, [])
        kept = [value for value in values if dist.mask(kind, value).any()]
        if kept == values:
            continue
        for value in values:
            if value not in kept:
                meaning.ignore(value)
        if kept:
            meaning.intents[kind] = kept
            continue
        del meaning.intents[kind]
        if kind in ("language", "region"):
            have = [value for value in dist.facets.get(kind, []) if dist.facet_counts.get(kind, {}).get(value)]
            return (f"the knowledge base has no names of {kind} {', '.join(values)}; ask for one it has: "
                    f"{', '.join(have)}")
    return None


def _named_recipient(meaning: Understanding, dist: Dist) -> None:
    """"für meine Holde", "for my Prinzessin": whom it is for is called by a name of the knowledge base; the
    question asks for names for whom that name is for (its relationships, any of them, and its gender), the name
    itself only boosts."""
    if "relationship" in meaning.intents:
        return
    for word in meaning.recipients:
        docs = dist.docs_by_title.get(word)
        entry = dist.items[docs[0]] if docs and [word] in meaning.words else None
        if entry is None or not entry.get("relationship"):
            continue
        meaning.words.remove([word])
        meaning.topics.append([word])
        for value in entry["relationship"]:
            meaning.add_intent("relationship", value)
        if entry.get("gender") in ("sie", "ihn") and "gender" not in meaning.intents:
            meaning.add_intent("gender", entry["gender"])
        return


def unmet(meaning: Understanding, relaxed: list[str], hits: list[Hit], dist: Dist) -> dict[int, list[str]]:
    """For each hit that does not meet every filter, the relaxed filters it does not meet (in `relaxed` order)."""
    filters = [(kind, satisfaction(kind, meaning.intents[kind], dist)) for kind in relaxed if kind in meaning.intents]
    found: dict[int, list[str]] = {}
    for hit in hits:
        missed = [kind for kind, met in filters if met[hit.doc] == 0]
        if missed:
            found[hit.doc] = missed
    return found


def descending(hits: list[Hit]) -> list[Hit]:
    """The hits with scores that never rise down the list: an entry placed after others because it meets fewer
    filters (`relaxed`) or matches fewer of the words joined by "und" shows at most the score of the one before."""
    out: list[Hit] = []
    for hit in hits:
        out.append(hit if not out or hit.score <= out[-1].score else replace(hit, score=out[-1].score))
    return out


def _either(meaning: Understanding, dist: Dist, limit: int,
            both: tuple[list[Hit], list[str]]) -> tuple[list[Hit], list[str]]:
    """Words joined by "und"/"and" that too few entries match together ("Sonne und Mond"), or only with a filter
    relaxed: each word alone, as with "oder". Entries matching both (and every filter) come first; `relaxed`
    says "and"."""
    either = replace(meaning, joined=meaning.joined | meaning.anded, ignored=list(meaning.ignored))
    found = _rank(either, dist, limit)
    if found is None:
        return both
    hits, relaxed = found
    if both[1]:  # the words together passed only with a filter relaxed: either word, with fewer relaxed
        return (hits, ["and", *relaxed]) if len(relaxed) < len(both[1]) else both
    seen = {hit.doc for hit in both[0]}
    extra = [hit for hit in hits if hit.doc not in seen][:limit - len(both[0])]
    return (both[0] + extra, ["and", *relaxed]) if extra else both


def recipient_hint(meaning: Understanding) -> str | None:
    """For an empty answer to a question naming whom it is for in words the knowledge base does not know."""
    unknown = [w for w in meaning.recipients if w in meaning.ignored]
    if not unknown:
        return None
    return (f"nothing in the knowledge base matches '{unknown[0]}'; if that is whom the name is for: its names are "
            "sorted by relationship (partner, kind, familie, freunde), gender and region; ask for one of those "
            "('Kosename für meine Oma', 'names for a friend')")


def _rank(meaning: Understanding, dist: Dist, limit: int) -> tuple[list[Hit], list[str]] | None:
    """The best `limit` entries for a reading and the filters relaxed; None when nothing of it can be searched."""
    index = dist.search
    prefix_ok = meaning.define is None
    fanout = _fanout(meaning)
    labelled: list[tuple[str, list[Source], float]] = []
    unknown = 0  # the question's words that match no entry at all
    for kind in (meaning.words, meaning.topics):
        searched = kind is meaning.words
        joined = meaning.joined if searched else set()
        for n, g in enumerate(kind):
            weight = 1.0 if searched else PRAISE_WEIGHT if n in meaning.praise and meaning.words else TOPIC_WEIGHT
            # a topic's words come from the lexicon, spelt right: no typos looked up for them
            sources = _sources(meaning, index, g, prefix_ok and len(g[0]) >= MIN_WORD, fanout, typos=searched)
            if not sources:
                if searched:  # a topic word that matches nothing still asked for its intent
                    meaning.ignore(g[0])
                    unknown += 1
            elif n in joined and labelled and labelled[-1][2] == weight:  # either word: one group, the better match
                labelled[-1] = (labelled[-1][0], [*labelled[-1][1], *sources], weight)
            else:
                labelled.append((g[0], sources, weight))
    if len(labelled) > 1 or (labelled and (meaning.intents or unknown)):
        strong = [item for item in labelled if _best(item[1]) >= WEAK]
        if strong or unknown:
            for label, sources, w in labelled:
                if _best(sources) < WEAK and w == 1.0:
                    meaning.ignore(label)
                    unknown += 1
            labelled = strong
    # a word matched only as a typo of another or the start of one ("hasse" → Hase, "spät" → Spatz) counts half
    known = sum(1.0 if any(index.matches_exactly(word) for word in _words_of(label, meaning)) else 0.5
                for label, _, w in labelled if w == 1.0)
    if meaning.define is None and unknown and _not_about_names(meaning, unknown, known):
        return None
    intent_weight = {k: SOFT_WEIGHT if k in meaning.soft else NOT_WEIGHT if k == "not" else INTENT_WEIGHT
                     for k in meaning.intents}
    weight = sum(w for _, _, w in labelled) + sum(intent_weight.values())
    if weight == 0:
        return None
    ranking = Ranking(meaning, dist, [(sources, w) for _, sources, w in labelled], intent_weight, weight)
    found = ranking.bounded(limit) if meaning.define is None else None
    return found if found is not None else ranking.everything(limit)


def _words_of(label: str, meaning: Understanding) -> list[str]:
    """The words of the word group `label` names (its first word)."""
    return next((g for g in meaning.words if g[0] == label), [label])


def _not_about_names(meaning: Understanding, unknown: int, known: float) -> bool:
    """Mostly words no entry has ("wie alt ist Angela Merkel"); as many beside a place alone ("Wetter morgen in
    Berlin", "weather in Vienna"); or two or more beside a mood or category alone ("Mein Auto macht komische
    Geräusche"), with no word asking for names: not a question about pet names. A question that asks for names
    ("Welche Kosenamen benutzen Jugendliche heute?") is about them whenever one of its words is known."""
    asks = bool(NAME_WORDS & set(meaning.tokens) or ASKS_FOR_NAMES & set(meaning.tokens))
    if not meaning.intents:
        return not known if asks else unknown > known
    if asks:
        return False
    kinds = set(meaning.intents)
    if not known and not RECIPIENT_CUES.intersection(meaning.tokens):
        kinds -= {"relationship", "gender"}  # "nvidia earnings date": a word that can name whom, not said for whom
    return unknown >= known and (kinds <= PLACES or (kinds <= PLACES | {"category", "mood"} and unknown >= 2))


def _best(sources: list[Source]) -> float:
    """The best confidence any document has in a word group."""
    return max(posting.best() * match * step for posting, match, step in sources)


@dataclass
class Ranking:
    """The scores of one question: word groups (weighted), intents (filters, or boosts when soft), classics."""

    meaning: Understanding
    dist: Dist
    groups: list[tuple[list[Source], float]]
    intent_weight: dict[str, float]
    weight: float  # of the groups and intents together

    @property
    def standing(self) -> tuple[np.ndarray, Posting]:
        return standing(self.dist, "region" not in self.meaning.intents, "language" not in self.meaning.intents)

    @property
    def met(self) -> dict[str, np.ndarray]:
        return {kind: satisfaction(kind, values, self.dist) for kind, values in self.meaning.intents.items()}

    @property
    def active(self) -> list[str]:
        """The intents that filter, the one relaxed last first."""
        return [k for k in RELAX_ORDER[::-1] if k in self.meaning.intents and k not in self.meaning.soft]

    def scores(self, docs: np.ndarray, text: np.ndarray, met: dict[str, np.ndarray]) -> np.ndarray:
        """Scores for documents from their combined word-group confidence (`text`)."""
        weight = self.weight
        text = text * (sum(w for _, w in self.groups) / weight)
        scores = text + sum(m[docs] * (self.intent_weight[k] / weight) for k, m in met.items())
        scores = scores * (1 - CLASSIC_SHARE) + CLASSIC_SHARE * self.standing[0][docs]
        if self.meaning.define is not None:
            exact = np.asarray(self.dist.docs_by_title.get(self.meaning.define_key, []), dtype=np.int64)
            scores = np.minimum(scores, 0.99)
            scores[np.isin(docs, exact)] = 1.0
        return scores

    def everything(self, limit: int) -> tuple[list[Hit], list[str]]:
        """Score every match, then relax filters while fewer than `limit` confident entries pass them. The matches
        that pass every filter are scored first, alone (`_passing`): when `limit` of them are confident, that is
        the answer, and nothing is relaxed."""
        index, n = self.dist.search, len(self.dist.items)
        met, active = self.met, self.active
        boosts = all(w != 1.0 for _, w in self.groups)  # intents (and topic words, which only boost)
        if boosts and active:  # only the entries of the shortest filter can pass them all: their values alone
            shortest = min((_filter(k, self.meaning.intents[k], self.dist)[1].docs for k in active), key=len)
            found = self._passing(shortest, self._text_at(shortest), met, limit)
            if found is not None:
                return found, []
        docs, text = index.combine([(index.group_of(sources), w) for sources, w in self.groups])
        if boosts:  # every entry is a candidate
            every = np.zeros(n)
            every[docs] = text
            docs, text = np.arange(n, dtype=np.int32), every
        elif active:
            found = self._passing(docs, text, met, limit)
            if found is not None:
                return found, []
        scores = self.scores(docs, text, met)
        confident = scores >= FLOOR
        relaxed: list[str] = []

        def kept(filters: list[str]) -> np.ndarray:
            mask = confident.copy()
            for kind in filters:
                mask &= met[kind][docs] > 0
            return mask

        mask = kept(active)
        for kind in RELAX_ORDER:
            if kind not in active or int(mask.sum()) >= limit:
                continue
            wider = kept([k for k in active if k != kind and k not in relaxed])
            if wider.sum() > mask.sum():
                relaxed.append(kind)
                mask = wider
        # entries that meet the filters relaxed last (the more important ones) come first
        tiers = sum((met[k][docs[mask]] > 0).astype(np.int64) << RELAX_ORDER.index(k) for k in relaxed) if relaxed else None
        return index.ranked(docs[mask], scores[mask], limit, tiers=tiers), relaxed  # the nearest misses fill up

    def _text_at(self, docs: np.ndarray) -> np.ndarray:
        """The combined word-group confidence of some documents, as `SearchIndex.combine` adds it up over every
        match, from each group's lists probed at them (a filter's entries need not merge a word's whole lists)."""
        index, weight = self.dist.search, sum(w for _, w in self.groups)
        if len(self.groups) == 1:
            sources, w = self.groups[0]
            return index.values_at(sources, docs) * (w / weight)
        total = np.zeros(len(docs))
        for sources, w in self.groups:
            total += index.values_at(sources, docs) * w
        return total / weight if self.groups else total

    def _passing(self, docs: np.ndarray, text: np.ndarray, met: dict[str, np.ndarray], limit: int) -> list[Hit] | None:
        """The best `limit` of the candidates that pass every filter, if at least `limit` of those are confident
        (then nothing is relaxed and no other candidate is answered); None otherwise."""
        for kind in self.active:
            inside = met[kind][docs] > 0
            docs, text = docs[inside], text[inside]
        scores = self.scores(docs, text, met)
        confident = scores >= FLOOR
        if int(confident.sum()) < limit:
            return None
        return self.dist.search.ranked(docs[confident], scores[confident], limit)

    def _flat_head(self, intents: dict[str, tuple[np.ndarray, Posting]], limit: int) -> int:
        """How many entries of the shortest filter's list are expected to hold `limit` that meet every other
        filter and are classics (what the best answer to intents alone takes), twice over."""
        n = len(self.dist.items)
        shares = sorted(len(posting) / n for _, posting in intents.values())[1:] + [len(self.standing[1]) / n]
        return int(2 * limit / max(math.prod(shares), 1e-9))

    def bounded(self, limit: int) -> tuple[list[Hit], list[str]] | None:
        """The same answer from the heads of long posting lists (petgen/search/query.py `proven_top`), when at
        least `limit` confident candidates pass every filter (so nothing is relaxed) and no other entry can
        outrank them; None when that cannot be shown with heads of up to BOUNDED_HEAD documents."""
        index = self.dist.search
        intents = {kind: _filter(kind, values, self.dist) for kind, values in self.meaning.intents.items()}
        words_lead = any(w == 1.0 for _, w in self.groups)
        postings = [p for sources, _ in self.groups for p, _, _ in sources]  # the candidates when words lead …
        if not words_lead:
            postings += [p for _, p in intents.values()]  # … and else every entry, the filters' first
        if all(len(p) <= HEAD for p in postings):
            return None  # a short question: scoring everything is as cheap (as search scores short lists in full)
        active = self.active
        if not words_lead and active and min(len(intents[k][1]) for k in active) <= MAX_HEAD:
            return None  # intents alone: `everything` scores the entries of the shortest filter, at most MAX_HEAD
        scale = 1 - CLASSIC_SHARE
        weighted: list[Weighted] = [(sources, scale * w / self.weight, True) for sources, w in self.groups]
        weighted += [([(posting, 1.0, 1.0)], scale * self.intent_weight[kind] / self.weight, not words_lead)
                     for kind, (_, posting) in intents.items()]
        weighted.append(([(self.standing[1], 1.0, 1.0)], CLASSIC_SHARE, not words_lead))  # intents alone: the classics lead too
        met = {kind: values for kind, (values, _) in intents.items()}
        weights = [w for _, w in self.groups]
        total = sum(weights)

        def score(docs: np.ndarray, values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            if len(weights) == 1:  # as SearchIndex.combine adds them up
                text = values[0] * (weights[0] / total)
            else:
                text = np.zeros(len(docs))
                for found, w in zip(values, weights):
                    text += found * w
                text = text / total if weights else text
            scores = self.scores(docs, text, met)
            keep = scores >= FLOOR
            if words_lead:  # as in `everything`: only entries that match a word are answered
                keep &= text > 0
            for kind in active:
                keep &= met[kind][docs] > 0
            return scores, keep

        # MaxScore over the groups when there are two besides the classics (alone with them, one group's heads
        # answer sooner, as search answers one word from its heads)
        found = index.pruned(weighted, limit, score) if len(weighted) > 2 else None
        if found is not None and len(found[0]) >= limit:
            return index.ranked(*found, limit), []
        head = max(HEAD, 4 * limit)
        if not self.groups:  # intents alone: flat lists (each value 1, then title order), led by the filters and the classics
            head = min(BOUNDED_HEAD, max(head, self._flat_head(intents, limit)))
        while True:
            exact, docs, scores = index.proven_top(weighted, limit, head, score)
            if exact and len(docs) >= limit:
                return index.ranked(docs, scores, limit), []
            if head >= BOUNDED_HEAD:
                return None
            head = min(head * HEAD_GROWTH, BOUNDED_HEAD)

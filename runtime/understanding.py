"""How `/ask` reads a question and ranks entries for it (runtime/ask.py sends the answer).

**Reading.** The question's words are folded like the index (petgen/search/index.py) and matched
against `content/lexicon.yml`, longest phrase first (up to four words), exactly or by German stem
(`frecher` → `frech`), a phrase of two words in either order (`der gern kuschelt`: `kuschelt gern`). A phrase can ask for facet values (relationship, gender, region, language),
a category, a mood, or stand for German words to search for (translations and traits: `little
mouse` → Mäuschen, `schläft gern` → Langschläfer, Schlafmütze). Several values of one facet
are a union ("Wien oder Bayern"), and so are two words joined by "oder"/"or" ("Sterne oder Sonne": an
entry matching either counts as matching the pair, by its better match). A phrase that is also an entry's title (`Baby`, `Kumpel`) is
searched for as a name, and its intents only boost, unless it follows "für"/"for"/"zu"/"to"
("für ein Baby"). Filler, words of one or two letters and words that match no entry are ignored
and reported; a word that only occurs in meanings is ignored when the question says more.

**Ranking.** Each entry gets a score in 0..1: the weighted mean of how well it matches each word
group (confidence from petgen/search/query.py; weight 1, or 0.5 for a topic word that comes with an
intent, like `Blume` with the category natur or `Bruder` with the relationship familie) and of each intent it satisfies (weight 0.5; for
gender, a name for anyone counts 0.75), times 0.95, plus 0.05 if the name is a classic. Intents
filter: only entries that satisfy all of them are answered. When fewer than `limit` entries above
the confidence floor (`FLOOR`) would be left, filters are relaxed one at a time in `RELAX_ORDER`
(mood, category, language, region, gender, relationship, letter); a relaxed intent still counts in the
score, and `_meta.relaxed` names it. Entries below the floor are never answered: a question the
knowledge base cannot answer confidently gets an empty result and a hint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from petgen.content.lexicon import Lexicon
from petgen.content.model import EVERY_REGION
from petgen.content.text import initial
from petgen.search.index import analyze, stems, words
from petgen.search.query import HEAD_GROWTH, MAX_HEAD, Hit, Source, Weighted, prefix_share, prefix_words
from petgen.search.stored import HEAD, Posting
from runtime.builds.dist import Dist

FLOOR = 0.4  # no answer scores below this
WEAK = 0.5  # a word group no entry matches better than this (meanings only) is dropped when there is more
INTENT_WEIGHT = 0.5
SOFT_WEIGHT = 0.1  # an intent that comes with an entry's title ("Baby"): a tie-breaker, not a filter
TOPIC_WEIGHT = 0.5
ANYONE = 0.75  # a name for anyone, when a gender was asked for
CLASSIC_SHARE = 0.05
FACETS = ("relationship", "gender", "region", "language")
RELAX_ORDER = ("mood", "category", "language", "region", "gender", "relationship", "letter")
RECIPIENT_CUES = frozenset({"fur", "for", "zu", "to", "an"})  # "für ein Baby": Baby is whom it is for
UNION_CUES = frozenset({"oder", "or"})  # "Sterne oder Sonne": either word
MAX_PHRASE = 4
MIN_WORD = 3
BOUNDED_HEAD = 512  # /ask ranks from heads of up to this many documents per long list before scoring every match

# "what does X mean", "was bedeutet X", … — X is the name asked about.
DEFINITION = [re.compile(p, re.IGNORECASE) for p in (
    r"\bwhat(?:'s| is| does)?\s+(?:the\s+)?(?:meaning|origin)\s+of\s+(?P<x>.+)",
    r"\bwhat\s+does\s+(?P<x>.+?)\s+(?:mean|stand for)\b",
    r"\bwhere\s+does\s+(?P<x>.+?)\s+come\s+from\b",
    r"(?:^|[.!?]\s+)what\s+is\s+(?:an?\s+)?(?P<x>.+?)\s*\?*$",  # at the start: "…, what is sweeter?" compares
    r"\bmeaning\s+of\s+(?P<x>.+)",
    r"\bwas\s+(?:bedeutet|hei(?:ß|ss)t|meint)\s+(?:eigentlich\s+)?(?P<x>.+)",
    r"\bwoher\s+(?:kommt|stammt)\s+(?:eigentlich\s+)?(?P<x>.+)",
    r"\bbedeutung\s+(?:von|des\s+kosenamens)\s+(?P<x>.+)",
    r"\bherkunft\s+(?:von|des\s+kosenamens)\s+(?P<x>.+)",
    r"(?:^|[.!?]\s+)was\s+ist\s+(?:ein(?:e)?\s+)?(?P<x>.+?)\s*\?*$",
)]
# "names starting with S", "Kosenamen mit S", "mit dem Buchstaben Ä": the A–Z letter asked for (an intent).
LETTER = [re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:start(?:s|ing)?|begin(?:s|ning)?)\s+with\s+(?:the\s+letter\s+|an?\s+)?[\"'“„]?(?P<x>[a-z])[\"'”“]?(?=[\s?!.,;:]|$)",
    r"\b(?:mit|auf)\s+(?:dem\s+|einem\s+)?(?:anfangs)?(?:buchstaben\s+)?[\"'“„]?(?P<x>[a-zäöü])[\"'”“]?(?=[\s?!.,;:]|$)"
    r"(?:\s+(?:anfangen|anfängt|beginnen|beginnt|starten|startet)\b)?",
    r"\b(?:letter|anfangsbuchstaben?|buchstaben?)\s+[\"'“„]?(?P<x>[a-zäöü])[\"'”“]?(?=[\s?!.,;:]|$)",
)]
_TRIM = " \t\"'„“”‚‘’«»?!.,:;()"
_NOISE = {"der", "die", "das", "kosename", "kosenamen", "name", "the", "pet", "nickname"}
_NAMES = {"kosename", "kosenamen", "name", "namen", "names", "spitzname", "spitznamen", "nickname", "nicknames", "pet"}
# Words that praise the name itself before "Kosename"/"name" ("ein schöner Kosename", "gute Spitznamen"):
# read as filler when the rest of the question asks for something, as a wish ("schöne Kosenamen") otherwise.
QUALITY = frozenset({"schon", "schone", "schoner", "schones", "schonen", "gut", "gute", "guter", "gutes", "guten",
                     "toll", "tolle", "toller", "tolles", "tollen", "nett", "nette", "netter", "nettes", "netten",
                     "passend", "passende", "passender", "passendes", "passenden", "beautiful", "nice", "good"})


@dataclass
class Understanding:
    words: list[list[str]] = field(default_factory=list)  # groups of alternative folded words to search for
    topics: list[list[str]] = field(default_factory=list)  # words that come with an intent: they boost
    relations: set[int] = field(default_factory=set)  # the topics that come with a relationship alone
    intents: dict[str, list[str]] = field(default_factory=dict)  # facet, "category" or "mood" -> values
    soft: set[str] = field(default_factory=set)  # intents that only boost (from an entry's title)
    define: str | None = None  # the name asked about in "what does X mean", as written
    define_key: str = ""  # … folded, as titles are looked up
    ignored: list[str] = field(default_factory=list)
    joined: set[int] = field(default_factory=set)  # word groups that form a union with the group before them

    def add_word_group(self, group: list[str], *, union: bool) -> None:
        if union and self.words:
            self.joined.add(len(self.words))
        self.words.append(group)

    def search_groups(self) -> list[list[str]]:
        """What /api/search searches for: the words and the topics (those of a relationship only when there is
        nothing else: "bavarian names for a baby" searches for Bavarian names, "für meinen Bruder" for Bruder)."""
        topics = [g for n, g in enumerate(self.topics) if n not in self.relations]
        return self.words + topics or self.words + self.topics

    def add_intent(self, kind: str, value: str) -> None:
        values = self.intents.setdefault(kind, [])
        if value not in values:
            values.append(value)

    def ignore(self, word: str) -> None:
        if word not in self.ignored:
            self.ignored.append(word)

    def summary(self) -> dict[str, Any]:
        """What `_meta.understood` says: each intent (a slug, or a list for a union), the words searched."""
        found: dict[str, Any] = {k: v[0] if len(v) == 1 else list(v) for k, v in self.intents.items()}
        if self.define is not None:
            found["define"] = self.define
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
    actions = lexicon.phrases.get(phrase)
    if actions is None:
        by_stem = getattr(lexicon, "_by_stem", None)
        if by_stem is None:
            by_stem = {}
            for key, value in lexicon.phrases.items():
                by_stem.setdefault(tuple(stems(w)[0] for w in key), value)
            object.__setattr__(lexicon, "_by_stem", by_stem)
        actions = by_stem.get(tuple(stems(w)[0] for w in phrase))
    return actions


def _after_cue(tokens: list[str], start: int, lexicon: Lexicon) -> bool:
    """Whether the phrase at `start` follows "für"/"for"/"zu"/"to", with only filler in between."""
    i = start - 1
    while i >= 0 and tokens[i] in lexicon.filler and tokens[i] not in RECIPIENT_CUES:
        i -= 1
    return i >= 0 and tokens[i] in RECIPIENT_CUES


def _definition(question: str) -> tuple[str, str] | None:
    for pattern in DEFINITION:
        match = pattern.search(question)
        if match:
            target = match.group("x").strip(_TRIM)
            target = re.split(r"\s+(?:eigentlich|genau|überhaupt|actually|exactly)\b", target)[0].strip(_TRIM)
            target_words = [w for w in words(target) if w not in _NOISE]
            if target_words and len(target_words) <= 3:
                return target, " ".join(target_words)
    return None


def understand(question: str, lexicon: Lexicon, titles: frozenset[str] = frozenset(),
               aliases: dict[str, tuple[str, str]] | None = None) -> Understanding:
    """Turn a question into word groups, intents and ignored words (see the module's docstring)."""
    result = Understanding()
    define = _definition(question)
    if define is not None:
        result.define, result.define_key = define
        result.words = [[w] for w in analyze(result.define_key)]
        return result
    for pattern in LETTER:
        match = pattern.search(question)
        if match and not (match.group("x") == "a" and re.match(r"\s+\w", question[match.end():])):  # "with a sweet …"
            result.add_intent("letter", initial(match.group("x")))
            question = question[:match.start()] + " " + question[match.end():]
            break
    tokens = words(question)
    quality = [i for i in range(len(tokens) - 1) if tokens[i] in QUALITY and tokens[i + 1] in _NAMES]
    if quality:  # "ein schöner Kosename für meine Mama": read without "schöner" when the rest asks for something
        rest = _read([t for i, t in enumerate(tokens) if i not in quality], lexicon, titles, aliases,
                     replace(result, intents={k: list(v) for k, v in result.intents.items()}))
        if rest.words or rest.intents:
            for i in quality:
                rest.ignore(tokens[i])
            return rest
    return _read(tokens, lexicon, titles, aliases, result)


def _read(tokens: list[str], lexicon: Lexicon, titles: frozenset[str], aliases: dict[str, tuple[str, str]] | None,
          result: Understanding) -> Understanding:
    """The question's words read into `result`, phrase by phrase."""
    i = 0
    after_words = cue = False  # the last phrase read (filler aside) added a word group; "oder" followed it
    while i < len(tokens):
        union = cue and after_words  # "X oder Y": Y joins X's group when both are read as words
        count, filler = len(result.words), False
        for size in range(min(MAX_PHRASE, len(tokens) - i), 0, -1):
            phrase = tokens[i:i + size]
            actions = [] if size == 1 and tokens[i] in lexicon.filler else _lookup(lexicon, tuple(phrase))
            if actions is None:
                continue
            if not actions:  # filler
                result.ignore(tokens[i])
                filler, cue = True, cue or tokens[i] in UNION_CUES
                i += 1
                break
            text = " ".join(phrase)
            as_name = text in titles and not _after_cue(tokens, i, lexicon)
            translation: list[str] = []
            intents = []
            for kind, value in actions:
                if kind == "translate":
                    translation.extend(w for w in analyze(value) if w not in translation)
                    continue
                if kind == "categories" and aliases and value in aliases and aliases[value][1] != EVERY_REGION:
                    kind, value = aliases[value]
                kind = {"categories": "category", "moods": "mood"}.get(kind, kind)
                intents.append(kind)
                result.add_intent(kind, value)
                if as_name:
                    result.soft.add(kind)
            if as_name:
                if size == 1:
                    result.words.append([*phrase, *(w for w in translation if w not in phrase)])
                else:
                    result.words.extend([w] for w in phrase)
            elif intents:
                topical = [k for k in intents if k in ("category", "mood", "region", "language", "relationship")]
                group = translation or (list(phrase) if topical and size == 1 else [])
                if group:
                    result.topics.append(group)
                    if topical == ["relationship"]:  # "Bruder": boosts /ask's names about brothers, not search's
                        result.relations.add(len(result.topics) - 1)
            elif translation:
                result.add_word_group(translation, union=union)
            i += size
            break
        else:
            token = tokens[i]
            if len(token) < MIN_WORD and token not in titles:
                result.ignore(token)
            elif [token] not in result.words:
                result.add_word_group([token], union=union)
            i += 1
        if not filler:
            after_words, cue = len(result.words) > count, False
    return result


# ---------------------------------------------------------------------------------------------
# Ranking


@dataclass
class Answer:
    meaning: Understanding
    hits: list[Hit]
    relaxed: list[str] = field(default_factory=list)
    suggestions: list[Hit] = field(default_factory=list)


def satisfaction(kind: str, values: list[str], dist: Dist) -> np.ndarray:
    """Per document: 1 if it has one of the asked-for values, 0.75 for a name for anyone when a
    gender was asked for, 0 otherwise (computed once per distinct filter)."""
    return _filter(kind, values, dist)[0]


def _filter(kind: str, values: list[str], dist: Dist) -> tuple[np.ndarray, Posting]:
    def make() -> np.ndarray:
        found = np.zeros(len(dist.items))
        for value in values:
            found[dist.mask(kind, value)] = 1.0
        if kind == "gender" and "alle" not in values:
            anyone = dist.mask("gender", "alle")
            found[anyone] = np.maximum(found[anyone], ANYONE)
        return found

    return dist.search.posting_of((kind, tuple(values)), make)


def _classic(dist: Dist) -> tuple[np.ndarray, Posting]:
    return dist.search.posting_of("classic", lambda: dist.classic_mask)


def answer(question: str, dist: Dist, limit: int) -> Answer:
    """Understand the question and rank entries for it."""
    meaning = understand(question, dist.lexicon_index, dist.title_words, dist.aliases)
    index = dist.search
    prefix_ok = meaning.define is None
    # the question's words share the engine's budget of prefix completions, as a search query's do
    fanout = prefix_share(prefix_words([g for g in (*meaning.words, *meaning.topics) if prefix_ok and len(g[0]) >= MIN_WORD]))
    labelled: list[tuple[str, list[Source], float]] = []
    for kind, weight in ((meaning.words, 1.0), (meaning.topics, TOPIC_WEIGHT)):
        joined = meaning.joined if kind is meaning.words else set()
        for n, g in enumerate(kind):
            sources = index.sources(g, prefix=prefix_ok and len(g[0]) >= MIN_WORD, fanout=fanout)
            if not sources:
                if weight == 1.0:  # a topic word that matches nothing still asked for its intent
                    meaning.ignore(g[0])
            elif n in joined and labelled and labelled[-1][2] == weight:  # either word: one group, the better match
                labelled[-1] = (labelled[-1][0], [*labelled[-1][1], *sources], weight)
            else:
                labelled.append((g[0], sources, weight))
    if len(labelled) > 1 or (labelled and meaning.intents):
        strong = [item for item in labelled if _best(item[1]) >= WEAK]
        if strong:
            for label, sources, w in labelled:
                if _best(sources) < WEAK and w == 1.0:
                    meaning.ignore(label)
            labelled = strong
    intent_weight = {k: SOFT_WEIGHT if k in meaning.soft else INTENT_WEIGHT for k in meaning.intents}
    weight = sum(w for _, _, w in labelled) + sum(intent_weight.values())
    if weight == 0:
        return Answer(meaning, [], suggestions=index.suggest(question))
    ranking = Ranking(meaning, dist, [(sources, w) for _, sources, w in labelled], intent_weight, weight)
    found = ranking.bounded(limit) if meaning.define is None else None
    hits, relaxed = found if found is not None else ranking.everything(limit)
    suggestions = index.suggest(meaning.define or question) if not hits else []
    return Answer(meaning, hits, relaxed, suggestions)


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
        scores = scores * (1 - CLASSIC_SHARE) + CLASSIC_SHARE * _classic(self.dist)[0][docs]
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
        shares = sorted(len(posting) / n for _, posting in intents.values())[1:] + [len(_classic(self.dist)[1]) / n]
        return int(2 * limit / max(float(np.prod(shares)), 1e-9))

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
        weighted.append(([(_classic(self.dist)[1], 1.0, 1.0)], CLASSIC_SHARE, False))
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
        if not self.groups:  # intents alone: flat lists (each value 1, then title order), led by the shortest filter
            head = min(BOUNDED_HEAD, max(head, self._flat_head(intents, limit)))
        while True:
            exact, docs, scores = index.proven_top(weighted, limit, head, score)
            if exact and len(docs) >= limit:
                return index.ranked(docs, scores, limit), []
            if head >= BOUNDED_HEAD:
                return None
            head = min(head * HEAD_GROWTH, BOUNDED_HEAD)

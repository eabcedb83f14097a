"""Search quality: `/api/search` and `/ask` vs an SQLite FTS5 baseline on the same entries and queries.

    python bench/search_quality.py [--failures] [--per-query]

Builds the bundled knowledge base into a temporary dist, then asks three systems the same
hand-written queries (QUERIES below, in classes) and prints recall@5 and MRR@10 per class:

- search: `runtime.search.search_results(q, 10, dist)`, the function behind `GET /api/search`;
- ask:    `runtime.ask.answer(q, dist, 10)`, the ranking behind `POST /ask`;
- fts5:   Python's sqlite3 with an FTS5 table over the same four fields (title, variants,
          keywords, meaning), tokenizer `unicode61 remove_diacritics 2`, ranked by
          `bm25(names, 8, 5, 3, 1)` (the engine's field weights); the query is every word of the
          text, quoted, joined with OR.

Each query lists the entry slugs that are acceptable answers; the rank of the first acceptable
slug counts. recall@5 is the share of queries with an acceptable slug in the top 5; MRR is the
mean of 1/rank over the top 10 (0 when none is there). The queries were written from the entries
in content/names/ (titles, variants, keywords, meanings), not from what any system returns.
`--failures` lists every query a system misses in its top 5 and every query where FTS5 ranks an
acceptable answer higher than /api/search or /ask, with the top results of all three.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from docs import recorded
from petgen.build.pipeline import build
from petgen.content.text import initial, length_class
from runtime.ask import answer
from runtime.builds.dist import Dist
from runtime.search import search_results

REPO = Path(__file__).resolve().parent.parent
TOP = 10
RECALL_AT = 5
FTS_WEIGHTS = (8.0, 5.0, 3.0, 1.0)  # title, variants, keywords, meaning: petgen.search.index.WEIGHTS

CLASSES = ("german", "english", "typos", "umlautless", "variants", "compounds", "prefixes", "questions")

# (class, query, acceptable slugs). Written from content/names/*.md.
QUERIES: list[tuple[str, str, set[str]]] = [
    # Plain German words: a title, or a keyword/meaning word shared by a few entries.
    ("german", "maus", {"maus"}),
    ("german", "schatz", {"schatz"}),
    ("german", "herz", {"herz"}),
    ("german", "liebling", {"liebling"}),
    ("german", "prinzessin", {"prinzessin"}),
    ("german", "kumpel", {"kumpel"}),
    ("german", "katze", {"kaetzchen", "mieze", "schmusekatze", "buesi", "kater", "naschkatze"}),
    ("german", "biene", {"bienchen", "honigbienchen"}),
    ("german", "kuscheln", {"kuschelbaer", "kuschelmaus", "kuschelhase", "knuddel", "baerchen", "schmusekatze",
                            "schnuffel"}),
    ("german", "sonne", {"sonne", "sonnenschein"}),
    ("german", "engel", {"engel", "engelchen", "engele", "schutzengel"}),
    ("german", "zucker", {"zuckerl", "zuckermaus", "zuckerpuppe", "zuckerschnecke", "zuckerschnute", "zuckerstueck",
                          "zuckerwatte", "sugar"}),
    ("german", "blume", {"bluemchen", "butterblume", "gaensebluemchen", "sonnenblume", "veilchen", "roeschen"}),
    ("german", "glück", {"gluecksbringer", "glueckskind", "kleeblatt", "marienkaefer"}),
    ("german", "langschläfer", {"schlafmuetze", "murmeltier", "dornroeschen", "schnarchnase"}),
    ("german", "märchen", {"fee", "wichtel", "zwerg", "glueckskind", "prinz", "prinzessin", "dornroeschen"}),

    # English words: German entries through the English glosses in their keywords.
    ("english", "mouse", {"maus", "maeuschen", "mausi"}),
    ("english", "little mouse", {"maeuschen", "maus", "mausi", "maeusle", "mauserl", "muesli"}),
    ("english", "bear", {"baer", "baerchen"}),
    ("english", "treasure", {"schatz", "schaetzchen", "schatzi", "goldschatz"}),
    ("english", "sparrow", {"spatz", "spatzl", "spatzi", "spaetzle"}),
    ("english", "bunny", {"hase", "hasi", "haeschen"}),
    ("english", "kitten", {"kaetzchen", "buesi"}),
    ("english", "angel", {"engel", "engelchen"}),
    ("english", "hedgehog", {"igel"}),
    ("english", "squirrel", {"eichhoernchen"}),
    ("english", "ladybug", {"marienkaefer", "chaeferli"}),
    ("english", "sleepyhead", {"schlafmuetze", "murmeltier", "schnarchnase", "dornroeschen"}),
    ("english", "cinnamon roll", {"zimtschnecke"}),
    ("english", "guardian angel", {"schutzengel"}),
    ("english", "lucky charm", {"gluecksbringer"}),
    ("english", "teddy bear", {"teddybaer", "baerchen"}),
    ("english", "little treasure", {"schaetzchen", "schaetzelein"}),
    ("english", "shooting star", {"sternschnuppe"}),
    ("english", "firefly", {"gluehwuermchen"}),

    # Typos: one or two edits (insertion, deletion, substitution, transposition).
    ("typos", "schnuckie", {"schnucki"}),
    ("typos", "spazl", {"spatzl"}),
    ("typos", "mäuchen", {"maeuschen"}),
    ("typos", "schmeterling", {"schmetterling"}),
    ("typos", "eichhörnschen", {"eichhoernchen"}),
    ("typos", "prinzesin", {"prinzessin"}),
    ("typos", "zuckermaud", {"zuckermaus"}),
    ("typos", "liebilng", {"liebling"}),
    ("typos", "sonnenshein", {"sonnenschein"}),
    ("typos", "knudel", {"knuddel"}),
    ("typos", "gänseblümchn", {"gaensebluemchen"}),
    ("typos", "teddybör", {"teddybaer"}),
    ("typos", "herzblat", {"herzblatt"}),
    ("typos", "kichererbsse", {"kichererbse"}),
    ("typos", "morgenmufel", {"morgenmuffel"}),
    ("typos", "schazt", {"schatz"}),
    ("typos", "schmeterlin", {"schmetterling"}),
    ("typos", "prinsesin", {"prinzessin"}),
    ("typos", "herzalerliebstr", {"herzallerliebste", "herzallerliebster"}),

    # Umlauts typed as ae/oe/ue, or left out.
    ("umlautless", "Baerchen", {"baerchen"}),
    ("umlautless", "Maeuschen", {"maeuschen"}),
    ("umlautless", "Schaetzle", {"schaetzle"}),
    ("umlautless", "Haeschen", {"haeschen"}),
    ("umlautless", "Goldstueck", {"goldstueck"}),
    ("umlautless", "Gaensebluemchen", {"gaensebluemchen"}),
    ("umlautless", "Kaetzchen", {"kaetzchen"}),
    ("umlautless", "Suesse", {"suesse"}),
    ("umlautless", "Loewe", {"loewe"}),
    ("umlautless", "Koenigin", {"koenigin"}),
    ("umlautless", "Schlafmuetze", {"schlafmuetze"}),
    ("umlautless", "Gluehwuermchen", {"gluehwuermchen"}),
    ("umlautless", "Bussibaer", {"bussibaer"}),
    ("umlautless", "Barchen", {"baerchen"}),
    ("umlautless", "Mauschen", {"maeuschen"}),
    ("umlautless", "Kuken", {"kueken"}),
    ("umlautless", "Fuchschen", {"fuechschen"}),

    # A variant finds its entry.
    ("variants", "Bärli", {"baerchen", "baer"}),
    ("variants", "Hasimaus", {"hasi"}),
    ("variants", "Schatzimaus", {"schatzi", "schatzimaus"}),
    ("variants", "Spatzerl", {"spatz", "spatzl"}),
    ("variants", "Mausebärchen", {"mausebaer"}),
    ("variants", "Knuddelmonster", {"knuddel"}),
    ("variants", "Krümelmonster", {"kruemel"}),
    ("variants", "Sugarpie", {"sugar"}),
    ("variants", "Cutie Pie", {"cutie"}),
    ("variants", "Hun", {"honey"}),
    ("variants", "Oida", {"alter"}),
    ("variants", "Brudi", {"bro"}),
    ("variants", "Talisman", {"gluecksbringer"}),
    ("variants", "Honigkuchenpferd", {"honigkuchen"}),
    ("variants", "Quietscheentchen", {"entchen"}),
    ("variants", "Oachkatzerl", {"eichhoernchen"}),
    ("variants", "Schmusekater", {"kater", "schmusekatze", "schmusekater"}),

    # Compounds: the parts of a compound name, as separate words or alone.
    ("compounds", "zucker maus", {"zuckermaus"}),
    ("compounds", "maus aus zucker", {"zuckermaus"}),
    ("compounds", "süße maus", {"suessmaus", "maus"}),
    ("compounds", "kuschel bär", {"kuschelbaer"}),
    ("compounds", "bär mit honig", {"honigbaer"}),
    ("compounds", "schoko maus", {"schokomaus"}),
    ("compounds", "knuddel maus", {"knuddelmaus"}),
    ("compounds", "maus und bär", {"mausebaer"}),
    ("compounds", "gold schatz", {"goldschatz"}),
    ("compounds", "sonnen strahl", {"sonnenstrahl"}),
    ("compounds", "zimt schnecke", {"zimtschnecke"}),
    ("compounds", "traum prinz", {"traumprinz"}),
    ("compounds", "watte", {"zuckerwatte"}),
    ("compounds", "kugel", {"knutschkugel"}),
    ("compounds", "strahl", {"sonnenstrahl"}),
    ("compounds", "kopf", {"wuschelkopf", "quatschkopf"}),
    ("compounds", "erbse", {"kichererbse", "knallerbse"}),
    ("compounds", "schnuppe", {"sternschnuppe"}),

    # As-you-type prefixes.
    ("prefixes", "bär", {"baer", "baerchen"}),
    ("prefixes", "spa", {"spatz", "spatzl", "spatzi", "spaetzchen", "spaetzle"}),
    ("prefixes", "schmet", {"schmetterling"}),
    ("prefixes", "zuckerw", {"zuckerwatte"}),
    ("prefixes", "eichh", {"eichhoernchen"}),
    ("prefixes", "prinze", {"prinzessin"}),
    ("prefixes", "kich", {"kichererbse"}),
    ("prefixes", "gänseb", {"gaensebluemchen"}),
    ("prefixes", "marienk", {"marienkaefer"}),
    ("prefixes", "sonnens", {"sonnenschein", "sonnenstrahl"}),
    ("prefixes", "herzal", {"herzallerliebste", "herzallerliebster"}),
    ("prefixes", "wonne", {"wonneproppen"}),
    ("prefixes", "knutsch", {"knutschkugel"}),
    ("prefixes", "schlafm", {"schlafmuetze"}),
    ("prefixes", "mäu", {"maeuschen", "maeusle"}),
    ("prefixes", "lebk", {"lebkuchenherz"}),

    # Natural questions, German and English.
    ("questions", "Was bedeutet Spatzl?", {"spatzl"}),
    ("questions", "cute nickname for my girlfriend that means little mouse",
     {"maeuschen", "maus", "mausi", "maeusle", "mauserl", "muesli"}),
    ("questions", "bavarian pet names for a baby", {"hascherl", "mauserl", "schnuckerl", "spatzl", "zuckerl",
                                                    "zwutschgerl"}),
    ("questions", "Was bedeutet Schätzle?", {"schaetzle"}),
    ("questions", "what does Schnucki mean", {"schnucki"}),
    ("questions", "Woher kommt der Kosename Mausi?", {"mausi"}),
    ("questions", "Kosename für meinen Freund, der morgens grummelig ist", {"morgenmuffel", "brummbaer"}),
    ("questions", "sweet names for my boyfriend", {"suesser", "honigbaer"}),
    ("questions", "schwäbische Kosenamen", {"schaetzle", "spaetzle", "maeusle", "herzle", "engele", "schnegge",
                                           "butzele"}),
    ("questions", "Swiss pet name for a little mouse", {"muesli"}),
    ("questions", "italian word for treasure", {"tesoro"}),
    ("questions", "Wie nennt man jemanden, der viel kichert?", {"kichererbse"}),
    ("questions", "german nickname for someone who sleeps a lot", {"schlafmuetze", "murmeltier", "schnarchnase",
                                                                   "dornroeschen", "koala"}),
    ("questions", "pet name for a grumpy boyfriend", {"brummbaer", "morgenmuffel"}),
    ("questions", "Kosename für eine Frau, die man verehrt", {"angebetete", "holde", "koenigin"}),
    ("questions", "Welcher Kosename bedeutet kleiner Spatz?", {"spatzl", "spaetzle", "spaetzchen"}),
    ("questions", "cute name for a chubby baby", {"wonneproppen", "pummelchen", "knutschkugel"}),
]


# List questions: many entries answer them. Every acceptable answer is the set of entries whose curated
# data (categories, moods and facets in content/names/*.md) meets the stated conditions, plus named
# slugs; `--answers` prints every set in full. A condition lists the values of which an entry needs
# one: `gender: {"sie", "alle"}` for "for her" (names for anyone fit too), `theme` any category or mood.
SHE, HE = {"sie", "alle"}, {"ihn", "alle"}
LIST_QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("Kosenamen aus der Natur", {"theme": {"natur"}}),
    ("frecher Kosename für meine Freundin", {"relationship": {"partner"}, "gender": SHE, "theme": {"frech"}}),
    ("Wie sagt man in Wien oder Bayern liebevoll zu jemandem?", {"region": {"bayern-oesterreich"}}),
    ("Spitzname für die beste Freundin", {"relationship": {"freunde"}, "gender": SHE}),
    ("ironischer Kosename für meinen Ehemann", {"relationship": {"partner"}, "gender": HE,
                                                "theme": {"humorvoll", "lustig"}}),
    ("leidenschaftliche Kosenamen", {"theme": {"leidenschaftlich"}}),
    ("passionate pet names for my wife", {"relationship": {"partner"}, "gender": SHE,
                                          "theme": {"leidenschaftlich"}}),
    ("Kosename für meine Oma", {"relationship": {"familie"}, "gender": SHE}),
    ("what can I call my grandma", {"relationship": {"familie"}, "gender": SHE}),
    ("schwäbische Kosenamen für Kinder", {"region": {"schwaben"}, "relationship": {"kind"}}),
    ("Swiss German pet names", {"region": {"schweiz"}}),
    ("Kosenamen aus dem Ruhrgebiet", {"region": {"ruhrgebiet"}}),
    ("norddeutsche Kosenamen", {"region": {"norddeutschland"}}),
    ("berlinerische Spitznamen", {"region": {"berlin"}}),
    ("türkische Kosenamen", {"language": {"tuerkisch"}}),
    ("arabic nicknames for a friend", {"language": {"arabisch"}, "relationship": {"freunde"}}),
    ("italienische oder spanische Kosenamen", {"language": {"italienisch", "spanisch"}}),
    ("English pet names for my boyfriend", {"language": {"englisch"}, "relationship": {"partner"}, "gender": HE}),
    ("süße Tiernamen für mein Baby", {"theme": {"tiere"}, "relationship": {"kind"}}),
    ("animal pet names for a child", {"theme": {"tiere"}, "relationship": {"kind"}}),
    ("Kosenamen aus der Konditorei", {"theme": {"suesses"}}),
    ("sweet food nicknames", {"theme": {"suesses"}}),
    ("romantische Kosenamen für meinen Mann", {"theme": {"romantisch"}, "relationship": {"partner"}, "gender": HE}),
    ("romantic names for my girlfriend", {"theme": {"romantisch"}, "relationship": {"partner"}, "gender": SHE}),
    ("kuschelige Kosenamen für Kinder", {"theme": {"kuschelig"}, "relationship": {"kind"}}),
    ("cute names for a toddler", {"relationship": {"kind"}}),
    ("altmodische Kosenamen", {"theme": {"altmodisch", "nostalgisch"}}),
    ("old-fashioned pet names for a woman", {"theme": {"altmodisch", "nostalgisch"}, "gender": SHE}),
    ("märchenhafte Kosenamen für meine Tochter", {"theme": {"maerchen"}, "relationship": {"kind"}, "gender": SHE}),
    ("fairy tale names for a girl", {"theme": {"maerchen"}, "gender": SHE}),
    ("kostbare Kosenamen", {"theme": {"kostbar"}}),
    ("precious names for my wife", {"theme": {"kostbar"}, "relationship": {"partner"}, "gender": SHE}),
    ("lustige Spitznamen für meinen Bruder", {"theme": {"lustig", "humorvoll"}, "relationship": {"familie"},
                                              "gender": HE}),
    ("funny nicknames for my sister", {"theme": {"lustig", "humorvoll"}, "relationship": {"familie"}, "gender": SHE}),
    ("Kosename für jemanden, der gern schläft", {"slugs": {"schlafmuetze", "murmeltier", "schnarchnase",
                                                           "dornroeschen", "koala", "schaefchen"}}),
    ("Kosename für jemanden, der mich beschützt", {"theme": {"beschuetzend"},
                                                   "slugs": {"held", "schutzengel", "ritter", "superheld"}}),
    ("ein Kosename, der Glück bringt", {"slugs": {"gluecksbringer", "glueckskind", "kleeblatt", "marienkaefer"}}),
    ("nickname for someone who giggles a lot", {"slugs": {"kichererbse", "grinsebacke"}}),
    ("names for a chubby baby", {"slugs": {"wonneproppen", "pummelchen", "knutschkugel", "pausbaeckchen",
                                           "hamster", "mopsi"}}),
    ("Kosenamen für Paare", {"relationship": {"partner"}}),
    ("gender neutral pet names for my partner", {"relationship": {"partner"}, "gender": {"alle"}}),
    ("Spitznamen für Kollegen", {"relationship": {"freunde"}}),
    ("bayerische Kosenamen für meinen Freund", {"region": {"bayern-oesterreich"}, "relationship": {"partner"},
                                                "gender": HE}),
    ("zärtliche Kosenamen für meine Frau", {"theme": {"zaertlich"}, "relationship": {"partner"}, "gender": SHE}),
    ("names for my dad", {"relationship": {"familie"}, "gender": HE}),
    ("Kosenamen für die Familie", {"relationship": {"familie"}}),
    ("flirty names for my crush", {"theme": {"leidenschaftlich"}, "relationship": {"partner"}}),
    ("Kosename für einen kleinen Jungen", {"relationship": {"kind"}, "gender": HE}),
    ("sächsische oder fränkische Kosenamen", {"region": {"sachsen", "franken"}}),
    ("protective names for my son", {"theme": {"beschuetzend"}, "relationship": {"kind"}, "gender": HE}),
    ("Kosenamen, die mit S anfangen", {"letter": {"s"}}),
    ("romantic pet names starting with H", {"letter": {"h"}, "theme": {"romantisch"}}),
    ("Sterne oder Sonne", {"slugs": {"stern", "sternchen", "sternschnuppe", "augenstern", "sonne", "sonnenschein",
                                     "sonnenstrahl", "sonnenblume"}}),
    ("Kosename für jemanden, der gern kuschelt", {"theme": {"kuschelig"}, "slugs": {"knuddel", "schmusekatze"}}),
    ("Kosenamen für meinen Bruder", {"relationship": {"familie"}, "gender": HE}),
    # session 8: length, a name in another language, "und", recipients the facets name differently
    ("kurze Kosenamen für meinen Freund", {"length": {"kurz", "einsilbig"}, "relationship": {"partner"}, "gender": HE}),
    ("short pet names for a girl", {"length": {"kurz", "einsilbig"}, "gender": SHE}),
    ("lange romantische Kosenamen", {"length": {"lang"}, "theme": {"romantisch"}}),
    ("einsilbige Kosenamen für Kinder", {"length": {"einsilbig"}, "relationship": {"kind"}}),
    ("Schatz auf Englisch", {"slugs": {"honey", "darling", "sweetheart", "boo", "babe", "love", "sweetie"}}),
    ("Wie sagt man Liebling auf Türkisch?", {"language": {"tuerkisch"}}),
    ("the German word for sweetheart", {"slugs": {"schatz", "liebling", "herz", "herzchen", "herzblatt", "hase",
                                                  "maus", "schaetzchen", "liebes", "liebste", "liebster", "suesse"}}),
    ("Sonne und Mond", {"slugs": {"sonne", "sonnenschein", "sonnenstrahl", "sonnenblume", "stern", "sternchen"}}),
    ("Kosenamen für Hund und Katze", {"slugs": {"mopsi", "mieze", "kaetzchen", "kater", "buesi", "kotku", "bazi",
                                                "schnueggel", "putzi", "schmusekatze", "schmusekater"}}),
    ("Spitzname für den Chef", {"relationship": {"freunde"}}),
]
PRECISION_AT = 5


def acceptable(spec: dict[str, Any], items: list[dict[str, Any]]) -> set[str]:
    """Slugs of the entries that meet every condition of `spec`, plus its named slugs."""
    def meets(item: dict[str, Any]) -> bool:
        for key, wanted in spec.items():
            if key == "slugs":
                continue
            have = (item["categories"] + item["moods"] if key == "theme"
                    else initial(item["title"]) if key == "letter"
                    else length_class(item["title"]) if key == "length" else item[key])
            if not set(have if isinstance(have, list) else [have]) & wanted:
                return False
        return len(spec) > ("slugs" in spec)
    return {i["slug"] for i in items if meets(i)} | spec.get("slugs", set())

# ---------------------------------------------------------------------------------------------
# The systems: each takes a query and returns up to TOP slugs, best first.


def build_dist(content: Path, root: Path) -> Dist:
    """Build `content` into root/dist (base URL of a local server) and load it as the runtime does."""
    build(content, root / "dist", base_url="http://127.0.0.1")
    return Dist.load(root / "dist")


def entries(dist: Dist) -> list[dict[str, Any]]:
    """Every entry's full JSON from the built dist, in list order."""
    return [orjson.loads(dist.routes[f"/api/names/{item['slug']}"].body) for item in dist.items]


def fts_rows(dist: Dist) -> list[dict[str, str]]:
    """The four indexed fields as text, one row per entry (lists joined with ', ')."""
    return [{"slug": e["slug"], "title": e["title"], "variants": ", ".join(e["variants"]),
             "keywords": ", ".join(e["keywords"]), "meaning": e["meaning"]} for e in entries(dist)]


class Fts5:
    """The baseline: an in-memory FTS5 table over the same fields, bm25 with the engine's weights."""

    def __init__(self, rows: list[dict[str, str]]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE names USING fts5(title, variants, keywords, meaning, "
                        "tokenize = 'unicode61 remove_diacritics 2')")
        self.db.executemany("INSERT INTO names(rowid, title, variants, keywords, meaning) VALUES (?, ?, ?, ?, ?)",
                            [(i, r["title"], r["variants"], r["keywords"], r["meaning"]) for i, r in enumerate(rows)])
        self.slugs = [r["slug"] for r in rows]
        self.sql = ("SELECT rowid FROM names WHERE names MATCH ? ORDER BY bm25(names, {}, {}, {}, {}) LIMIT ?"
                    .format(*FTS_WEIGHTS))

    @staticmethod
    def match_query(text: str) -> str:
        """Every word quoted (so no FTS syntax survives), OR-ed; '' when the text has no word."""
        return " OR ".join('"' + w.replace('"', '""') + '"' for w in re.findall(r"[^\W_]+", text))

    def search(self, text: str, limit: int = TOP) -> list[str]:
        query = self.match_query(text)
        if not query:
            return []
        return [self.slugs[rowid] for (rowid,) in self.db.execute(self.sql, (query, limit))]


def systems(dist: Dist) -> dict[str, Callable[[str], list[str]]]:
    fts = Fts5(fts_rows(dist))
    return {
        "search": lambda q: [item["slug"] for item in search_results(q, TOP, dist)["items"]],
        "ask": lambda q: [hit.slug for hit in answer(q, dist, TOP).hits],
        "fts5": fts.search,
    }


# ---------------------------------------------------------------------------------------------
# Evaluation


@dataclass
class Outcome:
    cls: str
    query: str
    expected: set[str]
    returned: dict[str, list[str]]  # system -> slugs, best first

    def rank(self, system: str) -> int | None:
        """1-based rank of the first acceptable slug in the top TOP, or None."""
        for i, slug in enumerate(self.returned[system][:TOP], 1):
            if slug in self.expected:
                return i
        return None

    def found(self, system: str) -> bool:
        rank = self.rank(system)
        return rank is not None and rank <= RECALL_AT

    def reciprocal(self, system: str) -> float:
        rank = self.rank(system)
        return 1.0 / rank if rank else 0.0


def evaluate(dist: Dist) -> tuple[list[str], list[Outcome]]:
    known = dist.slugs
    for cls, query, expected in QUERIES:
        if cls not in CLASSES or not expected <= known:
            raise SystemExit(f"bad query {query!r}: class {cls!r}, unknown slugs {sorted(expected - known)}")
    run = systems(dist)
    outcomes = [Outcome(cls, q, expected, {name: fn(q) for name, fn in run.items()}) for cls, q, expected in QUERIES]
    return list(run), outcomes


def summary(names: list[str], outcomes: list[Outcome]) -> list[tuple[str, int, dict[str, tuple[float, float]]]]:
    """Per class and overall: (label, query count, {system: (recall@5, MRR)})."""
    groups = [(cls, [o for o in outcomes if o.cls == cls]) for cls in CLASSES] + [("overall", outcomes)]
    rows = []
    for label, group in groups:
        if not group:
            continue
        rows.append((label, len(group), {
            name: (sum(o.found(name) for o in group) / len(group), sum(o.reciprocal(name) for o in group) / len(group))
            for name in names}))
    return rows


def print_table(names: list[str], rows: list[tuple[str, int, dict[str, tuple[float, float]]]]) -> None:
    print(f"{len(QUERIES)} queries; recall@{RECALL_AT} = share with an acceptable entry in the top {RECALL_AT}, "
          f"MRR over the top {TOP}")
    head = f"{'class':<11} {'n':>3}" + "".join(f" {name + ' R@5':>11} {name + ' MRR':>10}" for name in names)
    print(head)
    print("-" * len(head))
    for label, count, figures in rows:
        print(f"{label:<11} {count:>3}" + "".join(f" {figures[n][0]:>11.2f} {figures[n][1]:>10.2f}" for n in names))


def short(slugs: list[str], expected: set[str], n: int = 5) -> str:
    return ", ".join(f"*{s}*" if s in expected else s for s in slugs[:n]) or "(nothing)"


def print_failures(names: list[str], outcomes: list[Outcome]) -> None:
    """Misses in the top 5 per system, and queries where FTS5 ranks better than /api/search or /ask."""
    print(f"\nFailures (no acceptable entry in the top {RECALL_AT}); acceptable slugs are marked *like this*")
    for name in ("search", "ask"):
        missed = [o for o in outcomes if not o.found(name)]
        print(f"\n{name}: {len(missed)} of {len(outcomes)}")
        for o in missed:
            print(f"  [{o.cls}] {o.query!r}  expected {sorted(o.expected)}")
            for system in names:
                print(f"      {system:<7} rank {o.rank(system) or '-':>2}: {short(o.returned[system], o.expected)}")
    for name in ("search", "ask"):
        worse = [o for o in outcomes if o.reciprocal("fts5") > o.reciprocal(name)]
        print(f"\nQueries where fts5 ranks an acceptable entry higher than {name}: {len(worse)}")
        for o in worse:
            print(f"  [{o.cls}] {o.query!r}: {name} rank {o.rank(name) or '-'}, fts5 rank {o.rank('fts5')}; "
                  f"{name}: {short(o.returned[name], o.expected)}")


def print_per_query(names: list[str], outcomes: list[Outcome]) -> None:
    print("\nPer query: rank of the first acceptable entry (- = not in the top 10)")
    print(f"{'class':<11} {'query':<58}" + "".join(f" {n:>6}" for n in names))
    for o in outcomes:
        print(f"{o.cls:<11} {o.query[:58]:<58}" + "".join(f" {o.rank(n) or '-':>6}" for n in names))


def list_precision(dist: Dist, run: dict[str, Callable[[str], list[str]]],
                   show: bool) -> dict[str, float]:
    """precision@5 over LIST_QUERIES per system: acceptable entries among the first five, divided by
    five (or by the number of acceptable entries, when fewer exist). An empty answer scores 0."""
    known = dist.slugs
    totals = {name: 0.0 for name in run}
    for query, spec in LIST_QUERIES:
        good = acceptable(spec, dist.items)
        if not good or not good <= known:
            raise SystemExit(f"bad list query {query!r}: {sorted(good - known) or 'no acceptable entry'}")
        line = []
        for name, fn in run.items():
            top = fn(query)[:PRECISION_AT]
            share = sum(slug in good for slug in top) / min(PRECISION_AT, len(good))
            totals[name] += share
            line.append(f"{name} {share:.1f}: {short(top, good)}")
        if show:
            print(f"  {query!r} ({len(good)} acceptable)\n      " + "\n      ".join(line))
    return {name: total / len(LIST_QUERIES) for name, total in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--content", type=Path, default=REPO / "content", help="knowledge base to build")
    parser.add_argument("--failures", action="store_true", help="list the failing queries with what each returned")
    parser.add_argument("--per-query", action="store_true", help="print the rank of every query for every system")
    parser.add_argument("--lists", action="store_true", help="print every list question's top 5 per system")
    parser.add_argument("--answers", action="store_true", help="print every list question's acceptable entries")
    parser.add_argument("--write-docs", action="store_true",
                        help="put what this run prints into docs/benchmarks.md (bench/docs.py)")
    args = parser.parse_args()
    with recorded("search_quality.py", args.write_docs):
        run(args)


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dist = build_dist(args.content, Path(tmp))
        names, outcomes = evaluate(dist)
        if args.answers:
            for query, spec in LIST_QUERIES:
                print(f"{query!r}: {', '.join(sorted(acceptable(spec, dist.items)))}")
        if args.lists:
            print("\nList questions: top 5 per system; acceptable entries are marked *like this*")
        precision = list_precision(dist, systems(dist), args.lists)
    print_table(names, summary(names, outcomes))
    single = summary(names, outcomes)[-1][2]
    print(f"\n{len(LIST_QUERIES)} list questions: precision@{PRECISION_AT} "
          + ", ".join(f"{n} {precision[n]:.2f}" for n in names)
          + "  (target: ask >= 0.85)\nsingle-answer questions: MRR "
          + ", ".join(f"{n} {single[n][1]:.2f}" for n in names) + "  (target: ask >= 0.95)")
    if args.per_query:
        print_per_query(names, outcomes)
    if args.failures:
        print_failures(names, outcomes)


if __name__ == "__main__":
    main()

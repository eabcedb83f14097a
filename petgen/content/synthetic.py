"""Synthetic but valid entries, for benchmarks (10,000 entries) and tests of scale and paging."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from petgen.content.text import slugify

# The files copied from a real content directory: site, taxonomy, facets and the /ask lexicon.
TAXONOMY = ("site.yml", "categories.yml", "moods.yml", "facets.yml", "lexicon.yml")
SYLLABLES = ["ku", "schel", "mau", "se", "bär", "chen", "zu", "cker", "spatz", "li", "herz", "blatt", "hasi",
             "knud", "del", "schnu", "cki", "stern", "son", "ne", "gold", "perl", "wöl", "kchen", "lieb"]
CATEGORIES = ["klassiker", "tiere", "suesses", "natur", "kostbar", "maerchen", "international", "lustig", "altmodisch"]
RELATIONSHIPS = ["partner", "kind", "freunde", "familie"]
GENDERS = ["sie", "ihn", "alle"]
REGIONS = ["bayern-oesterreich", "schweiz", "schwaben", "norddeutschland", "berlin", "sachsen", "rheinland",
           "ruhrgebiet", "hessen-pfalz", "franken"]
MOODS = ["zaertlich", "romantisch", "verspielt", "frech", "humorvoll", "kuschelig", "bewundernd", "beschuetzend",
         "nostalgisch", "leidenschaftlich"]


def synthetic_title(i: int, rng: random.Random) -> str:
    word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
    return f"{word.capitalize()} {i}"


def synthetic_entry(i: int, rng: random.Random) -> tuple[str, str]:
    """One entry file (slug, text); every sentence carries the title, so none repeats across entries."""
    t = synthetic_title(i, rng)
    cats = rng.sample(CATEGORIES, rng.randint(1, 3))
    moods = rng.sample(MOODS, rng.randint(1, 3))
    relationship = rng.sample(RELATIONSHIPS, rng.randint(1, 2))
    region = ["ueberregional"] if rng.random() < 0.7 else rng.sample(REGIONS, rng.randint(1, 2))
    origin = " ".join(f"Satz {n} zur Herkunft von {t} erklärt, woher der Name kommt und was er früher bedeutete."
                      for n in range(5))
    usage = " ".join(f"Hinweis {n} zur Verwendung von {t} beschreibt, wer ihn für wen benutzt." for n in range(4))
    text = f"""---
title: {t}
pronunciation: {t.upper()}
ipa: ˈkʊʃl̩maʊ̯s
meaning: {t} ist ein synthetischer Kosename Nummer {i} für Benchmarks und Tests.
variants: [{t}i, {t}chen]
categories: [{", ".join(cats)}]
moods: [{", ".join(moods)}]
keywords: [kuscheln, synthetic, sweetheart, test {i}]
examples:
  - "Gute Nacht, {t}, schlaf gut!"
  - "{t}, bringst du bitte Brot mit?"
  - "Komm her, mein {t}, ich hab dich lieb."
  - "Na, {t}, wieder verschlafen?"
faq:
  - question: Was bedeutet {t}?
    answer: {t} ist ein erfundener Eintrag Nummer {i} für Benchmarks.
  - question: Ist {t} echt?
    answer: Nein, {t} wurde für Tests erzeugt.
datePublished: 2026-01-{rng.randint(1, 28):02d}
lastReviewed: 2026-11-{rng.randint(1, 22):02d}
relationship: [{", ".join(relationship)}]
gender: {rng.choice(GENDERS)}
region: [{", ".join(region)}]
originCertainty: {rng.choice(["belegt", "vermutet", "unbekannt"])}
---

## Herkunft

{origin}

## Verwendung

{usage}
"""
    return slugify(t), text


def write_corpus(target: Path, count: int, *, taxonomy_from: Path, seed: int = 1) -> Path:
    """Write a content directory with `count` synthetic entries and the real site, taxonomy and lexicon (so
    that /ask understands questions about the synthetic entries as it does about the real ones)."""
    rng = random.Random(seed)
    names = target / "names"
    if target.exists():
        shutil.rmtree(target)
    names.mkdir(parents=True)
    for file in TAXONOMY:
        shutil.copy(taxonomy_from / file, target / file)
    for i in range(count):
        slug, text = synthetic_entry(i, rng)
        (names / f"{slug}.md").write_text(text, encoding="utf-8")
    return target

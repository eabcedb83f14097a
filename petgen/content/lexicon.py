"""content/lexicon.yml: the bilingual lexicon /ask uses to understand questions (validated here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petgen.content.model import FILTER_FACETS, Category, Facets, Mood, did_you_mean, parse_yaml, read_text
from petgen.content.problems import Problems
from petgen.search.index import words

# translations: words and phrases -> German words to search for; categories, moods and the facets
# (relationship, gender, region, language): value slug -> the words and phrases that ask for it;
# filler: words dropped from questions.
INTENTS = ("categories", "moods", *FILTER_FACETS)
SECTIONS = ("translations", *INTENTS, "filler")
LANGUAGES = ("en", "de")


def _phrases(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def load_lexicon(content_dir: Path, categories: list[Category], moods: list[Mood],
                 problems: Problems, facets: Facets | None = None) -> dict[str, Any]:
    """Read and check lexicon.yml; a missing file is an empty lexicon."""
    path = content_dir / "lexicon.yml"
    empty: dict[str, Any] = {section: {} for section in SECTIONS}
    empty["filler"] = {"en": [], "de": []}
    if not path.exists():
        return empty
    text = read_text(path, problems)
    data, lines = parse_yaml(text, str(path), problems) if text is not None else (None, {})
    if data is None:
        return empty
    where = str(path)
    if not isinstance(data, dict):
        problems.add(where, 1, "lexicon.yml must be a mapping with " + ", ".join(SECTIONS))
        return empty
    ok = True
    for key in data:
        if key not in SECTIONS:
            problems.add(where, lines.get(str(key), 1), f"unknown section '{key}'", did_you_mean(str(key), SECTIONS))
            ok = False
    vocabularies = {"categories": {c.slug for c in categories}, "moods": {m.slug for m in moods},
                    "filler": set(LANGUAGES),
                    **{name: set(facets.slugs(name)) if facets else set() for name in FILTER_FACETS}}
    for section in SECTIONS:
        value = data.get(section, {})
        line = lines.get(section, 1)
        if not isinstance(value, dict):
            problems.add(where, line, f"'{section}' must be a mapping")
            ok = False
            continue
        for key, phrases in value.items():
            if section in vocabularies and key not in vocabularies[section]:
                problems.add(where, line, f"{section}: unknown key '{key}'",
                             did_you_mean(str(key), vocabularies[section]) or
                             f"allowed: {', '.join(sorted(vocabularies[section]))}")
                ok = False
            if not _phrases(phrases):
                bad = [v for v in phrases if not isinstance(v, str)] if isinstance(phrases, list) else []
                problems.add(where, line, f"{section}: '{key}' must be a list of words or phrases",
                             f"quote {', '.join(repr(v) for v in bad)}: YAML reads on/off/yes/no as true/false"
                             if bad else None)
                ok = False
    if not ok:
        return empty
    return {section: data.get(section, {}) for section in SECTIONS}


@dataclass
class Lexicon:
    """The lexicon compiled for matching: folded phrases to actions, and the filler words."""

    phrases: dict[tuple[str, ...], list[tuple[str, str]]]  # folded phrase -> [(kind, value)]
    filler: frozenset[str]

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Lexicon:
        phrases: dict[tuple[str, ...], list[tuple[str, str]]] = {}
        for english, german in data.get("translations", {}).items():
            found = phrases.setdefault(tuple(words(english)), [])  # no targets: a phrase of filler ("den ganzen Tag")
            found.extend(("translate", target) for target in german)
        for kind in INTENTS:
            for slug, triggers in data.get(kind, {}).items():
                for trigger in triggers:
                    phrases.setdefault(tuple(words(trigger)), []).append((kind, slug))
        filler = {w for language in data.get("filler", {}).values() for phrase in language for w in words(phrase)}
        return cls(phrases={k: v for k, v in phrases.items() if k}, filler=frozenset(filler))

"""The checks across entries of a load with a cache check again only what a change can affect (petgen/content/
findings.py): after edits that make and mend broken links, variants that are another entry's title, word families
of two genders and shared sentences, also in entries that did not change, they report what a load without a cache
reports, in the same order."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from petgen.content import findings
from petgen.content.kb import load_knowledge_base
from petgen.content.problems import ContentError, Problem
from tests.conftest import entry_text, made_or_not
from tests.petgen.test_incremental import RELATED


def problems(content: Path, cache: Path | None = None) -> list[Problem]:
    """What a load reports: its warnings, or the problems of the error it raises (the review dates of edited
    entries left out: only a load with a cache knows them)."""
    try:
        found = load_knowledge_base(content, cache_dir=cache).warnings
    except ContentError as error:
        found = error.problems
    return [p for p in found if "lastReviewed is still" not in p.message]


class Breaker:
    """Seeded random changes to a copy of the bundled content that make and mend problems across entries."""

    def __init__(self, content: Path, seed: int) -> None:
        self.names = content / "names"
        self.random = random.Random(seed)
        self.removed: dict[str, str] = {}  # slug -> text, of deleted entries

    def slugs(self) -> list[str]:
        return sorted(p.stem for p in self.names.glob("*.md"))

    def pick(self) -> tuple[str, str]:
        slug = self.random.choice(self.slugs())
        return slug, (self.names / f"{slug}.md").read_text(encoding="utf-8")

    def field(self, text: str, key: str) -> str:
        return re.search(rf"^{key}: (.*)$", text, re.MULTILINE).group(1)  # type: ignore[union-attr]

    def put(self, slug: str, text: str, key: str, value: str) -> None:
        (self.names / f"{slug}.md").write_text(re.sub(rf"^{key}: .*$", lambda _: f"{key}: {value}", text, count=1,
                                                      flags=re.MULTILINE), encoding="utf-8")

    def step(self) -> str:
        kind = self.random.choice(["link", "unlink", "variant", "variant", "gender", "gender", "note", "sentence",
                                   "delete", "restore", "copy", "meaning"])
        slug, text = self.pick()
        other, other_text = self.pick()
        related = RELATED.search(text)
        if kind == "link" and related:  # to an entry, or to none (a broken link, with a hint naming the nearest)
            target = self.random.choice([other, other + "x", *self.removed])
            self.put(slug, text, "related", f"[{', '.join([*related.group(1).split(', '), target])}]")
        elif kind == "unlink" and related and related.group(1):
            self.put(slug, text, "related", f"[{', '.join(related.group(1).split(', ')[1:])}]")
        elif kind == "variant":  # another entry's title as a variant (an error), or a variant of its own
            title = self.field(other_text, "title").strip('"')
            self.put(slug, text, "variants", f"[{self.random.choice([title, title, slug + 'chen'])}]")
        elif kind == "gender":  # the word family then disagrees, or agrees again
            text = re.sub(r"^genderNote: .*\n", "", text, count=1, flags=re.MULTILINE)
            self.put(slug, text, "gender", self.random.choice(["sie", "ihn", "alle"]))
        elif kind == "note":  # says why the word family disagrees, or no longer
            if "\ngenderNote: " in text:
                (self.names / f"{slug}.md").write_text(re.sub(r"^genderNote: .*\n", "", text, flags=re.MULTILINE),
                                                       encoding="utf-8")
            else:
                self.put(slug, text, "gender", self.field(text, "gender") + "\ngenderNote: Mal so, mal so.")
        elif kind == "sentence":  # a sentence of another entry's meaning: shared, or no longer
            self.put(slug, text, "meaning", self.random.choice([self.field(other_text, "meaning"),
                                                                '"Ein ganz eigener Satz mit sechs Wörtern hier."']))
        elif kind == "delete":  # the entries linking to it then link to nothing
            self.removed[slug] = text
            (self.names / f"{slug}.md").unlink()
        elif kind == "restore" and self.removed:
            name = self.random.choice(sorted(self.removed))
            (self.names / f"{name}.md").write_text(self.removed.pop(name), encoding="utf-8")
        elif kind == "copy":  # an entry under another name, before or after the original: shares every sentence
            copy = self.random.choice(["aaa", "zzz"]) + slug
            (self.names / f"{copy}.md").write_text(text, encoding="utf-8")
        else:
            self.put(slug, text, "meaning", '"Neu gesagt: ' + self.field(text, "meaning").strip('"') + '"')
        return f"{kind} {slug} {other}"


@pytest.mark.parametrize(("seed", "keep"), [(1, findings.KEEP_STATE), (2, findings.KEEP_STATE), (3, 2)])
def test_findings_of_a_cached_load_equal_those_of_a_clean_load(bundled: Path, tmp_path: Path, seed: int, keep: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    updates = made_or_not(monkeypatch, findings, "update")
    monkeypatch.setattr(findings, "KEEP_STATE", keep)  # 2: the state is saved again every few loads
    breaker, cache, kinds = Breaker(bundled, seed), tmp_path / "cache", set()
    assert problems(bundled, cache) == problems(bundled)
    for _ in range(25):
        done = [breaker.step() for _ in range(breaker.random.choice([1, 1, 2]))]
        cached, clean = problems(bundled, cache), problems(bundled)
        assert cached == clean, done
        kinds.update(kind for kind, words in [("link", "does not exist"), ("variant", "is the title of"),
                                              ("gender", "differs from the related"), ("sentence", "sentence also")]
                     if any(words in p.message for p in clean))
    assert kinds == {"link", "variant", "gender", "sentence"}  # every kind of problem came up
    assert updates.count(True) >= 20  # checked again only where a change showed


def test_findings_are_not_kept_when_the_rules_change(bundled: Path, tmp_path: Path) -> None:
    """Another taxonomy makes other findings: a mood no longer known is reported in every entry that lists it."""
    cache = tmp_path / "cache"
    assert problems(bundled, cache) == problems(bundled) == []
    moods = (bundled / "moods.yml").read_text(encoding="utf-8")
    (bundled / "moods.yml").write_text(re.sub(r"slug: frech\b", "slug: keck", moods), encoding="utf-8")
    clean = problems(bundled)
    assert any("unknown mood 'frech'" in p.message for p in clean)
    assert problems(bundled, cache) == clean


def test_an_entry_that_fails_to_load_is_checked_as_without_a_cache(bundled: Path, tmp_path: Path) -> None:
    """A link to an entry file that does not load is not reported (its own error is): the slugs the link checks
    know are then not those of the entries, and every entry is checked."""
    cache = tmp_path / "cache"
    problems(bundled, cache)
    (bundled / "names" / "achi.md").write_text("---\ntitle: [\n---\n", encoding="utf-8")
    clean = problems(bundled)
    assert clean and not any("does not exist" in p.message for p in clean)
    assert problems(bundled, cache) == clean


def test_an_unchanged_entry_is_checked_again_where_a_change_shows_in_it(bundled: Path, tmp_path: Path) -> None:
    """An entry that does not change gains and loses problems through others: a variant becomes another entry's
    title, the hint of a broken link names another slug as the nearest."""
    cache, names = tmp_path / "cache", bundled / "names"
    text = (names / "achi.md").read_text(encoding="utf-8")
    text = text.replace("variants: [Akhi,", "variants: [Kumpelchen, Akhi,")
    text = text.replace("related: [bro,", "related: [hasix, bro,")
    (names / "achi.md").write_text(text, encoding="utf-8")
    steps = [("kumpelchen.md", entry_text("Kumpelchen")), ("hasixy.md", entry_text("Hasixy")),
             ("kumpelchen.md", None), ("hasixy.md", None)]
    seen = [problems(bundled, cache)]
    assert seen[0] == problems(bundled)
    for name, written in steps:
        if written is None:
            (names / name).unlink()
        else:
            (names / name).write_text(written, encoding="utf-8")
        seen.append(problems(bundled, cache))
        assert seen[-1] == problems(bundled), name
    variant = [any("variant 'Kumpelchen' is the title" in p.message for p in found) for found in seen]
    hints = [next(p.hint for p in found if "'hasix' does not exist" in p.message) for found in seen]
    assert variant == [False, True, True, False, False]
    assert hints == ["did you mean 'hasi'?", "did you mean 'hasi'?", "did you mean 'hasixy'?",
                     "did you mean 'hasixy'?", "did you mean 'hasi'?"]

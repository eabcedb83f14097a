"""The cross-entry checks of a build with a cache start from the last build's results (petgen/content/phrases.py,
the per-entry memo in `validate`) and entries come from their light form (petgen/content/lazy.py): the problems
they report are those of a load without a cache, after random edits, additions, renames and deletions, also
when phrases cross the limit of MAX_PHRASE_ENTRIES entries either way."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from petgen.content import phrases
from petgen.content.kb import load_knowledge_base
from petgen.content.lazy import LazyEntry
from petgen.content.phrases import STATE
from petgen.content.synthetic import write_corpus
from petgen.content.validate import MAX_PHRASE_ENTRIES
from tests.conftest import REPO, made_or_not
from tests.petgen.test_incremental import Editor


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_problems_of_a_cached_load_equal_those_of_a_clean_load(tmp_path: Path, seed: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    updates = made_or_not(monkeypatch, phrases, "_updated")
    # A few entries more than the limit: their common phrases are reported, and drop under the limit (and come
    # back) as entries are deleted (and moved back in from `more`).
    more = write_corpus(tmp_path / "more", MAX_PHRASE_ENTRIES + 8, taxonomy_from=REPO / "content")
    content = write_corpus(tmp_path / "content", MAX_PHRASE_ENTRIES + 2, taxonomy_from=REPO / "content")
    editor, rng, cache = Editor(content, seed), random.Random(seed), tmp_path / "cache"
    load_knowledge_base(content, cache_dir=cache)
    reported = set()
    for number in range(10):
        done = []
        for _ in range(1 + number % 3):
            kind = rng.choice(["edit", "drop", "drop"] if number < 5 else ["edit", "restore", "restore"])
            absent = sorted(p.name for p in (more / "names").glob("*.md") if not (content / "names" / p.name).exists())
            if kind == "drop":
                victim = rng.choice(sorted((content / "names").glob("*.md")))
                victim.unlink()
                editor.relink(victim.stem, None)
                done.append(f"drop {victim.stem}")
            elif kind == "restore" and absent:
                name = rng.choice(absent)
                shutil.copy(more / "names" / name, content / "names" / name)
                done.append(f"restore {name}")
            else:
                done.append(editor.step())
        kb = load_knowledge_base(content, cache_dir=cache)
        clean = load_knowledge_base(content)
        since = [w for w in kb.warnings if "lastReviewed is still" in w.message]  # only a cached load knows the last
        assert [w for w in kb.warnings if w not in since] == clean.warnings, done  # build: edits kept their dates
        assert kb.entries == clean.entries, done
        reported.add(any("the phrase" in w.message for w in kb.warnings))
    assert next(cache.glob(f"entries-*/*/{STATE}"))
    assert reported == {True, False}  # the phrases crossed the limit
    assert updates.count(True) >= 8  # updated from the last load's count, not counted anew


def test_a_cached_load_reads_no_chunk_and_checks_no_unchanged_entry(tmp_path: Path) -> None:
    """Loading 60 unchanged entries from the cache unpickles none: every stage of the load reads their light form."""
    content = write_corpus(tmp_path / "content", 60, taxonomy_from=REPO / "content")
    load_knowledge_base(content, cache_dir=tmp_path / "cache")
    kb = load_knowledge_base(content, cache_dir=tmp_path / "cache")
    assert any("the phrase" in w.message for w in kb.warnings)
    assert all(isinstance(e, LazyEntry) for e in kb.entries)
    assert all("_source" in vars(e) for e in kb.entries)  # a repeated phrase's first entry too: its line is kept

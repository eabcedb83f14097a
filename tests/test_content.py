"""The bundled knowledge base passes the strict check and builds."""

from __future__ import annotations

import csv
from collections import Counter

import pytest

from petgen.kb import load_knowledge_base
from petgen.validate import MIN_ENTRIES_PER_CATEGORY
from tests.conftest import REPO

REQUIRED = REPO.parent / "shared" / "content" / "required-names.tsv"


def test_bundled_content_passes_strict_check() -> None:
    kb = load_knowledge_base(REPO / "content", strict=True)
    assert len(kb.entries) >= 12
    assert kb.warnings == []


def test_every_required_name_is_there_with_its_slug() -> None:
    if not REQUIRED.exists():  # ../shared sits beside the repository in CI and development
        pytest.skip("../shared/content/required-names.tsv is not beside the repository")
    kb = load_knowledge_base(REPO / "content")
    titles = {e.title: e.slug for e in kb.entries}
    with REQUIRED.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) > 100
    for row in rows:
        assert titles.get(row["title"]) == row["slug"], row


def test_knowledge_base_coverage() -> None:
    """At least 250 entries, every field filled, no category with fewer than 8 entries."""
    kb = load_knowledge_base(REPO / "content")
    assert len(kb.entries) >= 250
    for entry in kb.entries:
        for field in ("variants", "keywords", "examples", "faq", "related", "categories", "moods"):
            assert getattr(entry, field), (entry.slug, field)
        assert 4 <= len(entry.keywords) <= 12 and 2 <= len(entry.faq) <= 3
    per_category = Counter(c for e in kb.entries for c in e.categories)
    assert min(per_category[c.slug] for c in kb.categories) >= MIN_ENTRIES_PER_CATEGORY
    assert all(any(m in e.moods for e in kb.entries) for m in [m.slug for m in kb.moods])

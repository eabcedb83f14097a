"""The bundled knowledge base passes the strict check and builds."""

from __future__ import annotations

import csv

import pytest

from petgen.content.kb import load_knowledge_base
from petgen.content.validate import MIN_ENTRIES_PER_CATEGORY
from tests.conftest import REPO

SHARED = REPO.parent / "shared" / "content"
REQUIRED_LISTS = ["required-names.tsv", "required-names-2.tsv"]


def test_bundled_content_passes_strict_check() -> None:
    kb = load_knowledge_base(REPO / "content", strict=True)
    assert len(kb.entries) >= 12
    assert kb.warnings == []


@pytest.mark.parametrize("name", REQUIRED_LISTS)
def test_every_required_name_is_there_with_its_slug(name: str) -> None:
    required = SHARED / name
    if not required.exists():  # ../shared sits beside the repository in CI and development
        pytest.skip(f"../shared/content/{name} is not beside the repository")
    kb = load_knowledge_base(REPO / "content")
    titles = {e.title: e.slug for e in kb.entries}
    with required.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) > 30
    for row in rows:
        assert titles.get(row["title"]) == row["slug"], row


def test_knowledge_base_coverage() -> None:
    """At least 340 entries, every field filled, no category with fewer than 8 entries."""
    kb = load_knowledge_base(REPO / "content")
    assert len(kb.entries) >= 340
    for entry in kb.entries:
        for field in ("variants", "keywords", "examples", "faq", "related", "categories", "moods"):
            assert getattr(entry, field), (entry.slug, field)
        assert 4 <= len(entry.keywords) <= 12 and 2 <= len(entry.faq) <= 3
    per_category = {c.slug: len(kb.in_category(c.slug)) for c in kb.categories}  # aliases by their facet
    assert min(per_category.values()) >= MIN_ENTRIES_PER_CATEGORY, per_category
    assert all(any(m in e.moods for e in kb.entries) for m in [m.slug for m in kb.moods])


def test_facets_cover_every_region_and_the_common_family_languages() -> None:
    """Names people ask for by region and by the languages German speakers' families speak."""
    counts = load_knowledge_base(REPO / "content").facet_counts()
    assert all(n >= 3 for n in counts["region"].values()), counts["region"]
    for language in ("englisch", "italienisch", "tuerkisch", "arabisch", "polnisch"):
        assert counts["language"][language] >= 3, (language, counts["language"])
    assert all(n >= 8 for n in counts["relationship"].values()), counts["relationship"]
    assert all(n >= 8 for n in counts["gender"].values()), counts["gender"]


def test_the_voice_is_not_a_formula() -> None:
    """The second edition's targets: usage sections rarely open with "X ist/gilt/klingt/wirkt", "klingt" is
    rare, and no five-word phrase is in more than 12 entries (`petgen check --strict` enforces that one)."""
    import re

    from petgen.content.validate import repeated_phrases

    kb = load_knowledge_base(REPO / "content")
    formula = [e.slug for e in kb.entries
               if re.match(r"\W*(?:[*_]*)" + re.escape(e.title) + r"(?:[*_]*)\s+(?:ist|gilt|klingt|wirkt)\b", e.usage)]
    assert len(formula) <= 0.3 * len(kb.entries), f"{len(formula)} of {len(kb.entries)} usage sections: {formula[:10]}"
    klingt = sum(len(re.findall(r"\bklingt\b", text, re.IGNORECASE)) for e in kb.entries
                 for text in (e.meaning, e.origin, e.usage, *e.examples, *(f["answer"] for f in e.faq)))
    assert klingt <= 150
    assert repeated_phrases(kb.entries) == []

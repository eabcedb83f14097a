"""The bundled knowledge base passes the strict check and builds."""

from __future__ import annotations

import csv
from pathlib import Path

from petgen.kb import load_knowledge_base
from tests.conftest import REPO

REQUIRED = REPO.parent / "shared" / "content" / "required-names.tsv"


def test_bundled_content_passes_strict_check() -> None:
    kb = load_knowledge_base(REPO / "content", strict=True)
    assert len(kb.entries) >= 12
    assert kb.warnings == []


def test_bundled_entries_use_required_slugs() -> None:
    """Every required name that is present has exactly the slug the list gives."""
    if not REQUIRED.exists():  # ../shared sits beside the repository in CI and development
        return
    kb = load_knowledge_base(REPO / "content")
    titles = {e.title: e.slug for e in kb.entries}
    with REQUIRED.open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["title"] in titles:
                assert titles[row["title"]] == row["slug"], row

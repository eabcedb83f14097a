from __future__ import annotations

import pytest

from petgen.content.text import collation_key, slugify


@pytest.mark.parametrize("title, slug", [
    ("Bärchen", "baerchen"), ("Honey Bunny", "honey-bunny"), ("Chérie", "cherie"), ("Süßmaus", "suessmaus"),
    ("Cariño", "carino"), ("  --Mon   Amour!! ", "mon-amour"), ("Schätzle", "schaetzle"), ("ÄÖÜ", "aeoeue"),
    ("Zwerg 7", "zwerg-7"), ("Straße", "strasse"),
    # letters Unicode does not decompose: Turkish dotless i, Polish ł, Danish ø
    ("Aşkım", "askim"), ("Canım", "canim"), ("Słoneczko", "sloneczko"), ("Søde", "sode"), ("İnci", "inci"),
])
def test_slug_rule(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_german_collation() -> None:
    titles = ["Zucker", "Öl", "Apfel", "Äffchen", "Übel", "ohr", "Ulme", "Bär", "Bar", "baer"]
    assert sorted(titles, key=collation_key) == ["Äffchen", "Apfel", "baer", "Bar", "Bär", "ohr", "Öl", "Übel",
                                                 "Ulme", "Zucker"]

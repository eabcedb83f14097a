"""Fixtures that build a tiny real site (MkDocs/Starlette style): content → dist → client."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from petgen.content.synthetic import write_corpus
from runtime.app import PetgenApp, create_app
from runtime.settings import Settings

pytest_plugins = ["tests.redis_server",  # the real redis-server fixtures: redis_server, redis_url, own_redis
                  "tests.runtime.webhooks.support"]  # receiver: a real webhook receiver on loopback

REPO = Path(__file__).resolve().parent.parent
TAXONOMY = REPO / "content"
BASE_URL = "http://testserver"

# A complete, valid entry. Line numbers matter: tests point at them.
ENTRY = """---
title: {title}
pronunciation: SCHNU-cki
ipa: ˈʃnʊki
meaning: Ein verspielter Kosename für {title}, der Zuneigung und Vertrautheit ausdrückt.
variants: [{title}lein]
categories: [{categories}]
moods: [{moods}]
keywords: [süß, niedlich, cute, sweetheart]
examples:
  - "Guten Morgen, {title}, hast du gut geschlafen?"
  - "{title}, denkst du an den Einkauf heute Abend?"
  - "Ach {title}, ich bin so froh, dass es dich gibt."
  - "Na, {title}, schon wieder die Decke geklaut?"
faq:
  - question: Ist {title} für jedes Geschlecht geeignet?
    answer: Ja, {title} passt für Partnerinnen und Partner gleichermaßen.
  - question: Klingt {title} kindisch?
    answer: Unter Paaren wirkt {title} liebevoll, im Beruf eher unpassend.
datePublished: 2026-01-15
lastReviewed: 2026-11-01
relationship: [{relationship}]
gender: {gender}
region: [{region}]
originCertainty: vermutet
---

## Herkunft

Der Name {title} ist eine Bildung aus der Umgangssprache, die im zwanzigsten Jahrhundert belegt ist.
Wie genau {title} entstand, ist nicht sicher überliefert; Wörterbücher führen {title} als Kosewort
mit einer Verkleinerungsendung, die Nähe und Zärtlichkeit ausdrückt. Der Klang von {title} ist weich,
und die Endung macht das Wort freundlich. Mehr lässt sich über die Geschichte von {title} ohne
Spekulation nicht sagen, und so bleibt {title} ein Beispiel für viele ähnliche Kosewörter im Deutschen.

## Verwendung

{title} benutzen vor allem Paare im Alltag, in Nachrichten und am Telefon. Der Name {title} klingt
verspielt und warm, passt für jedes Geschlecht und wirkt in der Öffentlichkeit manchmal etwas
albern. Im Beruf sollte man {title} lieber nicht verwenden, dort wirkt es fehl am Platz.
"""

# (title, categories, moods, and optionally the facets: relationship, gender, region)
TITLES = [("Schnucki", "klassiker", "verspielt, zaertlich"),
          ("Äffchen", "tiere", "verspielt", "kind", "alle", "ueberregional"),
          ("Zuckerstück", "suesses", "zaertlich"),
          ("Apfel", "natur", "kuschelig", "partner, kind", "sie", "rheinland"),
          ("Ölprinz", "maerchen", "humorvoll, frech", "partner", "ihn", "ueberregional"),
          ("ohrwurm", "lustig", "humorvoll", "freunde", "alle", "berlin, sachsen")]


def entry_text(title: str, categories: str = "klassiker", moods: str = "zaertlich", relationship: str = "partner",
               gender: str = "alle", region: str = "ueberregional") -> str:
    return ENTRY.format(title=title, categories=categories, moods=moods, relationship=relationship, gender=gender,
                        region=region)


def write_site(root: Path, titles: list[tuple[str, ...]] = TITLES) -> Path:
    """A content directory with the real taxonomy and a few valid entries."""
    from petgen.content.text import slugify

    (root / "names").mkdir(parents=True, exist_ok=True)
    for name in ("site.yml", "categories.yml", "moods.yml", "facets.yml"):
        shutil.copy(TAXONOMY / name, root / name)
    for title, *fields in titles:
        (root / "names" / f"{slugify(title)}.md").write_text(entry_text(title, *fields), encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CLI builds in tests keep their entry cache in the test's directory, never in the checkout."""
    monkeypatch.setenv("PETGEN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(autouse=True)
def cwd_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Tests run in their own directory, so the runtime's default state directory (`.petgen`, relative: the
    webhook store) is created there, never in the checkout, and no test sees another's subscriptions."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def content(tmp_path: Path) -> Path:
    return write_site(tmp_path / "content")


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """A copy of the repository's own content (content/), to edit."""
    content = tmp_path / "content"
    shutil.copytree(REPO / "content", content)
    return content


@pytest.fixture
def dist(content: Path, tmp_path: Path) -> Path:
    build(content, tmp_path / "dist", base_url=BASE_URL)
    return tmp_path / "dist"


@pytest.fixture(scope="session")
def big_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """450 synthetic entries: several precomputed pages per list."""
    root = tmp_path_factory.mktemp("big")
    write_corpus(root / "content", 450, taxonomy_from=TAXONOMY)
    build(root / "content", root / "dist", base_url=BASE_URL)
    return root / "dist"


@pytest.fixture
def make_client() -> Callable[..., TestClient]:
    def factory(dist: Path, **settings: object) -> TestClient:
        app: PetgenApp = create_app(Settings(dist=dist, **settings))  # type: ignore[arg-type]
        return TestClient(app, base_url=BASE_URL, raise_server_exceptions=False)

    return factory


@pytest.fixture
def client(dist: Path, make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(dist, rate_limit=0)


def made_or_not(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[bool]:
    """Wrap the function `owner.name` for the test: the list it returns gets, per call, whether the call made
    something (returned other than None)."""
    made: list[bool] = []
    original = getattr(owner, name)

    def spy(*args):  # type: ignore[no-untyped-def]
        found = original(*args)
        made.append(found is not None)
        return found

    monkeypatch.setattr(owner, name, spy)
    return made

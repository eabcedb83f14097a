"""The human site as built: every list page, pagination, weights, share previews, JSON-LD, sitemap, /docs.

The browser tests (tests/test_site_browser.py) drive the same pages in Chromium; these read the files.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from xml.etree import ElementTree

import cmarkgfm
import orjson
import pytest

from petgen.build.pipeline import build
from petgen.content.kb import load_knowledge_base
from petgen.emit.browse import KINDS, PAGE_SIZE
from petgen.emit.guide import GUIDE, guide_html
from petgen.emit.templating import german_date, markdown
from tests.conftest import BASE_URL, TAXONOMY
from tests.petgen.test_escaping import Page

WEIGHT_LIMIT = 50 * 1024  # HTML + CSS + JS of one page, uncompressed


@pytest.fixture(scope="module")
def real_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real content: every facet value has entries, some lists have several pages."""
    out = tmp_path_factory.mktemp("real") / "dist"
    build(TAXONOMY, out, base_url=BASE_URL)
    return out


def html_pages(dist: Path) -> dict[str, str]:
    return {"/" + str(p.relative_to(dist)).removesuffix("index.html"): p.read_text(encoding="utf-8")
            for p in sorted(dist.rglob("*.html"))}


def json_ld(html: str) -> list[dict]:
    return [json.loads(block) for block in re.findall(r'<script type="application/ld\+json">(.*?)</script>', html)]


def test_every_page_weighs_under_50_kb_with_its_stylesheet_and_script(real_dist: Path) -> None:
    weights = {}
    for route, html in html_pages(real_dist).items():
        assets = re.findall(r'<link rel="stylesheet" href="(/assets/[^"]+)">|<script src="(/assets/[^"]+)"', html)
        size = len(html.encode()) + sum((real_dist / path.lstrip("/")).stat().st_size for pair in assets for path in pair if path)
        weights[route] = size
    assert len(weights) > 400 and max(weights.values()) < WEIGHT_LIMIT, max(weights.items(), key=lambda kv: kv[1])


def test_every_page_is_german_with_nav_footer_icon_and_share_preview(real_dist: Path) -> None:
    for route, html in html_pages(real_dist).items():
        assert html.startswith('<!doctype html>\n<html lang="de">'), route
        page = Page(html)
        assert page.misnested == [] and page.open == [], route
        metas = {m.get("property") or m.get("name"): m.get("content") for m in page.all("meta")}
        assert metas["og:image"] and re.fullmatch(rf"{BASE_URL}/assets/og\.[0-9a-f]{{12}}\.png", metas["og:image"])
        assert metas["twitter:card"] == "summary_large_image" and metas["og:title"] and metas["og:description"]
        assert any(link.get("rel") == "icon" for link in page.all("link")), route
        assert any(nav.get("aria-label") == "Hauptnavigation" for nav in page.all("nav")), route
        assert "<footer>" in html and 'rel="license"' in html and f'href="{BASE_URL}/docs"' in html, route
        canonical = [link["href"] for link in page.all("link") if link.get("rel") == "canonical"]
        if route == "/404.html":
            assert canonical == []  # served at every path that has no page
        else:
            expected = {"/docs/": "/docs", "/names/": "/a-z/"}.get(route, route)  # /docs has no slash; /names/ = A–Z
            assert canonical == [BASE_URL + expected], route
            assert metas["og:url"] == canonical[0]


def test_each_category_mood_and_facet_value_has_its_list_with_every_name_once(real_dist: Path) -> None:
    kb = load_knowledge_base(TAXONOMY, base_url=BASE_URL)
    pages = html_pages(real_dist)
    members = {
        "category": {c.slug: {e.slug for e in kb.in_category(c.slug)} for c in kb.categories},
        "mood": {m.slug: {e.slug for e in kb.entries if m.slug in e.moods} for m in kb.moods},
        **{facet: {v.slug: {e.slug for e in kb.entries if v.slug in getattr(e, facet)}
                   for v in kb.facets.values[facet]} for facet in ("relationship", "region", "language")},
    }
    paginated = 0
    for kind in KINDS:
        assert f"/{kind.segment}/" in pages
        for slug, expected in members[kind.name].items():
            url = f"/{kind.segment}/{slug}/"
            first = pages[url]
            assert f"<p>{len(expected)} Kosename" in first, url
            count = max(1, -(-len(expected) // PAGE_SIZE))
            shown: list[str] = []
            for number in range(1, count + 1):
                html = pages[url if number == 1 else f"{url}{number}/"]
                shown += re.findall(rf'<li class="card"><h3><a href="{BASE_URL}/names/([^/]+)/">', html)
                (term_set,) = json_ld(html)
                assert term_set["@type"] == "DefinedTermSet" and len(term_set["hasDefinedTerm"]) == len(
                    re.findall(r'<li class="card">', html))
            assert f"{url}{count + 1}/" not in pages
            assert sorted(shown) == sorted(expected), url  # every member once, across the pages
            paginated += count > 1
    assert paginated >= 5


def test_the_home_page_has_search_entry_points_and_a_search_action(real_dist: Path) -> None:
    home = (real_dist / "index.html").read_text(encoding="utf-8")
    assert 'action="http://testserver/search/"' in home and 'name="q"' in home
    for segment in ("categories/tiere", "relationships/partner", "moods/kuschelig", "regions/schweiz",
                    "languages/englisch", "a-z", "names/", "docs"):
        assert f'href="{BASE_URL}/{segment}' in home, segment
    (website,) = json_ld(home)
    assert website["@type"] == "WebSite"
    action = website["potentialAction"]
    assert action["target"]["urlTemplate"] == f"{BASE_URL}/search/?q={{search_term_string}}"
    assert action["query-input"] == "required name=search_term_string"


def test_name_pages_link_their_facets_and_show_cautions_and_german_dates(real_dist: Path) -> None:
    page = (real_dist / "names" / "baerchen" / "index.html").read_text(encoding="utf-8")
    for href in ("categories/tiere/", "moods/kuschelig/", "relationships/partner/", "regions/ueberregional/",
                 "languages/deutsch/", "categories/neutral/", "names/teddybaer/"):
        assert f'href="{BASE_URL}/{href}"' in page, href
    assert '<time datetime="2026-11-22">22. November 2026</time>' in page
    assert f'href="{BASE_URL}/api/names/baerchen">dieser Eintrag als JSON' in page
    (term,) = json_ld(page)
    assert term["@type"] == "DefinedTerm" and term["inDefinedTermSet"]["@type"] == "DefinedTermSet"
    cautions = [p for p in (real_dist / "names").glob("*/index.html") if 'class="caution"' in p.read_text("utf-8")]
    assert cautions
    assert '<aside class="caution" aria-label="Vorsicht"><strong>⚠️ Kann verletzen</strong>' in cautions[0].read_text("utf-8")


@pytest.mark.parametrize(("iso", "german"), [("2026-11-22", "22. November 2026"), ("2024-03-01", "1. März 2024"),
                                             ("1999-12-31", "31. Dezember 1999")])
def test_german_dates(iso: str, german: str) -> None:
    assert german_date(iso) == german


MARKDOWN = ["[a]: https://example.org/a\n\nMit *Verweis* [a].", "Ohne Definition: [a], [b][a].",
            "| Name | Bedeutung |\n|---|---|\n| Schatz | Kostbarkeit |\n\nDanach ~~durch~~ www.example.org.",
            "- [x] erledigt\n- [ ] offen\n\n<script>alert(1)</script> [x](javascript:alert(1))",
            "Ein Absatz ohne Zeilenende", "> Zitat\n\n```\nCode\n```", "| nur | eine Zeile |", ""]


def test_markdown_renders_each_text_as_cmarkgfm_does_with_a_parser_of_its_own() -> None:
    """`markdown` keeps its parser from text to text: a reference, a table or an open block of one text is not
    in the next. (Not rendered in threads at once: cmark-gfm's inline extensions share a table between parsers.)"""
    expected = [cmarkgfm.github_flavored_markdown_to_html(text) for text in MARKDOWN]
    assert [markdown(text) for text in MARKDOWN * 2] == expected * 2
    assert 'href="https://example.org/a"' in expected[0] and "<a" not in expected[1] and "<table>" in expected[2]
    with ThreadPoolExecutor(1) as pool:  # another thread: a parser of its own
        assert list(pool.map(markdown, MARKDOWN)) == expected


def test_sitemap_and_robots(real_dist: Path) -> None:
    manifest = orjson.loads((real_dist / "_manifest.json").read_bytes())
    pages = {route for route, info in manifest["routes"].items() if info["type"].startswith("text/html")}
    tree = ElementTree.fromstring((real_dist / "sitemap.xml").read_bytes())
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [u.findtext("s:loc", namespaces=ns) for u in tree.findall("s:url", ns)]
    assert sorted(locs) == sorted(BASE_URL + route for route in pages - {"/names/"}) and len(locs) == len(set(locs))
    baerchen = next(u for u in tree.findall("s:url", ns) if u.findtext("s:loc", namespaces=ns).endswith("/baerchen/"))
    assert baerchen.findtext("s:lastmod", namespaces=ns) == "2026-11-24"
    assert f"Sitemap: {BASE_URL}/sitemap.xml" in (real_dist / "robots.txt").read_text()
    assert manifest["routes"]["/sitemap.xml"]["type"] == "application/xml; charset=utf-8"


def test_the_schemas_page_shows_every_schema_of_the_openapi_document(real_dist: Path) -> None:
    """Folded JSON (short parts on one line) that reads back as the document's schemas, HTML-safe."""
    import html as markup
    page = (real_dist / "docs" / "schemas" / "index.html").read_text(encoding="utf-8")
    blocks = re.findall(r'<details id="schema-([^"]+)">.*?<pre tabindex="0">(.*?)</pre>', page, re.S)
    document = json.loads((real_dist / "openapi.json").read_text(encoding="utf-8"))
    assert [name for name, _ in blocks] == list(document["components"]["schemas"])
    for name, text in blocks:
        assert "<" not in text and json.loads(markup.unescape(text)) == document["components"]["schemas"][name]
        assert text.count("\n") < json.dumps(document["components"]["schemas"][name], indent=1).count("\n") or \
            "\n" not in text, name


def test_docs_render_the_guide_and_the_reference_without_raw_markdown(real_dist: Path) -> None:
    reference = (real_dist / "docs" / "index.html").read_text(encoding="utf-8")
    assert "`" not in re.sub(r"<pre.*?</pre>", "", reference, flags=re.DOTALL)  # descriptions rendered, not raw Markdown
    assert 'id="common-parameters"' in reference and "<code>nextUrl</code>" in reference
    for page in GUIDE:
        html = (real_dist / "docs" / page.slug / "index.html").read_text(encoding="utf-8")
        assert f"<title>{page.title} – API-Dokumentation" in html
        assert "](" not in html and not re.search(r'href="[^"/#h][^"]*"', html)  # no link left to a .md file
    started = (real_dist / "docs" / "getting-started" / "index.html").read_text(encoding="utf-8")
    assert f'href="{BASE_URL}/docs/api/#rate-limits"' in started
    api = (real_dist / "docs" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="rate-limits"' in api and 'id="errors"' in api


def test_guide_links_and_anchors() -> None:
    html = guide_html("# A title\n\n## Rate limits & more\n\n[x](api.md#errors) [y](../README.md) [z](docs/bots.md) "
                      "[w](https://example.org/a.md)\n\n## Rate limits & more\n", "https://k.example")
    assert '<h2 id="rate-limits--more">' in html and '<h2 id="rate-limits--more-1">' in html
    assert '<a href="https://k.example/docs/api/#errors">x</a>' in html and "y" in html and 'href="../README.md"' not in html
    assert '<a href="https://k.example/docs/bots/">z</a>' in html and 'href="https://example.org/a.md"' in html


def test_the_search_script_reads_the_static_index_of_the_same_build(real_dist: Path) -> None:
    script = next((real_dist / "assets").glob("search.*.js")).read_text(encoding="utf-8")
    assert 'fetch("/search/index.json")' in script and "/api/search?" in script
    index = orjson.loads((real_dist / "search" / "index.json").read_bytes())
    assert set(index["quality"]) >= {"exact", "stem", "prefix", "compound", "typo1", "typo2"}  # the script reads these
    from petgen.search.scoring import SCORING

    assert index["scoring"] == SCORING and all(f"scoring.{name}" in script for name in SCORING)  # one source
    stopwords = re.search(r'new Set\(\("(.*?)"\)\.split', script.replace('" +\n    "', ""), re.DOTALL)
    from petgen.search.index import STOPWORDS

    assert stopwords and set(stopwords.group(1).split()) == STOPWORDS

"""Every field of the content shows as text in every HTML context: no markup, attribute or script can
come from the content, and each page stays whole. A hostile entry, site and category, built and parsed."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from petgen.build.pipeline import build
from petgen.content.problems import ContentError
from petgen.content.text import slugify
from tests.conftest import BASE_URL, write_site

# Ends a <script> and opens a comment and a script (which would swallow the rest of the page),
# an element with a handler, and the escape from a double- or single-quoted attribute.
HOSTILE = ['</script><!--<script>', '<img src=x onerror=alert(1)>', '" onmouseover="alert(1)',
           "' onfocus='alert(1)", "&amp; &lt;b&gt; \u2028 \u2029 {{ 7 * 7 }}"]
EVIL = " ".join(HOSTILE)
TITLE = 'Hasi</script><!--<script><img src=x onerror=alert(1)>" onmouseover="x'
VOID = {"meta", "link", "br", "img", "hr", "input"}
ALLOWED_TAGS = {"html", "head", "meta", "title", "link", "script", "body", "header", "main", "article", "footer",
                "h1", "h2", "h3", "p", "a", "span", "ul", "li", "dl", "dt", "dd", "code", "em", "strong", "pre",
                "small", "section", "table", "tr", "th", "td", "details", "summary", "nav", "ol", "aside", "time", "div",
                "form", "label", "input", "button", "noscript", "thead", "tbody", "h4", "blockquote", "hr"}
SEARCH_SCRIPT = re.compile(r"/assets/search\.[0-9a-f]{12}\.js")


class Page(HTMLParser):
    """A parsed page: its elements in order, the text, and whether every element was closed in order."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.misnested: list[str] = []
        self.texts: list[tuple[str, str]] = []  # (enclosing element, text)
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open.pop() != tag:
            self.misnested.append(tag)

    def handle_data(self, data: str) -> None:
        self.texts.append((self.open[-1] if self.open else "", data))

    def text_of(self, tag: str) -> list[str]:
        return [text for element, text in self.texts if element == tag]

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.elements if name == tag]


def hostile_site(root: Path) -> Path:
    content = write_site(root, [("Apfel", "klassiker", "zaertlich")])
    site = yaml.safe_load((content / "site.yml").read_text(encoding="utf-8"))
    site.update(name=f"Kosenamen {EVIL}", description=f"Beschreibung {EVIL}")
    site["license"]["name"] = f"CC BY 4.0 {EVIL}"
    (content / "site.yml").write_text(yaml.safe_dump(site, allow_unicode=True), encoding="utf-8")
    categories = yaml.safe_load((content / "categories.yml").read_text(encoding="utf-8"))
    categories[0].update(title=f"Klassiker {EVIL}", emoji=HOSTILE[1], description=f"Klassisch {EVIL}")
    (content / "categories.yml").write_text(yaml.safe_dump(categories, allow_unicode=True), encoding="utf-8")
    front = {
        "title": TITLE, "pronunciation": f"HA-si {EVIL}", "ipa": f"ˈhaːzi {EVIL}", "meaning": f"Häschen. {EVIL}",
        "variants": [f"Hasilein {h}" for h in HOSTILE], "categories": ["klassiker"], "moods": ["zaertlich"],
        "keywords": ["bunny", *HOSTILE], "examples": [f"Na, Hasi {h}?" for h in HOSTILE[:4]],
        "related": ["apfel"],
        "faq": [{"question": f"Frage {EVIL}?", "answer": f"Antwort {EVIL}."},
                {"question": f"Noch eine {HOSTILE[0]}?", "answer": f"Ja {HOSTILE[1]}."}],
        "datePublished": "2026-01-15", "lastReviewed": "2026-11-01",
        "relationship": ["partner"], "gender": "sie", "region": ["rheinland"], "originCertainty": "unbekannt",
        "genderNote": f"Anders als Apfel {EVIL}", "caution": f"Vorsicht {EVIL}",
    }
    markdown = (f"Text {EVIL}\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
                "[Klick](javascript:alert(1)) [Klick](JaVaScRiPt:alert(1)) [Daten](data:text/html;base64,PHNjcmlwdD4=) "
                "[gut](https://example.org/\"onmouseover=x) <javascript:alert(1)>\n\n`</script>` *betont*")
    body = f"## Herkunft\n\n{markdown}\n\n## Verwendung\n\n{markdown}\n"
    text = "---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False) + "---\n\n" + body
    (content / "names" / f"{slugify(TITLE)}.md").write_text(text, encoding="utf-8")
    return content


@pytest.fixture(scope="module")
def hostile_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    build(hostile_site(root / "content"), root / "dist", base_url=BASE_URL)
    return root / "dist"


def pages(dist: Path) -> dict[str, Page]:
    return {str(path.relative_to(dist)): Page(path.read_text(encoding="utf-8")) for path in sorted(dist.rglob("*.html"))}


def test_no_page_has_markup_attributes_or_scripts_from_the_content(hostile_dist: Path) -> None:
    found = pages(hostile_dist)
    assert {"index.html", "404.html", "docs/index.html", f"names/{slugify(TITLE)}/index.html",
            "categories/klassiker/index.html"} <= set(found)
    for name, page in found.items():
        tags = {tag for tag, _ in page.elements}
        assert tags <= ALLOWED_TAGS, (name, tags - ALLOWED_TAGS)  # no <img>, no second <html>, …
        assert page.misnested == [] and page.open == [], name  # the page is whole: every element closed in order
        for tag, attrs in page.elements:
            assert not [a for a in attrs if a.startswith("on")], (name, tag, attrs)
            for link in (attrs.get("href"), attrs.get("src")):
                assert link is None or link == "" or link.startswith(("/", "#", BASE_URL + "/", "https://")), (name, link)
        # The site's search script (an asset of its own, never inline) and JSON-LD data blocks, nothing else.
        for script in page.all("script"):
            assert script == {"type": "application/ld+json"} or (
                set(script) == {"src", "defer"} and SEARCH_SCRIPT.fullmatch(script["src"] or "")), (name, script)


def test_the_entry_page_shows_every_field_as_text(hostile_dist: Path) -> None:
    page = Page((hostile_dist / "names" / slugify(TITLE) / "index.html").read_text(encoding="utf-8"))
    text = "".join(data for _, data in page.texts)
    assert page.text_of("h1") == [TITLE]
    assert page.text_of("title") == [f"{TITLE} – Bedeutung und Herkunft | Kosenamen {EVIL}"]
    assert {"name": "description", "content": f"Häschen. {EVIL}"} in page.all("meta")
    for shown in (f"Häschen. {EVIL}", f"HA-si {EVIL} · [ˈhaːzi {EVIL}]", f"Frage {EVIL}?", f"Antwort {EVIL}.",
                  ", ".join(f"Hasilein {h}" for h in HOSTILE)):
        assert shown in text
    assert [f"Na, Hasi {h}?" for h in HOSTILE[:4]] == page.text_of("li")[:4]
    # Markdown (origin, usage): raw HTML is dropped, the rest is text, dangerous link targets are emptied.
    assert text.count(""" " onmouseover="alert(1) ' onfocus='alert(1) & <b> """) == 2
    assert page.text_of("code") == ["</script>", "</script>"]
    hrefs = [a["href"] for a in page.all("a")]
    assert hrefs.count("") == 8 and "https://example.org/%22onmouseover=x" in hrefs


def test_json_ld_parses_and_holds_the_hostile_text_intact(hostile_dist: Path) -> None:
    html = (hostile_dist / "names" / slugify(TITLE) / "index.html").read_text(encoding="utf-8")
    page = Page(html)
    (script,) = page.text_of("script")
    assert not set(script) & {"<", ">", "&", "\u2028", "\u2029"}  # nothing the HTML parser could act on
    data = json.loads(script)
    assert data["name"] == TITLE and data["description"] == f"Häschen. {EVIL}"
    assert data["inDefinedTermSet"]["name"] == f"Kosenamen {EVIL}"


def test_category_and_index_pages_show_the_fields_as_text(hostile_dist: Path) -> None:
    category = Page((hostile_dist / "categories" / "klassiker" / "index.html").read_text(encoding="utf-8"))
    assert category.text_of("h1") == [f"{HOSTILE[1]} Klassiker {EVIL}"]
    assert {"name": "description", "content": f"Klassisch {EVIL}"} in category.all("meta")
    assert TITLE in category.text_of("a")
    assert category.text_of("title") == [f"{HOSTILE[1]} Klassiker {EVIL} – Kosenamen | Kosenamen {EVIL}"]
    assert f"Klassiker {EVIL}" in category.text_of("span")  # the page's own breadcrumb
    letter = Page((hostile_dist / "a-z" / "h" / "index.html").read_text(encoding="utf-8"))
    assert TITLE in letter.text_of("a") and letter.text_of("h1") == ["Kosenamen von A bis Z: H"]
    assert letter.text_of("title") == [f"Kosenamen von A bis Z: H | Kosenamen {EVIL}"]
    index = Page((hostile_dist / "index.html").read_text(encoding="utf-8"))
    assert TITLE in index.text_of("a") and f"{HOSTILE[1]} Klassiker {EVIL} " in index.text_of("a")
    assert "2 Namen" in index.text_of("small")
    assert f"Kosenamen {EVIL}" in Page((hostile_dist / "404.html").read_text(encoding="utf-8")).text_of("title")[0]


def test_a_license_url_that_is_not_http_is_refused(tmp_path: Path) -> None:
    content = write_site(tmp_path / "content")
    site = (content / "site.yml").read_text(encoding="utf-8")
    (content / "site.yml").write_text(site.replace("url: https://creativecommons.org/licenses/by/4.0/",
                                                   "url: javascript:alert(1)"), encoding="utf-8")
    with pytest.raises(ContentError) as info:
        build(content, tmp_path / "dist")
    assert any("license url 'javascript:alert(1)' is not an http(s) URL" in p.message for p in info.value.problems)

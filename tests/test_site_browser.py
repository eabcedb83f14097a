"""The human site in a real browser: Playwright driving Debian's Chromium against a real server that
serves the real knowledge base.

Search as you type (compared with the engine's own ranking), the way from the home page through a
facet page to a name and its related name, the 404 page's suggestions, the page without JavaScript,
a 320 px phone, no console errors and no serious or critical axe-core violation on every page type,
in light and dark mode.

The browser is the system's (`/usr/bin/chromium`, or PETGEN_CHROMIUM): Playwright never downloads one
here. With PETGEN_SCREENSHOTS=1 the test also saves a screenshot of every page type, desktop and
phone, under docs/screenshots/ (the README links them).
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect, sync_playwright

from petgen.build.pipeline import build
from petgen.emit.browse import PAGE_SIZE
from petgen.search.index import analyze, stems
from petgen.search.query import SearchIndex
from tests.conftest import REPO, TAXONOMY
from tests.runtime.test_server import free_port, running_server

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("PETGEN_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = REPO / "docs" / "screenshots"
PHONE_SCREENSHOTS = {"home", "category", "name", "name-with-caution", "search", "404", "docs"}

# One page of every type: (name, path).
PAGE_TYPES = [
    ("home", "/"),
    ("category", "/categories/tiere/"),
    ("category-page-2", "/categories/tiere/2/"),
    ("mood", "/moods/kuschelig/"),
    ("relationship", "/relationships/familie/"),
    ("region", "/regions/bayern-oesterreich/"),
    ("language", "/languages/englisch/"),
    ("overview", "/moods/"),
    ("a-z", "/a-z/"),
    ("a-z-letter", "/a-z/s/"),
    ("name", "/names/baerchen/"),
    ("name-with-caution", None),  # filled in from the content: the first entry with a caution
    ("search", "/search/?q=maus"),
    ("404", "/names/baerchn/"),
    ("docs", "/docs"),
    ("docs-schemas", "/docs/schemas/"),
    ("docs-guide", "/docs/getting-started/"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The real content, built for a free loopback port and served there by the runtime."""
    root = tmp_path_factory.mktemp("site")
    port = free_port()
    build(TAXONOMY, root / "dist", base_url=f"http://127.0.0.1:{port}")
    with running_server(root / "dist", port, rate_limit=0) as base:
        yield base, root / "dist"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set PETGEN_CHROMIUM)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def engine(site: tuple[str, Path]) -> SearchIndex:
    """The build's search index as the runtime loads it: the reference the page's script must agree with."""
    dist = site[1]
    manifest = orjson.loads((dist / "search" / "index.json").read_bytes())
    return SearchIndex.load(dist / manifest["engine"].lstrip("/"))


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="de-DE")
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def caution_path(dist: Path) -> str:
    for path in sorted((dist / "names").glob("*/index.html")):
        if 'class="caution"' in path.read_text(encoding="utf-8"):
            return f"/names/{path.parent.name}/"
    raise AssertionError("no entry with a caution in the content")


def page_types(dist: Path) -> list[tuple[str, str]]:
    return [(name, path or caution_path(dist)) for name, path in PAGE_TYPES]


def screenshot(page: Page, name: str, height: int) -> None:
    """With PETGEN_SCREENSHOTS set, save the top of the page (up to `height` CSS pixels) in docs/screenshots/."""
    if not os.environ.get("PETGEN_SCREENSHOTS"):
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"] if page.viewport_size else 1280
    shown = min(height, page.evaluate("document.documentElement.scrollHeight"))
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True,
                    clip={"x": 0, "y": 0, "width": width, "height": shown})


def suggestions(page: Page, input_id: str, query: str) -> list[str]:
    """Type a query into a search box; return the titles the listbox offers."""
    page.locator(f"#{input_id}").fill(query)
    listbox = page.locator(f'#{input_id}-list[data-query="{query}"]')  # the answer to this query, not the last
    expect(listbox).to_be_visible()
    return listbox.locator("[role=option] strong").all_inner_texts()


# Whole words with and without umlauts, in any case, prefixes as typed, compound parts, typos; five prefixes,
# whose completions the query's cap cuts short (25 each, not 32: the list differs from the uncapped one).
QUERIES = ["bärchen", "Baerchen", "BÄRCHEN", "bärch", "spatz", "schatzi", "maus", "zuckerm", "hasi", "schnukci",
           "Schnuckiputz", "engelchen", "kuschelbaer", "Mäuschen", "ma ha ku sp en"]


def test_search_as_you_type_ranks_as_the_engine_does(site: tuple[str, Path], page: Page, engine: SearchIndex) -> None:
    """The script does what the engine does but stemming: where no query word has a stem other than
    itself, it shows the engine's very list; otherwise at least the same best match."""
    base, _ = site
    page.goto(base + "/")
    compared = 0
    for query in QUERIES:
        shown = suggestions(page, "q-home", query)
        expected = [hit.title for hit in engine.top(query, 8)[0]]
        if all(stems(word) == (word,) for word in analyze(query)):
            assert shown == expected, query
            compared += 1
        else:
            assert shown[0] == expected[0], query
    assert compared >= 8


def test_the_search_box_works_with_the_keyboard(site: tuple[str, Path], page: Page, engine: SearchIndex) -> None:
    base, _ = site
    page.goto(base + "/names/baerchen/")
    box = page.locator("#q-top")
    box.focus()
    page.keyboard.type("spatz", delay=30)
    expect(page.locator('#q-top-list[data-query="spatz"]')).to_be_visible()
    assert box.get_attribute("aria-expanded") == "true"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    second = engine.top("spatz", 8)[0][1]
    assert box.get_attribute("aria-activedescendant") == "q-top-list-1"
    assert page.locator("#q-top-list-1").get_attribute("aria-selected") == "true"
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/names/{second.slug}/")
    assert page.locator("h1").inner_text() == second.title
    page.locator("#q-top").focus()
    page.keyboard.type("hasi")
    expect(page.locator('#q-top-list[data-query="hasi"]')).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#q-top-list")).to_be_hidden()
    page.keyboard.press("Enter")  # no option chosen: the form goes to the search page
    page.wait_for_url("**/search/?q=hasi")
    expect(page.locator("#results .card").first).to_be_visible()


@pytest.fixture(scope="module")
def static_only(site: tuple[str, Path]) -> Iterator[str]:
    """The same dist served as plain files (Python's http.server), as a CDN without the runtime serves it."""
    handler = functools.partial(QuietFiles, directory=str(site[1]))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_the_search_needs_no_runtime(static_only: str, page: Page, engine: SearchIndex) -> None:
    page.goto(static_only + "/")
    expected = [hit.title for hit in engine.top("spatz", 8)[0]]
    assert suggestions(page, "q-home", "spatz") == expected
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")  # the link stays on the host that served the page
    page.wait_for_url(f"{static_only}/names/{engine.top('spatz', 1)[0][0].slug}/")
    page.goto(static_only + "/search/?q=zuckerm")
    expect(page.locator("#results .card").first).to_be_visible()
    assert page.locator("#results .card h3").all_inner_texts() == [h.title for h in engine.top("zuckerm", 50)[0]]


def test_the_search_page_lists_every_match(site: tuple[str, Path], page: Page, engine: SearchIndex) -> None:
    base, _ = site
    page.goto(base + "/search/?q=maus")
    expect(page.locator("#results h2")).to_have_text(re.compile(r"^\d+ Treffer für „maus“$"))
    hits, total = engine.top("maus", 50)
    assert page.locator("#results h2").inner_text().startswith(f"{total} Treffer")
    assert page.locator("#results .card h3").all_inner_texts() == [hit.title for hit in hits]
    assert page.locator("#q-page").input_value() == "maus"


def test_home_to_facet_page_to_name_to_related_name(site: tuple[str, Path], page: Page) -> None:
    base, _ = site
    page.goto(base + "/")
    page.get_by_role("link", name=re.compile("Tiere")).first.click()
    page.wait_for_url("**/categories/tiere/")
    assert "Tiere" in page.locator("h1").inner_text()
    count = int(re.search(r"(\d+) Kosenamen", page.locator("main").inner_text()).group(1))  # type: ignore[union-attr]
    assert count > PAGE_SIZE and page.locator(".card").count() == PAGE_SIZE  # paginated
    page.get_by_role("navigation", name="Seiten").get_by_role("link", name="2").click()
    page.wait_for_url("**/categories/tiere/2/")
    assert page.locator(".card").count() == min(PAGE_SIZE, count - PAGE_SIZE)
    card = page.locator(".card h3 a").first
    title = card.inner_text()
    card.click()
    page.wait_for_url("**/names/*/")
    assert page.locator("h1").inner_text() == title
    related = page.locator("ul.related a").first
    related_title = related.inner_text()
    related.click()
    page.wait_for_url("**/names/*/")
    assert page.locator("h1").inner_text() == related_title
    mood = page.locator("dl.facets dt:text('Stimmung') + dd a").first  # facet pills lead to their pages
    mood_title = mood.inner_text()
    mood.click()
    page.wait_for_url("**/moods/*/")
    assert page.locator("h1").inner_text() == mood_title
    assert page.get_by_role("link", name=related_title, exact=True).count() + 1  # the page lists names as cards


def test_the_404_page_suggests_names_near_the_path(site: tuple[str, Path], page: Page, engine: SearchIndex) -> None:
    base, _ = site
    for path, guess in [("/names/baerchn/", "baerchn"), ("/kosenamen/schatzii", "schatzii"), ("/names/spatzl-x/", "spatzl x")]:
        response = page.goto(base + path)
        assert response is not None and response.status == 404
        expect(page.locator("#suggestions .card").first).to_be_visible()
        expected = [hit.title for hit in engine.top(guess, 5)[0]]
        assert page.locator("#suggestions .card h3").all_inner_texts() == expected, path
        assert page.locator("#q-404").input_value() == guess


def test_without_javascript_the_form_still_leads_somewhere(site: tuple[str, Path], browser: Browser) -> None:
    base, _ = site
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(base + "/")
    page.locator("#q-home").fill("bärchen")
    page.locator("#q-home").press("Enter")
    page.wait_for_url("**/search/?q=b%C3%A4rchen")
    page.get_by_role("link", name="Verzeichnis von A bis Z").click()
    page.wait_for_url("**/a-z/")
    page.get_by_role("link", name=re.compile(r"^B")).first.click()
    expect(page.get_by_role("link", name="Bärchen", exact=True)).to_be_visible()
    context.close()


def test_every_page_type_fits_a_phone(site: tuple[str, Path], browser: Browser) -> None:
    base, dist = site
    context = browser.new_context(viewport={"width": 320, "height": 640}, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    for name, path in page_types(dist):
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 320, (name, width)
        if name in PHONE_SCREENSHOTS:
            screenshot(page, f"{name}-phone", 1280)
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_console_errors_and_no_serious_accessibility_violations(site: tuple[str, Path], browser: Browser,
                                                                   scheme: str) -> None:
    base, dist = site
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    errors: list[str] = []

    def console(message: Any) -> None:
        # Chromium logs a page's own 404 status as a failed resource: that is the 404 page doing its job.
        own_status = message.location.get("url") == page.url and "status of 404" in message.text
        if message.type == "error" and not (own_status and page.url.endswith("/names/baerchn/")):
            errors.append(f"{page.url}: {message.text} ({message.location.get('url')})")

    page.on("console", console)
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    axe = Axe()
    found: dict[str, list[dict[str, Any]]] = {}
    for name, path in page_types(dist):
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        if name == "home":  # the listbox open, too
            page.locator("#q-home").fill("bär")
            expect(page.locator("#q-home-list [role=option]").first).to_be_visible()
        violations = axe.run(page).response["violations"]
        serious = [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:3]}
                   for v in violations if v["impact"] in ("serious", "critical")]
        if serious:
            found[name] = serious
        if scheme == "light":
            screenshot(page, name, 1400)
    context.close()
    assert found == {}
    assert errors == []

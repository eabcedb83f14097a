"""An entry's page, rendered from precompiled pieces: the frame (templates/name.html inside base.html)
is rendered once per build with a marker in place of each of the entry's values and split there; each
page joins those pieces with its escaped values and its article, written here with plain string
formatting (as the cards of petgen/emit/browse.py are). Escaping is Jinja's autoescaping, to the byte.
"""

from __future__ import annotations

import contextlib
import pickle
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from petgen.build.files import read_file, write_atomic
from petgen.content.model import Entry, Site
from petgen.emit.templating import esc, german_date

if TYPE_CHECKING:
    from jinja2 import Template

_MARK = "\ue000"  # a private-use character around each value's name in the rendered frame
_FRAME_VALUES = ("slug", "title", "meaning", "url", "jsonld", "main")


class Frame:
    """The page around an entry's article, as pieces between the entry's values (or, made with `of`, any page
    around the values it is filled with)."""

    def __init__(self, template: Template, site: Site) -> None:
        marks = {name: f"{_MARK}{name}{_MARK}" for name in _FRAME_VALUES}
        self.split(template.render(site=site, entry=SimpleNamespace(**marks), canonical=marks["url"],
                                   jsonld=marks["jsonld"], main=Markup(marks["main"])))

    @classmethod
    def of(cls, template: Template, names: tuple[str, ...], **context: Any) -> Frame:
        """Any page's frame: `template` rendered with `context` and a marker for each of `names` (each a
        value of the template, written into it as is)."""
        frame = cls.__new__(cls)
        frame.split(template.render(**context, **{name: Markup(f"{_MARK}{name}{_MARK}") for name in names}))
        return frame

    def split(self, html: str) -> None:
        parts = re.split(f"{_MARK}(\\w+){_MARK}", html)
        # Encoded once: a page is joined from bytes, and only its own values are encoded (a page's text, once
        # it holds one character outside Latin-1, is two or four bytes a character, and slow to encode).
        self.pieces, self.names = [part.encode() for part in parts[0::2]], parts[1::2]

    def fill(self, values: dict[str, bytes]) -> bytes:
        """The page with `values` (encoded, and escaped already where they must be) in place of the markers."""
        out = [self.pieces[0]]
        for name, piece in zip(self.names, self.pieces[1:]):
            out.append(values[name])
            out.append(piece)
        return b"".join(out)


def kept_frame(root: Path | None, context: str, name: str, make: Callable[[], Frame]) -> Frame:
    """The frame `make` renders (Jinja imported, its templates loaded), kept in the build cache at `root` for
    `context` (`PageRenderer.context_key`: site, templates, code, Jinja's version): a rebuild after an edit fills
    the pages it writes without Jinja. No cache or no context: made each time."""
    if root is None or not context:
        return make()
    path = root / f"{name}.frame"
    try:
        stored, frame = pickle.loads(read_file(path))
    except Exception:  # noqa: BLE001 - missing, damaged or of another version: made again
        stored, frame = None, None
    if stored == context and isinstance(frame, Frame):
        return frame
    frame = make()
    with contextlib.suppress(OSError):
        write_atomic(path, pickle.dumps((context, frame), protocol=pickle.HIGHEST_PROTOCOL))
    return frame


def _links(pills: list[dict[str, Any]]) -> str:
    return "".join(f'<li><a href="{esc(p["url"])}">{esc(p["label"])}</a></li>' for p in pills)


def crumb(label: str, href: str | None) -> str:
    return f'<li><a href="{esc(href)}">{esc(label)}</a></li>' if href else f'<li><span aria-current="page">{esc(label)}</span></li>'


FacetParts = tuple[tuple[str, str], str, str, str, str, str]


def facet_parts(pills: dict[str, list[dict[str, Any]]], certainty: list[Any]) -> FacetParts:
    """The parts of an entry's page made of its categories (the first one's breadcrumb, the list), moods,
    relationships and gender, regions, language and origin certainty, in that order: each the same for
    every entry with the same values, so that `PageRenderer` keeps them by those values."""
    who = "".join(f'<li><a href="{esc(p["url"])}">{esc(p["label"])}</a></li>' if p["url"] else
                  f'<li><span>{esc(p["label"])}</span></li>' for p in pills["relationship"] + pills["gender"])
    certain = "".join(f'<p class="certainty">Herkunft: {esc(str(f.title).lower())} – {esc(str(f.description))}</p>'
                      for f in certainty)
    first = "".join(crumb(p["label"], p["url"]) for p in pills["categories"][:1])
    return ((first, _links(pills["categories"])), _links(pills["moods"]), who, _links(pills["region"]),
            _links(pills["language"]), certain)


def article(entry: Entry, site: Site, *, parts: FacetParts, related: list[dict[str, str]], origin_html: str,
            usage_html: str) -> str:
    """The page's `main`: breadcrumbs (the `crumbs` macro of _macros.html: the start page, the first category,
    the entry) and the article; `parts`: `facet_parts` of the entry's values."""
    base = esc(site.base_url)
    (first, categories), moods, who, regions, language, certain = parts
    crumbs = f"{crumb('Start', site.base_url + '/')}{first}{crumb(entry.title, None)}"
    caution = (f'<aside class="caution" aria-label="Vorsicht"><strong>⚠️ Kann verletzen</strong> {esc(entry.caution)}'
               '</aside>' if entry.caution else "")
    note = f'<p class="note">{esc(entry.genderNote)}</p>' if entry.genderNote else ""
    variants = (f'<h2>Varianten</h2><p>{", ".join(esc(v) for v in entry.variants)}</p>' if entry.variants else "")
    linked = ('<h2>Verwandte Kosenamen</h2><ul class="tags related">' + "".join(
        f'<li><a href="{base}/names/{esc(r["slug"])}/">{esc(r["title"])}</a></li>' for r in related) + "</ul>"
        if related else "")
    slug = esc(entry.slug)
    examples = "".join(f"<li>{esc(x)}</li>" for x in entry.examples)
    faq = "".join(f"<dt>{esc(item['question'])}</dt><dd>{esc(item['answer'])}</dd>" for item in entry.faq)
    return (
        f'<nav class="crumbs" aria-label="Brotkrümelnavigation"><ol>{crumbs}</ol></nav>\n'
        "<article>\n"
        f"  <h1>{esc(entry.title)}</h1>\n"
        f'  <p class="pron">{esc(entry.pronunciation)} · [{esc(entry.ipa)}]</p>\n'
        f'  <p class="lead">{esc(entry.meaning)}</p>\n'
        f"  {caution}\n"
        '  <dl class="facets">\n'
        f'    <dt>Themen</dt><dd><ul class="tags">{categories}</ul></dd>\n'
        f'    <dt>Stimmung</dt><dd><ul class="tags">{moods}</ul></dd>\n'
        f'    <dt>Für wen</dt><dd><ul class="tags">{who}</ul></dd>\n'
        f'    <dt>Region</dt><dd><ul class="tags">{regions}</ul></dd>\n'
        f'    <dt>Sprache</dt><dd><ul class="tags">{language}</ul></dd>\n'
        "  </dl>\n"
        f"  {note}\n"
        "  <h2>Herkunft</h2>\n"
        f"  {certain}\n"
        f"  {origin_html}\n"
        "  <h2>Verwendung</h2>\n"
        f"  {usage_html}\n"
        "  <h2>Beispiele</h2>\n"
        f'  <ul class="examples">{examples}</ul>\n'
        f"  {variants}\n"
        f"  {linked}\n"
        "  <h2>Häufige Fragen</h2>\n"
        f'  <dl class="faq">{faq}</dl>\n'
        f'  <p class="pron">Veröffentlicht am <time datetime="{esc(entry.datePublished)}">'
        f"{esc(german_date(entry.datePublished))}</time> · zuletzt geprüft am "
        f'<time datetime="{esc(entry.lastReviewed)}">{esc(german_date(entry.lastReviewed))}</time></p>\n'
        f'  <p class="devlinks">Für Entwickler: <a href="{base}/api/names/{slug}">dieser Eintrag als JSON</a> · '
        f'<a href="{base}/docs">API-Dokumentation</a></p>\n'
        "</article>"
    )

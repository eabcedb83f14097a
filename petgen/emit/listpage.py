"""List pages and A–Z pages, rendered from a precompiled frame: templates/list.html inside base.html is
rendered once per build with a marker in place of each value (title, description, head, API link, canonical
URL, main) and split there (`namepage.Frame`); each page joins those pieces with its values, written here
with plain string formatting, escaped as Jinja's autoescaping escapes (`esc`), to the byte. The cards come
from petgen/emit/browse.py, rendered once per entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from petgen.content.model import Entry, Site
from petgen.emit.namepage import Frame, crumb, kept_frame
from petgen.emit.templating import environment, esc

FRAME_VALUES = ("title", "description", "head", "api", "main", "canonical")
AZ_API = "/api/names"  # the JSON an A–Z page links to
CARDS, CARDS_END = b'<ul class="cards">', b"</ul>"
NO_CARDS = "<p>Noch keine Einträge.</p>".encode()
CURRENT = ' aria-current="page"'


def frame(site: Site, root: Path | None = None, context: str = "") -> Frame:
    """The frame of every list and A–Z page of `site` (kept in the build cache at `root` for `context`)."""
    return kept_frame(root, context, "list", lambda: Frame.of(environment(site).get_template("list.html"),
                                                              FRAME_VALUES, site=site))


def pager(pagination: dict[str, Any]) -> str:
    """The links to the other pages of a list (`browse.pagination`); nothing for a list of one page."""
    if pagination["count"] <= 1:
        return ""
    prev, next_, current = pagination["prev"], pagination["next"], pagination["number"]
    links = "".join(
        '<li><span class="gap">…</span></li>' if number is None else
        f'<li><span aria-current="page">{number}</span></li>' if number == current else
        f'<li><a href="{esc(href)}">{number}</a></li>' for number, href in pagination["links"])
    return ('<nav aria-label="Seiten"><ol class="pages">\n'
            + (f'<li><a href="{esc(prev)}" rel="prev">‹ zurück</a></li>' if prev else "") + "\n"
            + links + "\n"
            + (f'<li><a href="{esc(next_)}" rel="next">weiter ›</a></li>' if next_ else "") + "\n</ol></nav>")


def crumbs(items: list[tuple[str, str | None]]) -> str:
    return ('<nav class="crumbs" aria-label="Brotkrümelnavigation"><ol>'
            + "".join(crumb(label, href) for label, href in items) + "</ol></nav>")


def list_page(frame: Frame, site: Site, *, label: str, title: str, description: str, kind_title: str,
              overview: str, api: str, total: int, moods: list[dict[str, str]], pagination: dict[str, Any],
              size: int, canonical: str, cards: Iterable[bytes], jsonld: bytes) -> bytes:
    """One page of a list (a category, mood or facet value) of `total` names, showing `cards` (encoded, as
    `jsonld`: 48 cards are most of a page, joined as they are)."""
    number, count = pagination["number"], pagination["count"]
    prev, next_ = pagination["prev"], pagination["next"]
    head = ((f'<link rel="prev" href="{esc(prev)}">\n' if prev else "")
            + (f'<link rel="next" href="{esc(next_)}">\n' if next_ else "")
            + '<script type="application/ld+json">').encode() + jsonld + b"</script>"
    mood_links = ('<p class="muted">Typische Stimmungen:</p><ul class="tags">' + "".join(
        f'<li><a href="{esc(m["url"])}">{esc(m["label"])}</a></li>' for m in moods) + "</ul>" if moods else "")
    shown = f"Namen {(number - 1) * size + 1}–{min(number * size, total)}" if count > 1 else "Alle Namen"
    intro = (f"\n{crumbs([('Start', site.base_url + '/'), (kind_title, overview), (title, None)])}\n"
             f"<h1>{esc(label)}</h1>\n"
             f'<p class="lead">{esc(description)}</p>\n'
             f"<p>{total} {'Kosename' if total == 1 else 'Kosenamen'}"
             f"{f' · Seite {number} von {count}' if count > 1 else ''}</p>\n"
             f"{mood_links}\n"
             f"<h2>{shown}</h2>\n").encode()
    end = f"\n{pager(pagination)}\n".encode()
    main = b"".join([intro, CARDS, *cards, CARDS_END, end] if total else [intro, NO_CARDS, end])
    return frame.fill({
        "title": f"{esc(label)} – Kosenamen{f' (Seite {number})' if number > 1 else ''} | {esc(site.name)}".encode(),
        "description": esc(description).encode(), "head": head, "api": esc(api).encode(),
        "canonical": esc(canonical).encode(), "main": main})


def letter_links(letters: list[tuple[str, str, int]]) -> dict[str | None, str]:
    """The A–Z navigation of each page (`letters`: letter, URL, count), by the letter it shows (None: /a-z/)."""
    def nav(current: str | None) -> str:
        return '<nav aria-label="Buchstaben"><ul class="tags">' + "".join(
            f'<li><a href="{esc(url)}"{CURRENT if letter == current else ""}>{esc(letter.upper())} '
            f"<small>({count})</small></a></li>" for letter, url, count in letters) + "</ul></nav>"
    return {current: nav(current) for current in [None, *(letter for letter, _, _ in letters)]}


def az_page(frame: Frame, site: Site, *, letter: str | None, nav: str, letter_total: int, names: list[Entry],
            pagination: dict[str, Any], canonical: str, total: int) -> bytes:
    """/a-z/ (`letter` None: the letters only) or a page of /a-z/{letter}/ showing `names` as links; `nav`:
    `letter_links` of the letter, `letter_total` its number of names."""
    base = site.base_url
    upper = esc(letter.upper()) if letter else ""
    items: list[tuple[str, str | None]] = [("Start", base + "/"), ("A–Z", base + "/a-z/" if letter else None)]
    if letter:
        items.append((letter.upper(), None))
        links = "".join(f'<li><a href="{esc(base)}/names/{esc(e.slug)}/">{esc(e.title)}</a></li>' for e in names)
        body = (f"<h2>{len(names)} von {letter_total} Namen mit {upper}</h2>\n"
                f'<ul class="az">{links}</ul>\n{pager(pagination)}')
    else:
        body = (f"<p>{total} Kosenamen, alphabetisch nach deutscher Sortierung (Umlaute wie ihre Grundbuchstaben). "
                "Wähle einen Buchstaben.</p>")
    heading = f"Kosenamen von A bis Z{f': {upper}' if letter else ''}"
    number = pagination["number"]
    return frame.fill({
        "title": f"{heading}{f' (Seite {number})' if number > 1 else ''} | {esc(site.name)}".encode(),
        "description": f"Alle {total} Kosenamen alphabetisch{f', Buchstabe {upper}' if letter else ''}.".encode(),
        "head": b"", "api": AZ_API.encode(), "canonical": esc(canonical).encode(),
        "main": f"\n{crumbs(items)}\n<h1>{heading}</h1>\n{nav}\n{body}\n".encode()})

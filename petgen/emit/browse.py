"""The browsable taxonomy of the site: a page for every category, mood, relationship, region and
language (names as cards, paginated), an overview page per kind, and the A–Z index.

`Browse` knows every list's URL and members; the entry pages use it for their facet pills and the
home page for its entry points. A card is rendered once per entry (plain string formatting, not a
template) and joined into every list it belongs to, so 10,000 entries cost 10,000 cards, not one per
list membership.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property, partial
from itertools import repeat
from operator import attrgetter
from typing import Any

import orjson

from petgen.build.cache import EntryMemo
from petgen.build.dist import HTML, DistWriter, unit_key
from petgen.content.kb import KnowledgeBase
from petgen.content.model import FILTER_FACETS, Entry, Site
from petgen.content.text import initial as title_initial
from petgen.contract.resources import entry_url, list_route
from petgen.emit import listpage
from petgen.emit.listindex import ListIndex
from petgen.emit.templating import environment, esc, script_json_bytes

SLUG = attrgetter("slug")
PAGE_SIZE = 48  # cards per list page: about 20 KB of HTML, 40 KB with the stylesheet and script
AZ_PAGE_SIZE = 200  # names per A–Z page (title links only): under 40 KB with the stylesheet and script
LIST_INDEX = "lists.index"  # the last build's lists, in the build cache (`ListIndex`)


@dataclass(frozen=True)
class Kind:
    """One kind of list: where its pages live and what the site calls it."""

    name: str  # "category", "mood" or a facet name (the /api/names filter)
    segment: str  # path segment of its pages
    title: str  # heading of its overview page
    intro: str  # one sentence on the overview page


KINDS = (
    Kind("category", "categories", "Themen", "Kosenamen nach Themen: von Tieren über Süßes bis zu Märchenfiguren."),
    Kind("mood", "moods", "Stimmungen", "Wie ein Kosename klingt: zärtlich, frech, romantisch oder nostalgisch."),
    Kind("relationship", "relationships", "Für wen", "Kosenamen für Partnerin und Partner, Kinder, Freunde und die Familie."),
    Kind("region", "regions", "Regionen", "Kosenamen aus den Mundarten: von Bayern bis an die Nordsee."),
    Kind("language", "languages", "Sprachen", "Kosenamen, die das Deutsche aus anderen Sprachen übernommen hat."),
)
KIND = {k.name: k for k in KINDS}


@dataclass
class ListPage:
    """One value of one kind: a category, a mood or a facet value, with its entries."""

    kind: Kind
    slug: str
    title: str
    description: str
    entries: list[Entry]
    emoji: str = ""
    moods: tuple[str, ...] = ()  # a category's typical moods

    @property
    def label(self) -> str:
        return f"{self.emoji} {self.title}" if self.emoji else self.title


class Browse:
    """Every list of the site and the URLs between them."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.base = kb.site.base_url
        # Facet values that an alias category stands for link to that category (`gender=sie` → Für sie).
        self.alias_of = {facet: slug for slug, facet in kb.aliases.items()}
        # The lookups of `pills`, made here: the page workers, forked later, use them read-only.
        self.categories = {c.slug: c for c in kb.categories}
        self.moods = {m.slug: m for m in kb.moods}
        self.titles = {f: {v.slug: v.title for v in values} for f, values in kb.facets.values.items()}
        self.index: ListIndex | None = None  # the last build's lists, to patch (`use_index`)
        self._made: dict[str, tuple[bytes, str]] = {}  # cards rendered on demand while patching

    def __getstate__(self) -> dict:
        """Pickled for the page workers: the lookups of `pills` only (not the knowledge base, not the lists)."""
        return {key: getattr(self, key) for key in ("base", "alias_of", "categories", "moods", "titles")}

    def url(self, kind: str, slug: str) -> str:
        return f"{self.base}/{KIND[kind].segment}/{slug}/"

    def overview_url(self, kind: str) -> str:
        return f"{self.base}/{KIND[kind].segment}/"

    def use_index(self, context: str) -> None:
        """Patch the lists (and keep the list pages' keys) from the last build's, if it was made in `context` and
        few entries changed since (petgen/emit/listindex.py); else group them in full and keep them for the next."""
        kb = self.kb
        if self.index is None and kb.cache_root is not None and context and "lists" not in self.__dict__:
            self.index = ListIndex(kb.cache_root / LIST_INDEX, context,
                                   list(map(kb.keys.get, map(SLUG, kb.entries), repeat(""))))

    @property
    def patching(self) -> bool:
        return self.index is not None and self.index.patched

    def member_of(self, entry: Entry) -> Iterator[str]:
        """The lists `entry` is in (named as in the index: `kind:slug`, `a-z:letter`), as `lists` and `by_letter`
        group them."""
        yield from (f"category:{c.slug}" for c in self.kb.categories if c.has(entry))
        yield from (f"mood:{m}" for m in entry.moods)
        for facet in ("relationship", "region", "language"):
            value = getattr(entry, facet)
            yield from (f"{facet}:{v}" for v in (value if isinstance(value, list) else [value]))
        yield f"a-z:{initial(entry)}"

    @cached_property
    def lists(self) -> dict[str, list[ListPage]]:
        """Every list by kind, in the editors' order, each with its entries in list (A–Z) order."""
        kb, index = self.kb, self.index
        if index is not None and index.patched:
            entries = kb.entries
            members = index.patch(lambda i: self.member_of(entries[i]))
            lists = self._shells()
            for kind, pages in lists.items():
                for page in pages:
                    page.entries = list(map(entries.__getitem__, members[f"{kind}:{page.slug}"]))
            return lists
        lists = self._grouped()
        if index is not None:
            position = self.positions
            for kind, pages in lists.items():
                for page in pages:
                    index.record(f"{kind}:{page.slug}", list(map(position.__getitem__, map(SLUG, page.entries))))
        return lists

    @cached_property
    def positions(self) -> dict[str, int]:
        """Each entry's position in list order, by slug."""
        return {e.slug: i for i, e in enumerate(self.kb.entries)}

    def _shells(self) -> dict[str, list[ListPage]]:
        """Every list by kind, without its entries."""
        kb = self.kb
        lists = {"category": [ListPage(KIND["category"], c.slug, c.title, c.description, [], c.emoji, tuple(c.moods))
                              for c in kb.categories],
                 "mood": [ListPage(KIND["mood"], m.slug, m.title, m.description, []) for m in kb.moods]}
        for facet in ("relationship", "region", "language"):
            lists[facet] = [ListPage(KIND[facet], v.slug, v.title, v.description, [])
                            for v in kb.facets.values.get(facet, [])]
        return lists

    def _grouped(self) -> dict[str, list[ListPage]]:
        """`lists`, every entry grouped."""
        kb = self.kb
        lists: dict[str, list[ListPage]] = {"category": [
            ListPage(KIND["category"], c.slug, c.title, c.description, kb.in_category(c.slug), c.emoji, tuple(c.moods))
            for c in kb.categories]}
        by_mood: dict[str, list[Entry]] = {m.slug: [] for m in kb.moods}
        by_facet: dict[str, dict[str, list[Entry]]] = {f: {v.slug: [] for v in kb.facets.values.get(f, [])}
                                                       for f in FILTER_FACETS}
        for entry in kb.entries:
            for mood in entry.moods:
                by_mood.setdefault(mood, []).append(entry)
            for facet, groups in by_facet.items():
                value = getattr(entry, facet)
                for v in value if isinstance(value, list) else [value]:
                    if v in groups:
                        groups[v].append(entry)
        lists["mood"] = [ListPage(KIND["mood"], m.slug, m.title, m.description, by_mood[m.slug]) for m in kb.moods]
        for facet in ("relationship", "region", "language"):
            lists[facet] = [ListPage(KIND[facet], v.slug, v.title, v.description, by_facet[facet][v.slug])
                            for v in kb.facets.values.get(facet, [])]
        return lists

    def pills(self, entry: Entry) -> dict[str, list[dict[str, str | None]]]:
        """The entry's categories, moods and facet values as links to their pages (gender: its alias category)."""
        categories, moods, titles = self.categories, self.moods, self.titles
        pills: dict[str, list[dict[str, str | None]]] = {
            "categories": [{"label": f"{categories[c].emoji} {categories[c].title}", "url": self.url("category", c)}
                           for c in entry.categories if c in categories],
            "moods": [{"label": moods[m].title, "url": self.url("mood", m)} for m in entry.moods if m in moods],
        }
        for facet in FILTER_FACETS:
            value = getattr(entry, facet)
            pills[facet] = []
            for v in value if isinstance(value, list) else [value]:
                if v not in titles.get(facet, {}):
                    continue
                alias = self.alias_of.get((facet, v))
                if facet in KIND:
                    url: str | None = self.url(facet, v)
                else:
                    url = self.url("category", alias) if alias else None
                pills[facet].append({"label": titles[facet][v], "url": url})
        return pills

    @property
    def mood_titles(self) -> dict[str, str]:
        return {slug: mood.title for slug, mood in self.moods.items()}

    @cached_property
    def _cards(self) -> list[tuple[bytes, str]]:
        """Each entry's card (title, meaning, moods), encoded, and its digest, in list order, rendered once and kept in
        the build cache by the entry's file."""
        moods, entries = self.mood_titles, self.kb.entries
        memo = EntryMemo(self.kb.cache_root, "cards", unit_key(self.base, *(f"{k}={v}" for k, v in moods.items())))
        keyed = self.kb.cache_root is not None  # else no list page's key is made (`emit_lists`)
        found = memo.get_all([self.kb.keys.get(e.slug) for e in entries],
                             lambda i: self._card(entries[i], moods, keyed))
        memo.save()
        return found

    def _card(self, e: Entry, moods: dict[str, str], keyed: bool = True) -> tuple[bytes, str]:
        mood_text = " · ".join(moods.get(m, m) for m in e.moods)
        html = (f'<li class="card"><h3><a href="{self.base}/names/{e.slug}/">{esc(e.title)}</a></h3>'
                f'<p>{esc(e.meaning)}</p><p class="moods">{esc(mood_text)}</p></li>').encode()
        return html, hashlib.blake2b(html, digest_size=12).hexdigest() if keyed else ""

    def _made_card(self, entry: Entry) -> tuple[bytes, str]:
        """An entry's card and digest while patching: rendered when a page that is keyed or rendered shows it (the
        cards of all entries are not looked up)."""
        made = self._made.get(entry.slug)
        if made is None:
            made = self._made[entry.slug] = self._card(entry, self.mood_titles)
        return made

    def cards_of(self, entries: list[Entry]) -> Iterator[bytes]:
        """The cards of `entries`, encoded (`cards`, or made on demand while patching)."""
        if self.patching:
            return (self._made_card(e)[0] for e in entries)
        return map(self.cards.__getitem__, map(SLUG, entries))

    def digests_of(self, entries: list[Entry]) -> Iterator[str]:
        """The digests of the cards of `entries` (`card_digests`, or made on demand while patching)."""
        if self.patching:
            return (self._made_card(e)[1] for e in entries)
        return map(self.card_digests.__getitem__, map(SLUG, entries))

    @cached_property
    def cards(self) -> dict[str, bytes]:
        """Each entry's card (title, meaning, moods), rendered once, encoded."""
        return {e.slug: card for e, (card, _) in zip(self.kb.entries, self._cards)}

    @cached_property
    def card_digests(self) -> dict[str, str]:
        """A digest of each entry's card: what keys the list pages that show it."""
        return {e.slug: digest for e, (_, digest) in zip(self.kb.entries, self._cards)}

    @cached_property
    def by_letter(self) -> dict[str, list[Entry]]:
        """The entries by A–Z letter (`initial`), letters in order."""
        index, entries = self.index, self.kb.entries
        if index is not None and index.patched:
            self.lists  # noqa: B018 - patches the letters with the lists
            return {name[4:]: list(map(entries.__getitem__, positions))
                    for name, positions in sorted(index.members.items()) if name.startswith("a-z:") and positions}
        groups: dict[str, list[Entry]] = {}
        for entry in entries:
            groups.setdefault(initial(entry), []).append(entry)
        groups = dict(sorted(groups.items()))
        if index is not None:
            for letter, members in groups.items():
                index.record(f"a-z:{letter}", list(map(self.positions.__getitem__, map(SLUG, members))))
        return groups

    @property
    def letters(self) -> list[tuple[str, str, int]]:
        """(letter, URL of its page, number of names) for every letter that has names."""
        return [(letter, f"{self.base}/a-z/{letter_slug(letter)}/", len(entries))
                for letter, entries in self.by_letter.items()]

    def tiles(self, kind: str) -> list[dict[str, Any]]:
        """The lists of one kind as tiles (label, count, url); empty lists left out."""
        return [{"slug": page.slug, "label": page.label, "count": len(page.entries), "url": self.url(kind, page.slug)}
                for page in self.lists[kind] if page.entries]


def pagination(url: str, total: int, size: int, number: int) -> dict[str, Any]:
    """Page `number` of a list of `total` items at `url` (page 1) and `url` + `n/` (page n); the links to show:
    the first and last page and two on either side of this one, `(None, "")` for a gap."""
    count = max(1, -(-total // size))
    shown = sorted({1, count, *range(max(1, number - 2), min(count, number + 2) + 1)})
    links: list[tuple[int | None, str]] = []
    for previous, n in zip([0, *shown], shown):
        if n > previous + 1:
            links.append((None, ""))  # a gap: "…"
        links.append((n, url if n == 1 else f"{url}{n}/"))
    return {"number": number, "count": count, "links": links,
            "prev": (url if number == 2 else f"{url}{number - 1}/") if number > 1 else None,
            "next": f"{url}{number + 1}/" if number < count else None}


def term_set(name: str, description: str, url: str, terms: list[orjson.Fragment], site: Site) -> bytes:
    """JSON-LD for a list page, encoded: a DefinedTermSet with the names it shows (`defined_term` of each)."""
    return script_json_bytes({
        "@context": "https://schema.org", "@type": "DefinedTermSet", "name": name, "description": description,
        "url": url, "inLanguage": site.language, "hasDefinedTerm": terms,
    })


def defined_term(entry: Entry, site: Site) -> orjson.Fragment:
    """An entry as a DefinedTerm of `term_set`, encoded (once: it is in several lists)."""
    return orjson.Fragment(orjson.dumps({"@type": "DefinedTerm", "name": entry.title,
                                         "url": entry_url(site, entry.slug)}))


class Terms(dict[str, orjson.Fragment]):
    """Each shown entry's `defined_term`, by slug, made the first time it is looked up (each entry is in several
    lists; a lookup that finds it calls no Python function)."""

    def __init__(self, site: Site, entries: dict[str, Entry]) -> None:
        super().__init__()
        self.site, self.entries = site, entries

    def __missing__(self, slug: str) -> orjson.Fragment:
        found = self[slug] = defined_term(self.entries[slug], self.site)
        return found


def api_path(page: ListPage) -> str:
    """The JSON behind a list page."""
    if page.kind.name == "category":
        return f"/api/categories/{page.slug}"
    return list_route({page.kind.name: page.slug})


def emit_lists(kb: KnowledgeBase, writer: DistWriter, browse: Browse) -> None:
    """Write every list page (paginated), one overview page per kind, and the A–Z index.

    Each page is a unit (`DistWriter.unit`) keyed by what it shows besides the context: its list's size and its
    cards; an incremental build renders only the pages whose cards changed, and keys again only the pages that show
    a changed entry (`ListIndex`). An overview page is a unit keyed by its tiles."""
    site = kb.site
    frame = cache(partial(listpage.frame, site, kb.cache_root, writer.context))  # for the first page rendered
    browse.use_index(writer.context)
    index = browse.index
    terms = Terms(site, kb.by_slug)
    keyed = kb.cache_root is not None  # without a cache no build after this one looks at the units' keys

    def render(kind: Kind, page: ListPage, moods: list[dict[str, str]], number: int, rel: str) -> None:
        url = browse.url(kind.name, page.slug)
        shown = page.entries[(number - 1) * PAGE_SIZE:number * PAGE_SIZE]
        canonical = url if number == 1 else f"{url}{number}/"
        html = listpage.list_page(
            frame(), site, label=page.label, title=page.title, description=page.description, kind_title=kind.title,
            overview=browse.overview_url(kind.name), api=api_path(page), total=len(page.entries), moods=moods,
            pagination=pagination(url, len(page.entries), PAGE_SIZE, number), size=PAGE_SIZE, canonical=canonical,
            cards=browse.cards_of(shown), jsonld=term_set(
                page.label, page.description, canonical, [terms[e.slug] for e in shown], site))
        writer.add_file("/" + rel, rel + "index.html", html, HTML)

    def overview(kind: Kind, tiles: list[dict[str, Any]]) -> None:
        html = environment(site).get_template("overview.html").render(
            site=site, kind=kind, canonical=browse.overview_url(kind.name), tiles=tiles,
            jsonld=term_set(kind.title, kind.intro, browse.overview_url(kind.name), [], site).decode())
        writer.add_file(f"/{kind.segment}/", f"{kind.segment}/index.html", html.encode(), HTML)

    def units() -> Iterator[tuple[str, str, Callable[[], None]]]:
        for kind in KINDS:
            for page in browse.lists[kind.name]:
                moods = [{"label": browse.mood_titles[m], "url": browse.url("mood", m)} for m in page.moods
                         if m in browse.mood_titles]
                count = max(1, -(-len(page.entries) // PAGE_SIZE))
                for number in range(1, count + 1):
                    rel = f"{kind.segment}/{page.slug}/" + (f"{number}/" if number > 1 else "")
                    start = (number - 1) * PAGE_SIZE
                    end = start + PAGE_SIZE
                    key = index.unchanged(rel, f"{kind.name}:{page.slug}", start, end) if index else None
                    if key is None and keyed:
                        key = unit_key(str(len(page.entries)), *browse.digests_of(page.entries[start:end]))
                    yield rel, index.key(rel, key) if index else key or "", partial(render, kind, page, moods, number,
                                                                                    rel)
            tiles = browse.tiles(kind.name)
            yield f"{kind.segment}/index.html", unit_key(orjson.dumps(tiles).decode()), partial(overview, kind, tiles)

    writer.units_of(units())
    emit_az(kb, writer, browse)
    if index is not None:
        index.save()


def initial(entry: Entry) -> str:
    """The A–Z letter of an entry (`petgen.content.text.initial`)."""
    return title_initial(entry.title)


def letter_slug(letter: str) -> str:
    return "0-9" if letter == "#" else letter


def emit_az(kb: KnowledgeBase, writer: DistWriter, browse: Browse) -> None:
    """/a-z/ (the letters with their counts, also at /names/, canonical /a-z/) and /a-z/{letter}/ (the names,
    as links, paginated); each page a unit keyed by the letters, the total and the names it shows."""
    frame = cache(partial(listpage.frame, kb.site, kb.cache_root, writer.context))  # for the first page rendered
    groups = browse.by_letter
    letters = browse.letters
    navs = listpage.letter_links(letters)
    keyed = kb.cache_root is not None  # without a cache no build after this one looks at the units' keys
    index = unit_key(str(len(kb.entries)), *(f"{letter}\0{count}" for letter, _, count in letters))

    def render(letter: str | None, url: str, number: int, shown: list[Entry], canonical: str) -> None:
        named = len(groups.get(letter, []) if letter else [])
        html = listpage.az_page(frame(), kb.site, letter=letter, nav=navs[letter], letter_total=named, names=shown,
                                pagination=pagination(url, named, AZ_PAGE_SIZE, number), canonical=canonical,
                                total=len(kb.entries))
        rel = canonical.removeprefix(browse.base + "/")
        writer.add_file("/" + rel, rel + "index.html", html, HTML)
        if letter is None:  # /names/ (the parent of every entry's page) shows the same letters
            writer.add_file("/names/", "names/index.html", html, HTML)

    kept = browse.index  # while no letter gained or lost names, the pages that show no changed entry keep their keys
    if kept is not None and any(name.startswith("a-z:") for name in kept.touched):
        kept = None
    for letter, url, _ in [(None, f"{browse.base}/a-z/", 0), *letters]:
        entries = groups.get(letter, []) if letter else []
        count = max(1, -(-len(entries) // AZ_PAGE_SIZE))
        for number in range(1, count + 1):
            canonical = url if number == 1 else f"{url}{number}/"
            start = (number - 1) * AZ_PAGE_SIZE
            shown = entries[start:start + AZ_PAGE_SIZE]
            rel = canonical.removeprefix(browse.base + "/") or "a-z/"
            key = kept.unchanged(rel, f"a-z:{letter}", start, start + AZ_PAGE_SIZE) if kept and letter else None
            if key is None and keyed:
                key = unit_key(index, *(f"{e.slug}\0{e.title}" for e in shown))
            writer.unit(rel, browse.index.key(rel, key) if browse.index else key or "",
                        partial(render, letter, url, number, shown, canonical))

"""Emit the human pages: one per entry (its `url`), the home page, the search page and the 404 page
(the list pages come from petgen/emit/browse.py, /docs from petgen/emit/guide.py)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from functools import cached_property, partial
from importlib import resources
from operator import attrgetter
from typing import Any, cast

import orjson
from markupsafe import Markup

from petgen.build.dist import HTML, DistWriter, unit_key
from petgen.build.files import fingerprint
from petgen.content.kb import KnowledgeBase
from petgen.content.model import Entry, FacetValue, Site
from petgen.contract.resources import entry_url
from petgen.emit.browse import Browse, emit_lists
from petgen.emit.namepage import FacetParts, Frame, article, facet_parts, kept_frame
from petgen.emit.templating import emit_assets, environment, esc, markdown, script_json, script_json_bytes

RELATED = attrgetter("related")


class PageRenderer:
    """Renders entry pages; holds the lookups every page needs."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.site = kb.site
        self.categories = {c.slug: c for c in kb.categories}
        self.moods = {m.slug: m for m in kb.moods}
        self.facets = {name: {v.slug: v for v in values} for name, values in kb.facets.values.items()}
        self.titles = {e.slug: e.title for e in kb.entries}
        self.cache_root = kb.cache_root
        self.browse = Browse(kb)
        self.parts: dict[tuple[int, Any], Any] = {}  # `facet_parts`: (part, the values it is made of) -> part


    @cached_property
    def frame(self) -> Frame:
        """The page around an entry's article, made when first used: not before a rebuild after one edit forks its
        child (which renders no page), nor for the keys of the pages (`page_key`)."""
        return kept_frame(self.cache_root, self.context_key if self.cache_root is not None else "", "name",
                          lambda: Frame(environment(self.site).get_template("name.html"), self.site))

    @cached_property
    def context_key(self) -> str:
        """A hash of everything a page depends on besides its entry and its related entries' titles:
        the site, the taxonomy, the templates and the code (with the versions of the Markdown renderer and Jinja)."""
        digest = hashlib.blake2b(digest_size=10)
        digest.update(orjson.dumps([self.site.__dict__, [c.__dict__ for c in self.categories.values()],
                                    [m.__dict__ for m in self.moods.values()],
                                    {n: [v.__dict__ for v in vs.values()] for n, vs in self.facets.items()},
                                    [installed_version(package) for package in ("cmarkgfm", "jinja2", "markupsafe")]]))
        digest.update(fingerprint().encode())
        for template in sorted((resources.files("petgen.emit") / "templates").iterdir(), key=lambda t: t.name):
            digest.update(template.name.encode() + b"\0" + template.read_bytes())
        return digest.hexdigest()

    def page_key(self, entry_key: str, entry: Entry) -> str:
        """What one entry's page depends on within the context: its file, and its related entries' titles."""
        return hashlib.blake2b("\0".join([entry_key, *(self.titles[s] for s in entry.related)]).encode(),
                               digest_size=12).hexdigest()

    def emit(self, entry: Entry, writer: DistWriter, html: bytes | None = None) -> bytes:
        """Write one entry's page at its `url` (called per entry by `emit_entries`); return it.

        `html` is the page as rendered by an earlier build with the same `page_key`, if there was one.
        """
        if html is None:
            html = self.render(entry)
        writer.add_file(f"/names/{entry.slug}/", f"names/{entry.slug}/index.html", html, HTML)
        return html

    def facets_of(self, entry: Entry) -> dict[str, list[FacetValue]]:
        """The entry's facet values as vocabulary items (title, description), by facet."""
        found: dict[str, list[FacetValue]] = {}
        for name, values in self.facets.items():
            value = getattr(entry, name)
            found[name] = [values[v] for v in (value if isinstance(value, list) else [value]) if v in values]
        return found

    def facet_parts(self, entry: Entry) -> FacetParts:
        """`namepage.facet_parts` of the entry, each part kept by the values it is made of: entries share them."""
        keys = (tuple(entry.categories), tuple(entry.moods), (tuple(entry.relationship), entry.gender),
                tuple(entry.region), entry.language, entry.originCertainty)
        memo = self.parts
        found = [memo.get((i, key)) for i, key in enumerate(keys)]
        if None not in found:
            return cast(FacetParts, tuple(found))
        parts = facet_parts(self.browse.pills(entry), self.facets_of(entry).get("originCertainty", []))
        memo.update(((i, key), part) for i, (key, part) in enumerate(zip(keys, parts)))
        return parts

    def render(self, entry: Entry) -> bytes:
        site = self.site
        url = entry_url(site, entry.slug)
        jsonld = {
            "@context": "https://schema.org", "@type": "DefinedTerm", "name": entry.title,
            "description": entry.meaning, "url": url, "inLanguage": site.language,
            "license": site.license["url"],
            "inDefinedTermSet": {"@type": "DefinedTermSet", "name": site.name, "url": site.base_url + "/"},
        }
        main = article(entry, site, parts=self.facet_parts(entry), origin_html=markdown(entry.origin),
                       related=[{"slug": s, "title": self.titles[s]} for s in entry.related],
                       usage_html=markdown(entry.usage))
        return self.frame.fill({"slug": esc(entry.slug).encode(), "title": esc(entry.title).encode(),
                                "meaning": esc(entry.meaning).encode(), "url": esc(url).encode(),
                                "jsonld": script_json_bytes(jsonld), "main": main.encode()})


def featured(kb: KnowledgeBase, browse: Browse, count: int = 6) -> list[Entry]:
    """A few names for the home page: from each theme (not the aliases), in the editors' order, its most
    linked entry (most `related`, then A–Z) that was not picked yet."""
    picked: dict[str, Entry] = {}
    for category in browse.lists["category"]:
        if category.slug in kb.aliases:
            continue
        # Counted without a Python call per entry (a theme holds thousands); -1: picked already.
        entries = category.entries
        links = list(map(len, map(RELATED, entries)))
        while links and (most := max(links)) >= 0:
            best = entries[at := links.index(most)]
            if best.slug not in picked:
                picked[best.slug] = best
                break
            links[at] = -1
        if len(picked) == count:
            break
    return list(picked.values())


def installed_version(package: str) -> str:
    """The installed version of `package`, from the name of its `.dist-info` directory beside it where there is one:
    `importlib.metadata` costs 30 ms to import and search, before a rebuild after one edit forks its child."""
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin is not None:
        where, prefix = os.path.dirname(os.path.dirname(spec.origin)), package.lower() + "-"
        found = [name[len(prefix):-len(".dist-info")] for name in os.listdir(where)
                 if name.lower().startswith(prefix) and name.endswith(".dist-info")]
        if len(found) == 1:
            return found[0]
    from importlib.metadata import version

    return version(package)


def compile_templates(site: Site) -> None:
    """Compile every template of `site`'s pages into its `environment`, which keeps them (a full build renders
    them all). A full build of many entries does this while its workers parse the entries and this process waits
    for them: else the workers would wait meanwhile for their first entries to write (whose page frame is made
    of name.html), and this process would compile the others when it is the one left to finish, after the parse."""
    from petgen.emit.guide import docs_environment  # here: a rebuild after one edit imports none of /docs' modules

    env = docs_environment(site)
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)


def emit_site(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Write the assets, the list pages, the home page, the search page and the 404 page.

    The last three are units (`DistWriter.unit`) keyed by what they show besides the context: a rebuild after an
    edit that changes none of it renders no template (and imports no Jinja, with the frames of the pages it writes
    kept in the build cache: `kept_frame`)."""
    site, base = kb.site, kb.site.base_url
    emit_assets(writer)
    browse = Browse(kb)
    emit_lists(kb, writer, browse)
    tiles = {kind: browse.tiles(kind) for kind in ("category", "mood", "relationship", "region", "language")}
    cards = b"".join(browse.cards_of(featured(kb, browse)))
    writer.unit("index.html", unit_key(str(len(kb.entries)), orjson.dumps(tiles).decode(), cards.decode()),
                partial(_emit_home, kb, writer, tiles, cards))
    letters = browse.letters
    writer.unit("search/index.html", unit_key(orjson.dumps(letters).decode()), lambda: writer.add_file(
        "/search/", "search/index.html", environment(site).get_template("search.html").render(
            site=site, canonical=base + "/search/", letters=letters).encode(), HTML))
    writer.unit("404.html", "", lambda: writer.add_file(
        None, "404.html", environment(site).get_template("404.html").render(site=site).encode(), HTML))


def _emit_home(kb: KnowledgeBase, writer: DistWriter, tiles: dict[str, list[dict[str, Any]]], cards: bytes) -> None:
    """The home page: the number of names, a few of them (`featured`, their `cards`) and the lists as `tiles`."""
    site, base = kb.site, kb.site.base_url
    search_action = {
        "@context": "https://schema.org", "@type": "WebSite", "name": site.name, "url": base + "/",
        "description": site.description, "inLanguage": site.language,
        "license": site.license["url"],
        "potentialAction": {"@type": "SearchAction",
                            "target": {"@type": "EntryPoint", "urlTemplate": base + "/search/?q={search_term_string}"},
                            "query-input": "required name=search_term_string"},
    }
    aliases = kb.aliases
    themes = [t for t in tiles["category"] if t["slug"] not in aliases]
    relationships = tiles["relationship"] + [t for t in tiles["category"] if aliases.get(t["slug"], ("",))[0] == "gender"]
    home = environment(site).get_template("index.html").render(
        site=site, canonical=base + "/", total=len(kb.entries), featured=Markup(cards.decode()),
        themes=themes, relationships=relationships, moods=tiles["mood"],
        regions=[t for t in tiles["region"] if t["slug"] != "ueberregional"],
        languages=[t for t in tiles["language"] if t["slug"] != "deutsch"],
        jsonld=script_json(search_action))
    writer.add_file("/", "index.html", home.encode(), HTML)

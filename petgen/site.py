"""Emit the human pages: one per entry (its `url`), one per category, the index and 404."""

from __future__ import annotations

import hashlib
from functools import cached_property
from importlib import resources

import cmarkgfm
import orjson
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from petgen.cache import fingerprint
from petgen.content import Entry, FacetValue
from petgen.dist import CSS, HTML, DistWriter, content_hash
from petgen.kb import KnowledgeBase
from petgen.resources import category_url, entry_url


def stylesheet() -> tuple[str, bytes]:
    """The site's stylesheet: its hashed path (immutable, shared by every page) and its bytes."""
    data = (resources.files("petgen") / "templates" / "site.css").read_bytes()
    return f"assets/site.{content_hash(data)}.css", data


def environment() -> Environment:
    # auto_reload off: templates do not change during a build, and Jinja would otherwise check the
    # parent template's file on every page it renders (two system calls per page).
    env = Environment(loader=PackageLoader("petgen", "templates"), autoescape=select_autoescape(["html"]),
                      undefined=StrictUndefined, keep_trailing_newline=True, auto_reload=False)
    # Root-relative, unlike the other links: a deploy preview (served from another host, built with
    # the production base URL) must load its own stylesheet, which production may not have yet.
    env.globals["stylesheet"] = "/" + stylesheet()[0]
    return env


def markdown(text: str) -> str:
    """Render editor Markdown to HTML; raw HTML in the source is omitted, not passed through, and links
    to javascript:, vbscript:, file: and data: URLs (other than images) lose their target."""
    return cmarkgfm.github_flavored_markdown_to_html(text)


# Inside <script> the HTML parser ends the element at `</script` and changes state at `<!--`, whatever
# the JSON means; a line separator ends a JavaScript string in older engines. Escaped, the text holds
# none of them and parses to the same value (these characters only ever occur inside JSON strings).
_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                 "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(data: object) -> str:
    """JSON for a `<script type="application/ld+json">` element: no markup can end or bend the element."""
    return orjson.dumps(data).decode().translate(_SCRIPT_ESCAPES)


class PageRenderer:
    """Renders entry pages; holds the lookups every page needs."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.site = kb.site
        self.template = environment().get_template("name.html")
        self.categories = {c.slug: c for c in kb.categories}
        self.moods = {m.slug: m for m in kb.moods}
        self.facets = {name: {v.slug: v for v in values} for name, values in kb.facets.values.items()}
        self.titles = {e.slug: e.title for e in kb.entries}

    @cached_property
    def context_key(self) -> str:
        """A hash of everything a page depends on besides its entry and its related entries' titles:
        the site, the taxonomy, the templates and the code (with the versions of the Markdown renderer and Jinja)."""
        from importlib.metadata import version

        digest = hashlib.blake2b(digest_size=10)
        digest.update(orjson.dumps([self.site.__dict__, [c.__dict__ for c in self.categories.values()],
                                    [m.__dict__ for m in self.moods.values()],
                                    {n: [v.__dict__ for v in vs.values()] for n, vs in self.facets.items()},
                                    [version(package) for package in ("cmarkgfm", "jinja2", "markupsafe")]]))
        digest.update(fingerprint().encode())
        for template in sorted((resources.files("petgen") / "templates").iterdir(), key=lambda t: t.name):
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

    def render(self, entry: Entry) -> bytes:
        site = self.site
        url = entry_url(site, entry.slug)
        jsonld = {
            "@context": "https://schema.org", "@type": "DefinedTerm", "name": entry.title,
            "description": entry.meaning, "url": url, "inLanguage": site.language,
            "license": site.license["url"],
            "inDefinedTermSet": {"@type": "DefinedTermSet", "name": site.name, "url": site.base_url + "/"},
        }
        html = self.template.render(
            site=site, entry=entry, url=url, origin_html=markdown(entry.origin), usage_html=markdown(entry.usage),
            categories=[self.categories[c] for c in entry.categories], moods=[self.moods[m] for m in entry.moods],
            related=[{"slug": s, "title": self.titles[s]} for s in entry.related],
            facets=self.facets_of(entry),
            jsonld=script_json(jsonld),
        )
        return html.encode()


def emit_site(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Render the index, category pages and 404 (entry pages come from `emit_entries`)."""
    env = environment()
    site = kb.site
    path, css = stylesheet()
    writer.add_hashed(None, path.rsplit(".", 2)[0], css, CSS, ext="css")
    counts = {}
    category_page = env.get_template("category.html")
    for category in kb.categories:
        names = kb.in_category(category.slug)
        counts[category.slug] = len(names)
        html = category_page.render(site=site, category=category, names=names, url=category_url(site, category.slug))
        writer.add_file(f"/categories/{category.slug}/", f"categories/{category.slug}/index.html", html.encode(), HTML)

    index = env.get_template("index.html").render(site=site, entries=kb.entries, categories=kb.categories,
                                                  counts=counts)
    writer.add_file("/", "index.html", index.encode(), HTML)
    writer.add_file(None, "404.html", env.get_template("404.html").render(site=site).encode(), HTML)

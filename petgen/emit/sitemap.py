"""Emit /sitemap.xml: every HTML page of the build (from the route map), entry pages with their review date."""

from __future__ import annotations

from petgen.build.dist import HTML, DistWriter
from petgen.content.kb import KnowledgeBase

XML = "application/xml; charset=utf-8"
DUPLICATES = frozenset({"/names/"})  # the A–Z letters again (canonical /a-z/): not listed


def escape(text: str) -> str:
    """`xml.sax.saxutils.escape` (&, <, >), without the 13 ms of imports it brings (urllib.request, http)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def emit_sitemap(kb: KnowledgeBase, writer: DistWriter) -> None:
    """Write the sitemap of every page written so far (call it after the pages, before the manifest)."""
    base = kb.site.base_url
    reviewed = {f"/names/{e.slug}/": e.lastReviewed for e in kb.entries}
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    for route in sorted(r for r, info in writer.routes.items() if info["type"] == HTML and r not in DUPLICATES):
        lastmod = f"<lastmod>{reviewed[route]}</lastmod>" if route in reviewed else ""
        lines.append(f"<url><loc>{escape(base + route)}</loc>{lastmod}</url>")
    lines.append("</urlset>")
    writer.add_file("/sitemap.xml", "sitemap.xml", ("\n".join(lines) + "\n").encode(), XML)

"""Emit /docs: the API reference rendered from the OpenAPI document, its schemas, and the guide, rendered
from the repository's docs/*.md at build time. Plain HTML and the site's stylesheet: nothing from
another host, so the documentation works offline.

Links between the Markdown files (`api.md#errors`, `docs/bots.md`) become links between the guide's
pages; a link to a file that is no guide page keeps its text and loses its target. Headings get the
anchors GitHub gives them, so `api.md#rate-limits` lands where it does on GitHub.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from petgen.build.dist import HTML, DistWriter, content_hash, unit_key
from petgen.content.kb import KnowledgeBase
from petgen.content.model import Site
from petgen.contract.errors import ERROR_CODES
from petgen.emit.templating import environment, markdown

if TYPE_CHECKING:  # Jinja is imported with the first environment (petgen/emit/templating.py)
    from jinja2 import Environment

DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"


@dataclass(frozen=True)
class GuidePage:
    slug: str  # docs/<slug>.md, served at /docs/<slug>/
    title: str


# The guide for API users, in reading order. The operators' documents (deploy, operations, security,
# benchmarks) and the editors' guide stay in the repository.
GUIDE = (
    GuidePage("getting-started", "Getting started"),
    GuidePage("api", "Rate limits, errors, status"),
    GuidePage("ask", "Questions: POST /ask"),
    GuidePage("mcp-and-cors", "MCP, Accept and CORS"),
    GuidePage("bots", "Signed bots"),
    GuidePage("webhooks", "Webhooks (beta)"),
    GuidePage("openapi", "The OpenAPI document"),
)
_SLUGS = {page.slug for page in GUIDE}

_HREF = re.compile(r'<a href="([^"]*)"')
_LINK = re.compile(r'<a href="([^"]*)"([^>]*)>(.*?)</a>', re.DOTALL)
_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_MD_LINK = re.compile(r"^(?:\.\./|\./)*(?:docs/)?([a-z0-9-]+)\.md(#[^\s]*)?$")


def anchor(text: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens."""
    plain = html.unescape(_TAG.sub("", text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", plain).replace(" ", "-")


def guide_html(text: str, base: str) -> str:
    """A guide page's Markdown as HTML: headings with anchors, links between the files made site links."""
    rendered = markdown(text)
    seen: dict[str, int] = {}

    def heading(match: re.Match[str]) -> str:
        slug = anchor(match.group(2))
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            slug = f"{slug}-{seen[slug]}"
        return f'<h{match.group(1)} id="{slug}">{match.group(2)}</h{match.group(1)}>'

    def link(match: re.Match[str]) -> str:
        href, rest, label = match.groups()
        target = html.unescape(href)
        if not target or target.startswith(("http://", "https://", "mailto:", "#", "/")):
            return match.group(0)
        found = _MD_LINK.match(target)
        if found and found.group(1) in _SLUGS:
            return f'<a href="{base}/docs/{found.group(1)}/{html.escape(found.group(2) or "")}"{rest}>{label}</a>'
        return label  # a file of the repository, not a page of the site: the text stays

    # Wide tables and code blocks scroll sideways on a phone; a keyboard must reach them to scroll.
    rendered = re.sub(r"<(table|pre)(?=[ >])", r'<\1 tabindex="0"', rendered)
    return _LINK.sub(link, _HEADING.sub(heading, rendered))


def inline_markdown(text: str) -> Markup:
    """One paragraph of Markdown (an OpenAPI description) as inline HTML."""
    rendered = markdown(text or "").strip()
    if rendered.startswith("<p>") and rendered.endswith("</p>") and rendered.count("<p>") == 1:
        rendered = rendered[3:-4]
    return Markup(rendered)


def schema_name(ref: str) -> str:
    return ref.removeprefix("#/components/schemas/")


def folded_json(value: Any, width: int = 100, indent: str = "") -> str:
    """JSON with one key or item per line, except that whatever fits in `width` characters stays on one line (an
    enum, a small schema): readable, and a third smaller than `indent=1`. HTML-escaped as Jinja's `tojson`."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(indent) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        text = flat
    else:
        inner = indent + " "
        if isinstance(value, dict):
            items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {folded_json(v, width, inner).lstrip()}"
                     for k, v in value.items()]
            text = "{\n" + ",\n".join(items) + "\n" + indent + "}"
        else:
            text = "[\n" + ",\n".join(inner + folded_json(v, width, inner).lstrip() for v in value) + "\n" + indent + "]"
    if indent:
        return indent + text
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e").replace("'", "\\u0027"))


def schema_text(schema: dict[str, Any]) -> str:
    """A parameter's schema in one line: `string`, `integer 1..200`, `one of a, b, c`."""
    if "enum" in schema:
        values = [str(v) for v in schema["enum"]]
        return "one of " + ", ".join(values[:12]) + (f" … ({len(values)} values)" if len(values) > 12 else "")
    text = str(schema.get("type", schema_name(schema.get("$ref", "")) or "any"))
    if "minimum" in schema or "maximum" in schema:
        text += f" {schema.get('minimum', '')}..{schema.get('maximum', '')}"
    if "minLength" in schema or "maxLength" in schema:
        text += f", {schema.get('minLength', 0)} to {schema.get('maxLength', '…')} characters"
    if "default" in schema:
        text += f", default {schema['default']}"
    return text


def operations(document: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The operations for the reference, with what most of them share taken out: the parameters and the
    responses that more than half the operations have alike are listed once (and named per operation)."""
    ops = [{"id": op.get("operationId") or method + path.replace("/", "-"), "method": method, "path": path, "op": op}
           for path, item in document["paths"].items() for method, op in item.items()]
    param_uses: dict[str, int] = {}
    response_uses: dict[str, int] = {}
    for entry in ops:
        for p in entry["op"].get("parameters", []):
            key = repr(sorted(p.items()))
            param_uses[key] = param_uses.get(key, 0) + 1
        for status, response in entry["op"]["responses"].items():
            key = status + repr(response.get("description"))
            response_uses[key] = response_uses.get(key, 0) + 1
    common_params: dict[str, dict[str, Any]] = {}
    common_responses: dict[str, Any] = {}
    for entry in ops:
        entry["params"], entry["shared_params"] = [], []
        for p in entry["op"].get("parameters", []):
            if 2 * param_uses[repr(sorted(p.items()))] > len(ops):
                common_params.setdefault(p["name"], p)
                entry["shared_params"].append(p["name"])
            else:
                entry["params"].append(p)
        entry["responses"], entry["shared_responses"] = {}, []
        for status, response in entry["op"]["responses"].items():
            if 2 * response_uses[status + repr(response.get("description"))] > len(ops):
                common_responses.setdefault(status, response)
                entry["shared_responses"].append(status)
            else:
                entry["responses"][status] = response
    return ops, list(common_params.values()), common_responses


def emit_docs(kb: KnowledgeBase, writer: DistWriter, openapi_key: str, document: Callable[[], dict[str, Any]]) -> None:
    """Write /docs (the reference), /docs/schemas/ and one page per guide document found in docs/: one unit
    (`DistWriter.unit`) keyed by what the OpenAPI document is made from (`openapi_key`; `document()` makes it)
    and the guide's sources."""
    sources = [(DOCS_DIR / f"{page.slug}.md") for page in GUIDE]
    key = unit_key(openapi_key, *(content_hash(p.read_bytes()) if p.is_file() else "-" for p in sources))
    writer.unit("docs", key, lambda: _emit_docs(kb, writer, document()))


def docs_environment(site: Site) -> Environment:
    """The site's `environment`, with the filters of the /docs templates."""
    env = environment(site)
    env.filters["md"] = inline_markdown
    env.filters["schema_name"] = schema_name
    env.filters["schema_text"] = schema_text
    env.filters["folded_json"] = folded_json
    return env


def _emit_docs(kb: KnowledgeBase, writer: DistWriter, document: dict[str, Any]) -> None:
    env = docs_environment(kb.site)
    base = kb.site.base_url
    guide = [page for page in GUIDE if (DOCS_DIR / f"{page.slug}.md").is_file()]
    common = {"site": kb.site, "api": document, "guide": guide}
    ops, shared_params, shared_responses = operations(document)
    writer.add_file("/docs", "docs/index.html", env.get_template("docs.html").render(
        **common, errors=ERROR_CODES, ops=ops, shared_params=shared_params, shared_responses=shared_responses, canonical=f"{base}/docs").encode(), HTML)
    writer.add_file("/docs/schemas/", "docs/schemas/index.html", env.get_template("schemas.html").render(
        **common, schemas=document["components"]["schemas"], canonical=f"{base}/docs/schemas/").encode(), HTML)
    page_template = env.get_template("guide.html")
    for page in guide:
        text = (DOCS_DIR / f"{page.slug}.md").read_text(encoding="utf-8")
        body = guide_html(text, base)
        writer.add_file(f"/docs/{page.slug}/", f"docs/{page.slug}/index.html", page_template.render(
            **common, page=page, body=Markup(body), canonical=f"{base}/docs/{page.slug}/").encode(), HTML)

"""The corpus as Markdown (/llms-full.txt, MCP `petname://corpus`) and the /llms.txt overview."""

from __future__ import annotations

from petgen.content.kb import KnowledgeBase
from petgen.contract.resources import entry_url


def corpus_markdown(kb: KnowledgeBase) -> str:
    """Every entry, in list order, as one Markdown document."""
    site = kb.site
    categories = {c.slug: c.title for c in kb.categories}
    moods = {m.slug: m.title for m in kb.moods}
    parts = [
        f"# {site.name}: alle Kosenamen\n",
        f"{site.description} {len(kb.entries)} Einträge. Lizenz: {site.license['name']} "
        f"({site.license['url']}). Quelle: {site.license['attribution']}.\n",
    ]
    for e in kb.entries:
        parts.append(
            f"\n## {e.title}\n\n"
            f"- URL: {entry_url(site, e.slug)}\n"
            f"- Aussprache: {e.pronunciation} [{e.ipa}]\n"
            f"- Kategorien: {', '.join(categories[c] for c in e.categories)}\n"
            f"- Stimmungen: {', '.join(moods[m] for m in e.moods)}\n"
            f"- Varianten: {', '.join(e.variants)}\n"
            f"- Schlagwörter: {', '.join(e.keywords)}\n\n"
            f"**Bedeutung:** {e.meaning}\n\n"
            f"### Herkunft\n\n{e.origin}\n\n"
            f"### Verwendung\n\n{e.usage}\n\n"
            "### Beispiele\n\n" + "".join(f"- {x}\n" for x in e.examples) + "\n"
            "### Häufige Fragen\n\n" + "".join(f"- **{f['question']}** {f['answer']}\n" for f in e.faq)
        )
    return "".join(parts)


def llms_txt(kb: KnowledgeBase) -> str:
    """What the service is and where its documentation, OpenAPI document and MCP server are."""
    site, base = kb.site, kb.site.base_url
    return f"""# {site.name}

> A public, read-only, anonymous JSON API over a curated German knowledge base of {len(kb.entries)} pet names
> (Kosenamen), with meaning, origin, usage, examples and FAQs for each. Content: {site.license['name']}.

Attribute as "{site.license['attribution']}" and link the entry's `url`.

## API

- [OpenAPI 3.1 document]({base}/openapi.json): every operation, parameter and schema
- [API documentation]({base}/docs)
- [All names]({base}/api/names): `GET /api/names?category=&mood=&limit=&offset=`
- [Categories and moods]({base}/api/categories)
- [Search]({base}/api/search?q=maus): `GET /api/search?q=&limit=`
- Questions in German or English: `POST {base}/ask` with `{{"query": "Was bedeutet Spatzl?"}}` (NLWeb-style; SSE with `Prefer: streaming=true`)
- [Status]({base}/api/status)

## For agents

- MCP server (Streamable HTTP): `{base}/mcp`; tools `search`, `list_names`, `get_name`, `list_categories`; prompt `find_petname`
- [MCP server card]({base}/.well-known/mcp/server-card.json)
- [API catalog]({base}/.well-known/api-catalog)

## Optional

- [The full corpus as Markdown]({base}/llms-full.txt)
"""

"""The corpus as Markdown (/llms-full.txt, MCP `petname://corpus`) and the /llms.txt overview."""

from __future__ import annotations

from petgen.build.cache import EntryMemo
from petgen.build.dist import unit_key
from petgen.content.kb import KnowledgeBase
from petgen.content.model import Entry, Site
from petgen.contract.resources import entry_url


def corpus_markdown(kb: KnowledgeBase) -> bytes:
    """Every entry, in list order, as one Markdown document (UTF-8). Each entry's section is kept in the build
    cache between builds (`EntryMemo`): a rebuild makes only the changed entries' sections again."""
    site = kb.site
    categories = {c.slug: c.title for c in kb.categories}
    moods = {m.slug: m.title for m in kb.moods}
    memo = EntryMemo(kb.cache_root, "llms", unit_key(site.base_url, *(f"{k}={v}" for k, v in categories.items()),
                                                         *(f"{k}={v}" for k, v in moods.items())))
    parts = [(
        f"# {site.name}: alle Kosenamen\n"
        f"{site.description} {len(kb.entries)} Einträge. Lizenz: {site.license['name']} "
        f"({site.license['url']}). Quelle: {site.license['attribution']}.\n").encode()]
    entries = kb.entries
    parts += memo.get_all(list(map(kb.keys.get, [e.slug for e in entries])),
                          lambda i: section(entries[i], site, categories, moods))
    memo.save()
    return b"".join(parts)


def section(e: Entry, site: Site, categories: dict[str, str], moods: dict[str, str]) -> bytes:
    """One entry's section of `corpus_markdown`."""
    return (
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
    ).encode()


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

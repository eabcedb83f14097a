"""`petgen stats`: the knowledge base at a glance, as terminal tables."""

from __future__ import annotations

import unicodedata
from collections import Counter
from statistics import mean

from petgen.content.kb import KnowledgeBase
from petgen.content.text import word_count
from petgen.content.validate import MAX_PHRASE_ENTRIES, MIN_ENTRIES_PER_CATEGORY, repeated_phrases

REPEATED_SHOWN = 15

TEXT_FIELDS = ("meaning", "origin", "usage")
LIST_FIELDS = ("examples", "variants", "keywords", "faq", "related", "categories", "moods")


def width(text: str) -> int:
    """Terminal columns: wide characters (most emoji) take two, combining marks and selectors none."""
    columns, last = 0, 0
    for char in text:
        if char == "\ufe0f":  # emoji presentation selector: the character before it is shown wide
            columns += 2 - last
            last = 2
            continue
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        last = 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
        columns += last
    return columns


def pad(text: str, columns: int, right: bool) -> str:
    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill


def table(headers: list[str], rows: list[list[object]]) -> str:
    """Left-aligned text columns, right-aligned numbers, aligned by display width."""
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(width(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float)) for row in rows) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(pad(c, w, numeric[i]) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def render_stats(kb: KnowledgeBase, oldest: int = 10) -> str:
    """Entries per category, mood and facet value, field completeness, words per field, oldest reviews and the
    most repeated phrases."""
    n = len(kb.entries)
    out = [f"{n} entries, {len(kb.categories)} categories, {len(kb.moods)} moods", ""]

    per_category = {c.slug: len(kb.in_category(c.slug)) for c in kb.categories}
    out.append(table(["category", "title", "entries", "note"], [
        [c.slug, f"{c.emoji} {c.title}", per_category[c.slug],
         "below minimum" if per_category[c.slug] < MIN_ENTRIES_PER_CATEGORY else
         (f"alias of {c.facet[0]}={c.facet[1]}" if c.facet else "")] for c in kb.categories]))
    out.append("")
    per_mood = Counter(m for e in kb.entries for m in e.moods)
    out.append(table(["mood", "entries"], [[m.slug, per_mood[m.slug]] for m in kb.moods]))
    out.append("")
    titles = {name: {v.slug: v.title for v in values} for name, values in kb.facets.values.items()}
    facet_rows: list[list[object]] = [[name, value, titles[name].get(value, "?"), count]
                                      for name, counts in kb.facet_counts().items() for value, count in counts.items()]
    out.append(table(["facet", "value", "title", "entries"], facet_rows))
    out.append("")

    rows: list[list[object]] = []
    for name in TEXT_FIELDS:
        counts = [word_count(getattr(e, name)) for e in kb.entries] or [0]
        filled = sum(1 for e in kb.entries if getattr(e, name).strip())
        rows.append([name, f"{filled}/{n}", min(counts), round(mean(counts), 1), max(counts)])
    for name in LIST_FIELDS:
        counts = [len(getattr(e, name)) for e in kb.entries] or [0]
        filled = sum(1 for e in kb.entries if getattr(e, name))
        rows.append([name, f"{filled}/{n}", min(counts), round(mean(counts), 1), max(counts)])
    out.append(table(["field", "filled", "min", "mean", "max"], rows))
    out.append("(words for text fields, items for lists)")
    out.append("")

    by_review = sorted(kb.entries, key=lambda e: (e.lastReviewed, e.slug))[:oldest]
    out.append(table(["oldest lastReviewed", "entry"], [[e.lastReviewed, e.slug] for e in by_review]))
    out.append("")
    phrases = repeated_phrases(kb.entries, top=REPEATED_SHOWN, minimum=2)
    out.append(table(["most repeated phrases (X = the entry's name)", "entries"],
                     [[phrase, len(users)] for phrase, users in phrases]))
    out.append(f"(at most {MAX_PHRASE_ENTRIES} entries per phrase; `petgen check --strict` enforces it)")
    return "\n".join(out)

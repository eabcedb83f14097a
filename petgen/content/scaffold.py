"""`petgen new "Title"`: a new entry file, named by the slug rule, with every field to fill in.

The file parses and passes the schema from the start, but its TODO placeholders are errors
(petgen/content/validate.py): `petgen check` and `petgen build` refuse it until every one is replaced.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click
import yaml

from petgen.content.text import slugify

TEMPLATE = """---
title: {title}
pronunciation: TODO
ipa: TODO
meaning: TODO – was der Name wörtlich bedeutet und was er ausdrückt (1–2 Sätze).
variants: []
categories: [klassiker]
moods: [zaertlich]
relationship: [partner]
gender: TODO  # sie, ihn oder alle – wie der Name verwendet wird
region: [ueberregional]
originCertainty: TODO  # belegt, vermutet oder unbekannt
keywords: [TODO, TODO, TODO, sweetheart]
examples:
  - "TODO: {bare}, eine Nachricht (SMS, Chat)."
  - "TODO: {bare}, eine Alltagssituation."
  - "TODO: {bare}, ein zärtlicher Moment."
  - "TODO: {bare}, verspielt oder ironisch."
related: []
faq:
  - question: TODO – eine echte Frage, die Menschen zu {bare} stellen?
    answer: TODO – eine Antwort in 1–3 Sätzen.
  - question: TODO – eine zweite Frage?
    answer: TODO – eine Antwort in 1–3 Sätzen.
datePublished: {today}
lastReviewed: {today}
---

## Herkunft

TODO: Etymologie und kulturelle Herkunft, 60–180 Wörter. Nur Fakten; Unsicheres als unsicher kennzeichnen.

## Verwendung

TODO: Wer benutzt den Namen für wen, Register, Region, Wirkung und Fallstricke, 40–150 Wörter.
"""


def new_entry(content_dir: Path, title: str, today: dt.date | None = None) -> Path:
    """Write names/<slug>.md for `title`; refuse to overwrite or to create an unnamed file."""
    title = title.strip()
    slug = slugify(title)
    if not slug:
        raise click.ClickException(f"'{title}' has no letters or digits to make a slug from.")
    names = content_dir / "names"
    if not names.is_dir():
        raise click.ClickException(f"{names} does not exist; pass --content DIR.")
    path = names / f"{slug}.md"
    quoted = yaml.safe_dump(title, allow_unicode=True, default_style=None).strip().removesuffix("...").strip()
    day = (today or dt.date.today()).isoformat()
    try:
        with path.open("x", encoding="utf-8") as file:  # "x": never overwrite an entry
            file.write(TEMPLATE.format(title=quoted, bare=title.replace('"', "'"), today=day))
    except FileExistsError:
        raise click.ClickException(f"{path} already exists.") from None
    except OSError as exc:  # a title too long for a file name, a read-only directory …
        name = path.name if len(path.name) <= 60 else path.name[:56] + "….md"
        raise click.ClickException(f"cannot create {names / name}: {exc.strerror}.") from None
    return path

"""Templates and assets shared by every page: the Jinja environment, the hashed assets, Markdown, dates,
JSON for script elements."""

from __future__ import annotations

import functools
import os
import threading
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from cmarkgfm import cmark
from markupsafe import Markup, escape

from petgen.build.dist import CSS, DistWriter, content_hash
from petgen.content.model import Site

if TYPE_CHECKING:  # Jinja is imported with the first environment: a rebuild after one edit forks its child first
    from jinja2 import BytecodeCache, Environment

# The site's static assets: template file -> (stem of the hashed path, extension, content type). Each is
# written once as `assets/<name>.<hash>.<ext>` (immutable) and shared by every page.
ASSETS = {
    "css": ("site.css", "assets/site", "css", CSS),
    "js": ("search.js", "assets/search", "js", "text/javascript; charset=utf-8"),
    "icon": ("favicon.svg", "assets/icon", "svg", "image/svg+xml"),
    "og": ("og.png", "assets/og", "png", "image/png"),
}


def asset_files() -> dict[str, tuple[str, bytes]]:
    """Each asset's hashed path (without the leading slash) and bytes (read again each time: a long-running
    `petgen dev` picks up an edited stylesheet or script with its next build)."""
    found = {}
    for name, (source, stem, ext, _) in ASSETS.items():
        data = (resources.files("petgen.emit") / "templates" / source).read_bytes()
        found[name] = (f"{stem}.{content_hash(data)}.{ext}", data)
    return found


def stylesheet() -> tuple[str, bytes]:
    """The site's stylesheet: its hashed path (immutable, shared by every page) and its bytes."""
    return asset_files()["css"]


def emit_assets(writer: DistWriter) -> None:
    """Write the stylesheet, the search script, the icon and the share image."""
    for name, (path, data) in asset_files().items():
        _, stem, ext, content_type = ASSETS[name]
        writer.add_hashed(None, stem, data, content_type, ext=ext)


_MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
           "November", "Dezember")


@functools.cache  # entries share their few dates: each page shows two
def german_date(iso: str) -> str:
    """`2026-11-22` → `22. November 2026`."""
    year, month, day = iso.split("-")
    return f"{int(day)}. {_MONTHS[int(month) - 1]} {year}"


_environments: dict[bytes, Environment] = {}
_bytecode: list[Path | None] = [None]  # where `keep_compiled_templates` keeps them


def keep_compiled_templates(directory: Path | None) -> None:
    """Keep the templates compiled to Python bytecode in `directory` (None: compile them in each process).
    Jinja checks each template's source against what was compiled, so an edited template is compiled again."""
    if directory is not None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            directory = None
    _bytecode[0] = directory
    for env in _environments.values():
        env.bytecode_cache = _bytecode_cache()


def _bytecode_cache() -> BytecodeCache | None:
    from jinja2 import FileSystemBytecodeCache

    return FileSystemBytecodeCache(str(_bytecode[0])) if _bytecode[0] is not None else None


def environment(site: Site) -> Environment:
    """The Jinja environment of every page of `site`, with the parts that depend on the site alone (head
    tags, header, footer) rendered once, as `chrome`, instead of once per page.

    One per site, assets and template files (by name, size and modification time) in a process, so that a
    build compiles each template once; a long-running `petgen dev` gets a new one when a template changes.
    """
    templates = resources.files("petgen.emit") / "templates"
    key = orjson.dumps([site.__dict__, sorted((t.name, *_stat(t)) for t in templates.iterdir())])
    env = _environments.get(key)
    if env is None:
        env = _environments[key] = _new_environment(site)
    return env


def _stat(path: object) -> tuple[int, int]:
    try:
        info = os.stat(path)  # type: ignore[call-overload]
    except (OSError, TypeError):  # a package inside a zip: read every time, as before
        return (-1, id(path))
    return info.st_size, info.st_mtime_ns


def _new_environment(site: Site) -> Environment:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    # auto_reload off: templates do not change during a build, and Jinja would otherwise check the
    # parent template's file on every page it renders (two system calls per page).
    env = Environment(loader=PackageLoader("petgen.emit", "templates"), autoescape=select_autoescape(["html"]),
                      undefined=StrictUndefined, keep_trailing_newline=True, auto_reload=False,
                      bytecode_cache=_bytecode_cache())
    # Root-relative, unlike the other links: a deploy preview (served from another host, built with
    # the production base URL) must load its own stylesheet, which production may not have yet.
    env.globals["stylesheet"] = "/" + stylesheet()[0]
    env.globals["assets"] = {name: "/" + path for name, (path, _) in asset_files().items()}
    env.globals["canonical"] = None
    env.filters["german_date"] = german_date
    parts = env.get_template("_chrome.html").make_module({"site": site})
    env.globals["chrome"] = {name: Markup(getattr(parts, name)()) for name in ("head", "top", "search", "foot_start",
                                                                                "foot_end")}
    return env


def esc(text: str) -> str:
    """Escape text as Jinja's autoescaping does (markupsafe), without a call when there is nothing to escape."""
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return str(escape(text))
    return text


# `cmarkgfm.github_flavored_markdown_to_html`'s options and extensions.
_GFM_OPTIONS = cmark.Options.CMARK_OPT_GITHUB_PRE_LANG
_GFM_EXTENSIONS = ("table", "autolink", "tagfilter", "strikethrough", "tasklist")


class _Parser(threading.local):
    """A thread's Markdown parser, made once: cmark's `parser_finish` leaves the parser as new, with its options
    and extensions, and making one with its five extensions is a third of the cost of an entry's short sections."""

    parser: Any = None
    extensions: Any = None


_parsers = _Parser()


def markdown(text: str) -> str:
    """Render editor Markdown to HTML as `cmarkgfm.github_flavored_markdown_to_html` does (the same calls of
    its wrappers of the C library); raw HTML in the source is omitted, not passed through, and links to
    javascript:, vbscript:, file: and data: URLs (other than images) lose their target."""
    local = _parsers
    parser = local.parser
    if parser is None:
        cmark.core_extensions_ensure_registered()
        parser = cmark.parser_new(options=_GFM_OPTIONS)
        for name in _GFM_EXTENSIONS:
            cmark.parser_attach_syntax_extension(parser, cmark.find_syntax_extension(name))
        local.parser, local.extensions = parser, cmark.parser_get_syntax_extensions(parser)
    try:
        cmark.parser_feed(parser, text)
        root = cmark.parser_finish(parser)
    except BaseException:  # the parser may hold part of `text`: the next call makes a new one
        local.parser = None
        cmark.parser_free(parser)
        raise
    return cmark.render_html(root, options=_GFM_OPTIONS, extensions=local.extensions)


# Inside <script> the HTML parser ends the element at `</script` and changes state at `<!--`, whatever
# the JSON means; a line separator ends a JavaScript string in older engines. Escaped, the text holds
# none of them and parses to the same value (these characters only ever occur inside JSON strings).
# Replaced in the UTF-8 bytes: no byte of these characters' encodings occurs inside another character's.
_SCRIPT_ESCAPES = tuple((char.encode(), escaped.encode()) for char, escaped in (
    ("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")))


def script_json_bytes(data: object) -> bytes:
    """JSON for a `<script type="application/ld+json">` element, encoded: no markup can end or bend the element.
    (Five `replace` calls: a translation table costs a lookup per character.)"""
    text = orjson.dumps(data)
    for char, escaped in _SCRIPT_ESCAPES:
        if char in text:
            text = text.replace(char, escaped)
    return text


def script_json(data: object) -> str:
    """`script_json_bytes`, as text (for a template)."""
    return script_json_bytes(data).decode()

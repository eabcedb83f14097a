"""Load the content directory: site.yml, categories.yml, moods.yml and names/<slug>.md.

Loading never raises on bad content: every problem is recorded with its file and line, so
that `petgen check` can list them all before one abort.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from petgen.content.frontmatter import PlainReader, split_front_matter
from petgen.content.nearest import did_you_mean
from petgen.content.problems import Problem, Problems
from petgen.content.text import slugify

try:  # the C parser is ~10x faster; both give the same nodes and marks
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


class ContentLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe YAML loader that keeps dates as text, so `YYYY-MM-DD` can be checked as written."""


ContentLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_PLAIN = PlainReader(ContentLoader.yaml_implicit_resolvers)  # entries' front matter, read fast when plain

DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
HTTP_URL = re.compile(r"^https?://[^/\s]+(/\S*)?$")

# The entry schema: front-matter key -> kind. Every key is required except those in OPTIONAL.
ENTRY_FIELDS: dict[str, str] = {
    "title": "text",
    "pronunciation": "text",
    "ipa": "text",
    "meaning": "text",
    "variants": "text_list",
    "categories": "text_list",
    "moods": "text_list",
    "keywords": "text_list",
    "examples": "text_list",
    "relationship": "text_list",
    "gender": "text",
    "genderNote": "text",
    "region": "text_list",
    "language": "text",
    "caution": "text",
    "originCertainty": "text",
    "related": "text_list",
    "faq": "faq",
    "datePublished": "date",
    "lastReviewed": "date",
}
OPTIONAL_FIELDS = frozenset({"related", "genderNote", "language", "caution"})
DEFAULT_LANGUAGE = "deutsch"
# The facets (content/facets.yml): who a name is for and where it comes from. The first four filter
# lists (`/api/names?gender=sie`), in this order in list routes; originCertainty is a property.
FILTER_FACETS = ("relationship", "gender", "region", "language")
FACETS = (*FILTER_FACETS, "originCertainty")
SINGLE_VALUED = frozenset({"gender", "language", "originCertainty"})  # the others are lists
EVERY_REGION = "*"  # `region=*` in an alias category: any region but the one below
SUPRAREGIONAL = "ueberregional"
# Body sections: Markdown heading -> field.
SECTIONS = {"Herkunft": "origin", "Verwendung": "usage"}

SITE_FIELDS = ("name", "site", "base_url", "language", "api_version", "description", "license")
LICENSE_FIELDS = ("name", "url", "attribution")
CATEGORY_FIELDS = ("slug", "title", "emoji", "description", "moods")
CATEGORY_OPTIONAL = ("facet",)
MOOD_FIELDS = ("slug", "title", "description")


@dataclass
class Site:
    name: str
    site: str
    base_url: str
    language: str
    api_version: str
    description: str
    license: dict[str, str]

    def with_base_url(self, base_url: str | None) -> Site:
        if not base_url:
            return self
        return Site(**{**self.__dict__, "base_url": base_url.rstrip("/")})


@dataclass
class Mood:
    slug: str
    title: str
    description: str


FacetValue = Mood  # a facet's value has the same fields as a mood: slug, title, description


@dataclass
class Category:
    slug: str
    title: str
    emoji: str
    description: str
    moods: list[str]
    facet: tuple[str, str] | None = None  # an alias of a facet value: ("gender", "sie"), ("region", "*")

    def has(self, entry: Entry) -> bool:
        """Whether `entry` belongs to this category (for an alias: by its facet)."""
        if self.facet is None:
            return self.slug in entry.categories
        return facet_matches(self.facet, getattr(entry, self.facet[0]))


def facet_matches(facet: tuple[str, str], value: str | list[str]) -> bool:
    """Whether an entry's facet value (a slug, or a list of slugs) matches an alias's `name=value`."""
    wanted = facet[1]
    values = value if isinstance(value, list) else [value]
    if wanted == EVERY_REGION:
        return any(v != SUPRAREGIONAL for v in values)
    return wanted in values


@dataclass
class Entry:
    slug: str
    path: str
    title: str
    pronunciation: str
    ipa: str
    meaning: str
    variants: list[str]
    categories: list[str]
    moods: list[str]
    keywords: list[str]
    examples: list[str]
    related: list[str]
    faq: list[dict[str, str]]
    datePublished: str
    lastReviewed: str
    origin: str
    usage: str
    relationship: list[str] = field(default_factory=list)
    gender: str = ""
    region: list[str] = field(default_factory=list)
    originCertainty: str = ""
    genderNote: str | None = None
    language: str = DEFAULT_LANGUAGE
    caution: str | None = None
    lines: dict[str, int] = field(default_factory=dict)  # field or "examples[2]" -> line
    sentences: bytes = field(default=b"", repr=False)  # hashed comparison keys of sentences (validate.py)
    terms: dict[str, float] | None = field(default=None, repr=False)  # search terms, see `search_fields`
    name_keys: tuple[str, ...] = field(default=(), repr=False)  # title and variants folded (validate.py)
    phrases: bytes = field(default=b"", repr=False)  # hashed five-word phrases, packed (validate.py)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickled as the values of its fields in order, not a dict of them: entries go between the processes of a
        build by the thousand and load a few times faster so (as usual if another attribute was set on it)."""
        values = self.__dict__
        if values.keys() == _FIELD_SET:
            return _entry, tuple([values[name] for name in _ENTRY_FIELDS])
        return super().__reduce_ex__(protocol)

    def search_fields(self) -> dict[str, list[str]]:
        """The texts the search index covers, by field (petgen/search/index.py weighs them)."""
        return {"title": [self.title], "variants": self.variants, "keywords": self.keywords, "meaning": [self.meaning]}

    def line_of(self, key: str) -> int:
        """The line of `faq[1].answer`, else of `faq[1]`, else of `faq` (else 1)."""
        lines = self.lines
        return lines.get(key) or lines.get(key.split(".")[0]) or lines.get(key.split("[")[0], 1)


_ENTRY_FIELDS = tuple(f.name for f in fields(Entry))
_FIELD_SET = frozenset(_ENTRY_FIELDS)


def _entry(*values: Any) -> Entry:
    """An `Entry` from the values of its fields (`Entry.__reduce_ex__`)."""
    entry = Entry.__new__(Entry)
    entry.__dict__.update(zip(_ENTRY_FIELDS, values))
    return entry


# ---------------------------------------------------------------------------------------------
# YAML with line numbers, and without the features an attacker or a typo could turn against the build

# Content nests a few levels deep (an entry's faq: a list of question/answer mappings; bots.yml's
# keys: six levels); deeper nesting is a mistake, and hundreds of levels would exhaust Python's
# recursion limit in the constructor.
MAX_DEPTH = 8


class RefusedYAML(yaml.YAMLError):
    """Valid YAML that content must not use: anchors and aliases, deep nesting, a value its tag cannot read."""

    def __init__(self, mark: yaml.Mark, message: str, hint: str) -> None:
        super().__init__(message)
        self.mark, self.message, self.hint = mark, message, hint


def _yaml_problem(path: str, exc: yaml.YAMLError, line_offset: int) -> Problem:
    if isinstance(exc, RefusedYAML):
        return Problem(path, exc.mark.line + 1 + line_offset, exc.message, exc.hint)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = (mark.line + 1 + line_offset) if mark is not None else 1 + line_offset
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    return Problem(path, line, message, "check indentation, colons and quotes on this line or the one above")


def parse_yaml(
    text: str, path: str, problems: Problems, line_offset: int = 0
) -> tuple[Any, dict[str, int]]:
    """Parse YAML text; return (data, lines) where lines maps `key`, `key[i]` and `[i]` to file lines.

    Duplicate mapping keys, which PyYAML would silently merge, are reported; so are anchors and
    aliases, nesting deeper than MAX_DEPTH and values their tag cannot read (see `RefusedYAML`).
    """
    try:
        _refuse_anchors(text)
        loader = ContentLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None, {}
            _refuse_deep_nesting(node)
            lines: dict[str, int] = {}
            _record_lines(node, path, problems, lines, line_offset)
            try:
                data = _construct(loader, node)
            except TypeError:  # e.g. a list used as a mapping key: PyYAML reports it with its line
                data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        problems.items.append(_yaml_problem(path, exc, line_offset))
        return None, {}
    return data, lines


def _refuse_anchors(text: str) -> None:
    """Raise RefusedYAML at the first anchor (`&x`) or alias (`*x`), before anything is composed.

    Aliases let a kilobyte of YAML expand into billions of values ("billion laughs"), and content
    never needs them. The parser's events are linear in the text, so this check is too; it runs only
    when the text has an `&` or `*` at all, as neither can be written without its indicator.
    """
    if "&" not in text and "*" not in text:
        return
    loader = ContentLoader(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            if getattr(event, "anchor", None) is not None:
                raise RefusedYAML(event.start_mark, "YAML anchors and aliases (&x, *x) are not allowed in content",
                                  "write the value out in full; quote text that starts with & or *")
    finally:
        loader.dispose()


def _refuse_deep_nesting(node: yaml.Node) -> None:
    """Raise RefusedYAML when lists and mappings nest deeper than MAX_DEPTH (one level at a time,
    without recursion; aliases are refused before, so every node is visited once)."""
    level, depth = [node], 1
    while level:
        if depth > MAX_DEPTH:
            raise RefusedYAML(level[0].start_mark, f"YAML nested more than {MAX_DEPTH} levels deep",
                              "content needs only a few levels, e.g. faq: a list of question/answer pairs")
        below: list[yaml.Node] = []
        for n in level:
            if type(n) is yaml.SequenceNode:
                below += n.value
            elif type(n) is yaml.MappingNode:
                for key, value in n.value:
                    below.append(key)
                    below.append(value)
        level, depth = below, depth + 1


_STR, _SEQ, _MAP, _MERGE, _INT = (f"tag:yaml.org,2002:{t}" for t in ("str", "seq", "map", "merge", "int"))


def _construct(loader: Any, node: yaml.Node) -> Any:
    """Build Python values from composed nodes: plain text, lists and mappings directly (the bulk of
    every entry), anything else (numbers, booleans, null, merge keys, explicit tags) by PyYAML's
    safe constructor, so the result is the same as `construct_document`, only faster."""
    tag = node.tag
    if tag == _STR and isinstance(node, yaml.ScalarNode):
        return node.value
    if tag == _SEQ and isinstance(node, yaml.SequenceNode):
        return [_construct(loader, child) for child in node.value]
    if tag == _MAP and isinstance(node, yaml.MappingNode) and all(k.tag != _MERGE for k, _ in node.value):
        return {_construct(loader, key): _construct(loader, value) for key, value in node.value}
    # A number wider than 64 bits is a mistake, and one of over 4,300 digits could not even be read
    # or printed (Python refuses to convert it): both are refused, the latter before reading it.
    if tag == _INT and len(node.value) > 100:
        value: Any = 1 << 65
    else:
        try:
            value = loader.construct_object(node, deep=True)
        except (ValueError, AttributeError, OverflowError) as exc:  # PyYAML's constructors raise these on
            value = exc  # odd values (`!!timestamp nope`, `!!int x`): content errors, not crashes
    if isinstance(value, Exception) or (isinstance(value, int) and value.bit_length() > 64):
        shown = str(node.value) if isinstance(node, yaml.ScalarNode) else node.tag
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        message = (f"the number '{shown}' is too large" if isinstance(value, int)
                   else f"the value '{shown}' cannot be read as {node.tag.replace('tag:yaml.org,2002:', '!!')}")
        raise RefusedYAML(node.start_mark, message, "quote it to make it text")
    return value


def _record_lines(node: yaml.Node, path: str, problems: Problems, lines: dict[str, int], offset: int) -> None:
    def line(n: yaml.Node) -> int:
        return n.start_mark.line + 1 + offset

    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in seen:
                problems.add(path, line(key_node), f"duplicate key '{key}'", "remove one of the two")
            seen.add(key)
            lines[key] = line(key_node)
            if isinstance(value_node, yaml.MappingNode):  # a section of lexicon.yml: its keys once each too
                inner: set[str] = set()
                for sub_key, _ in value_node.value:
                    if str(sub_key.value) in inner:
                        problems.add(path, line(sub_key), f"duplicate key '{key}: {sub_key.value}'",
                                     "remove one of the two (YAML keeps only the last)")
                    inner.add(str(sub_key.value))
            if isinstance(value_node, yaml.SequenceNode):
                for i, item in enumerate(value_node.value):
                    lines[f"{key}[{i}]"] = line(item)
                    if isinstance(item, yaml.MappingNode):  # faq items: the line of each answer
                        for sub_key, _ in item.value:
                            lines[f"{key}[{i}].{sub_key.value}"] = line(sub_key)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[f"[{i}]"] = line(item)
            if isinstance(item, yaml.MappingNode):
                for key_node, _ in item.value:
                    lines[f"[{i}].{key_node.value}"] = line(key_node)


# ---------------------------------------------------------------------------------------------
# site.yml, moods.yml, categories.yml


def read_text(path: Path, problems: Problems) -> str | None:
    """A content file's text, or None with the problem recorded (missing, unreadable, not UTF-8)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.add(str(path), 1, "file not found", "every content directory needs this file")
    except UnicodeDecodeError as exc:
        problems.add(str(path), 1, f"not valid UTF-8 ({exc.reason})", "save the file as UTF-8")
    except OSError as exc:
        problems.add(str(path), 1, f"cannot be read ({exc.strerror})")
    return None


def _check_keys(
    data: dict[str, Any], allowed: tuple[str, ...], path: str, lines: dict[str, int], problems: Problems,
    prefix: str = "", line: int = 1,
) -> bool:
    """Report unknown and missing keys; True when every required key is present."""
    ok = True
    for key in data:
        if key not in allowed:
            problems.add(path, lines.get(prefix + str(key), line), f"unknown key '{key}'", did_you_mean(str(key), allowed))
    for key in allowed:
        if key not in data:
            problems.add(path, line, f"missing required key '{key}'")
            ok = False
    return ok


def load_site(content_dir: Path, problems: Problems) -> Site | None:
    """Read site.yml: service name, site identifier, base_url, license, language, API version."""
    path = content_dir / "site.yml"
    text = read_text(path, problems)
    if text is None:
        return None
    data, lines = parse_yaml(text, str(path), problems)
    if not isinstance(data, dict):
        if data is not None or not problems.errors:
            problems.add(str(path), 1, "site.yml must be a mapping of keys to values")
        return None
    if not _check_keys(data, SITE_FIELDS, str(path), lines, problems):
        return None
    license_ = data["license"]
    if not isinstance(license_, dict) or not _check_keys(
        license_, LICENSE_FIELDS, str(path), {}, problems, line=lines.get("license", 1)
    ):
        if not isinstance(license_, dict):
            problems.add(str(path), lines.get("license", 1), "license must be a mapping with name, url, attribution")
        return None
    base_url = str(data["base_url"]).rstrip("/")
    if not HTTP_URL.match(base_url):
        problems.add(str(path), lines.get("base_url", 1), f"base_url '{base_url}' is not an http(s) URL",
                     "write it like https://kosenamen.example")
        return None
    if not HTTP_URL.match(str(license_["url"])):  # every page links to it
        problems.add(str(path), lines.get("license", 1), f"license url '{license_['url']}' is not an http(s) URL",
                     "e.g. https://creativecommons.org/licenses/by/4.0/")
        return None
    if not SLUG_RE.match(str(data["site"])):
        problems.add(str(path), lines.get("site", 1), f"site '{data['site']}' is not a slug", "use a-z, 0-9 and '-'")
        return None
    return Site(
        name=str(data["name"]), site=str(data["site"]), base_url=base_url, language=str(data["language"]),
        api_version=str(data["api_version"]), description=str(data["description"]),
        license={k: str(license_[k]) for k in LICENSE_FIELDS},
    )


def _load_vocabulary(path: Path, fields: tuple[str, ...], problems: Problems,
                     optional: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    text = read_text(path, problems)
    if text is None:
        return []
    data, lines = parse_yaml(text, str(path), problems)
    if not isinstance(data, list):
        if data is not None or not any(p.path == str(path) for p in problems.items):
            problems.add(str(path), 1, f"{path.name} must be a YAML list of entries", "start each entry with '- slug: …'")
        return []
    return _vocabulary_items(data, lines, "", path, fields, problems, optional)


def _vocabulary_items(data: list[Any], lines: dict[str, int], prefix: str, path: Path, fields: tuple[str, ...],
                      problems: Problems, optional: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The valid items of a vocabulary list (`prefix`: its key in the file, "" for a top-level list)."""
    result: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(data):
        line = lines.get(f"{prefix}[{i}]", 1)
        if not isinstance(item, dict):
            problems.add(str(path), line, f"entry {i + 1} must be a mapping with {', '.join(fields)}")
            continue
        item_lines = {k.split(".", 1)[1]: v for k, v in lines.items() if k.startswith(f"{prefix}[{i}].")}
        present = {k: v for k, v in item.items() if k not in optional}
        if not _check_keys(present, fields, str(path), item_lines, problems, line=line):
            continue
        slug = str(item["slug"])
        if not SLUG_RE.match(slug):
            problems.add(str(path), item_lines.get("slug", line), f"'{slug}' is not a valid slug",
                         f"use lowercase a-z, 0-9 and '-', e.g. '{slugify(slug)}'")
            continue
        if slug in seen:
            problems.add(str(path), item_lines.get("slug", line), f"duplicate slug '{slug}'")
            continue
        seen.add(slug)
        empty = [k for k in fields if k != "moods" and not str(item[k]).strip()]
        for key in empty:
            problems.add(str(path), item_lines.get(key, line), f"'{slug}': {key} must not be empty")
        item["_line"] = line
        result.append(item)
    return result


def load_moods(content_dir: Path, problems: Problems) -> list[Mood]:
    """Read moods.yml: the controlled vocabulary of moods."""
    items = _load_vocabulary(content_dir / "moods.yml", MOOD_FIELDS, problems)
    return [Mood(slug=i["slug"], title=str(i["title"]), description=str(i["description"])) for i in items]


def load_categories(content_dir: Path, moods: list[Mood], problems: Problems) -> list[Category]:
    """Read categories.yml: the controlled vocabulary of categories and their typical moods."""
    path = content_dir / "categories.yml"
    mood_slugs = {m.slug for m in moods}
    categories = []
    for item in _load_vocabulary(path, CATEGORY_FIELDS, problems, optional=CATEGORY_OPTIONAL):
        typical = item["moods"]
        if not isinstance(typical, list) or not all(isinstance(m, str) for m in typical):
            problems.add(str(path), item["_line"], f"'{item['slug']}': moods must be a list of mood slugs")
            continue
        for mood in typical:
            if mood_slugs and mood not in mood_slugs:
                problems.add(str(path), item["_line"], f"'{item['slug']}': unknown mood '{mood}'",
                             did_you_mean(mood, mood_slugs) or f"moods are defined in {content_dir / 'moods.yml'}")
        facet = _alias(item, path, problems) if "facet" in item else None
        categories.append(Category(slug=item["slug"], title=str(item["title"]), emoji=str(item["emoji"]),
                                   description=str(item["description"]), moods=list(typical), facet=facet))
    return categories


def _alias(item: dict[str, Any], path: Path, problems: Problems) -> tuple[str, str] | None:
    """`facet: gender=sie` of an alias category, as ("gender", "sie"); the value is checked against
    facets.yml in `validate`."""
    name, _, value = str(item["facet"]).partition("=")
    name, value = name.strip(), value.strip()
    if name not in FILTER_FACETS or not value:
        problems.add(str(path), item["_line"], f"'{item['slug']}': facet must be written name=value with a name of "
                     f"{', '.join(FILTER_FACETS)}, not '{item['facet']}'", "e.g. facet: gender=sie")
        return None
    return name, value


@dataclass
class Facets:
    """The facet vocabularies of facets.yml: facet name -> its values, in the editors' order."""

    values: dict[str, list[FacetValue]]

    def slugs(self, facet: str) -> list[str]:
        return [v.slug for v in self.values.get(facet, [])]


def load_facets(content_dir: Path, problems: Problems) -> Facets:
    """Read facets.yml: one list of values (slug, title, description) per facet."""
    path = content_dir / "facets.yml"
    text = read_text(path, problems)
    if text is None:
        return Facets({name: [] for name in FACETS})
    data, lines = parse_yaml(text, str(path), problems)
    if not isinstance(data, dict):
        if data is not None or not any(p.path == str(path) for p in problems.items):
            problems.add(str(path), 1, "facets.yml must map each facet to a list of values",
                         f"write one key per facet: {', '.join(FACETS)}")
        return Facets({name: [] for name in FACETS})
    values: dict[str, list[FacetValue]] = {}
    for name in data:
        if name not in FACETS:
            problems.add(str(path), lines.get(str(name), 1), f"unknown facet '{name}'",
                         did_you_mean(str(name), FACETS) or f"the facets are {', '.join(FACETS)}")
    for name in FACETS:
        items = data.get(name)
        if not isinstance(items, list) or not items:
            problems.add(str(path), lines.get(name, 1), f"facet '{name}' must be a non-empty list of values",
                         "start each value with '- slug: …'")
            values[name] = []
            continue
        values[name] = [FacetValue(slug=i["slug"], title=str(i["title"]), description=str(i["description"]))
                        for i in _vocabulary_items(items, lines, name, path, MOOD_FIELDS, problems)]
    return Facets(values)


# ---------------------------------------------------------------------------------------------
# names/<slug>.md


def split_sections(body: str, first_line: int, path: str, problems: Problems) -> tuple[dict[str, str], dict[str, int]]:
    """Split the Markdown body into its `## Herkunft` / `## Verwendung` sections."""
    sections: dict[str, list[str]] = {}
    lines: dict[str, int] = {}
    current: str | None = None
    for n, raw in enumerate(body.split("\n"), start=first_line):
        if raw.startswith("## ") or raw.startswith("# "):
            heading = raw.lstrip("#").strip()
            name = SECTIONS.get(heading)
            if name is None or raw.startswith("# "):
                hint = did_you_mean(heading, SECTIONS) or "the body has two sections: '## Herkunft' and '## Verwendung'"
                problems.add(path, n, f"unknown section '{raw.strip()}'", hint)
                current = ""  # its text belongs to the unknown section: not reported again
                continue
            if name in sections:
                problems.add(path, n, f"section '## {heading}' appears twice")
            current = name
            sections[name] = []
            lines[name] = n
        elif current:
            sections[current].append(raw)
        elif current == "":
            continue
        elif raw.strip():
            problems.add(path, n, "text outside a section", "put it under '## Herkunft' or '## Verwendung'")
    return {k: "\n".join(v).strip() for k, v in sections.items()}, lines


def _check_value(key: str, kind: str, value: Any, path: str, line: int, problems: Problems) -> bool:
    if kind == "text":
        if not isinstance(value, str):
            problems.add(path, line, f"{key} must be text, not {_type_name(value)}", "quote the value")
            return False
        if not value.strip():
            problems.add(path, line, f"{key} must not be empty")
            return False
    elif kind == "text_list":
        if not isinstance(value, list):
            problems.add(path, line, f"{key} must be a list, not {_type_name(value)}", f"write it as {key}: [a, b]")
            return False
        bad = [v for v in value if not isinstance(v, str) or not v.strip()]
        if bad:
            problems.add(path, line, f"{key} must contain only non-empty text", "quote numbers and remove empty items")
            return False
    elif kind == "date":
        if not isinstance(value, str) or not DATE_RE.match(value):
            problems.add(path, line, f"{key} must be a date written YYYY-MM-DD, not '{value}'", "e.g. 2026-11-22")
            return False
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            problems.add(path, line, f"{key} '{value}' is not a real calendar date")
            return False
    elif kind == "faq":
        if not isinstance(value, list):
            problems.add(path, line, f"faq must be a list of question/answer pairs, not {_type_name(value)}")
            return False
        for i, item in enumerate(value):
            if not isinstance(item, dict) or set(item) != {"question", "answer"} or not all(
                isinstance(v, str) and v.strip() for v in item.values()
            ):
                problems.add(path, line, f"faq item {i + 1} must have exactly 'question' and 'answer', both text",
                             "write '- question: …' and '  answer: …'")
                return False
    return True


def _type_name(value: Any) -> str:
    return {bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "a mapping",
            type(None): "empty"}.get(type(value), type(value).__name__)


def parse_entry(path: str, text: str) -> tuple[Entry | None, list[Problem]]:
    """Parse one entry file on its own (no cross-entry checks); pure, so it can run in a worker."""
    problems = Problems()
    parts = split_front_matter(text)
    if parts is None:
        problems.add(path, 1, "missing front matter", "the file must start with a line '---', YAML, then '---'")
        return None, problems.items
    front, body, body_line = parts
    plain = _PLAIN.read(front, first_line=2)  # None: not plain, PyYAML reads it (and finds what is wrong)
    data, lines = plain if plain is not None else parse_yaml(front, path, problems, line_offset=1)
    if problems.errors:
        return None, problems.items
    if not isinstance(data, dict):
        problems.add(path, 2, "front matter must be a mapping of keys to values")
        return None, problems.items

    ok = True
    for key in data:
        if key not in ENTRY_FIELDS:
            hint = did_you_mean(str(key), ENTRY_FIELDS) or f"allowed keys: {', '.join(ENTRY_FIELDS)}"
            problems.add(path, lines.get(str(key), 1), f"unknown key '{key}'", hint)
            ok = False
    for key, kind in ENTRY_FIELDS.items():
        if key not in data:
            if key not in OPTIONAL_FIELDS:
                problems.add(path, 1, f"missing required field '{key}'")
                ok = False
            continue
        value = data[key]  # the common cases are checked without a call
        if not ((type(value) is str and value.strip()) if kind == "text" else kind == "text_list" and
                type(value) is list and all(type(v) is str and v.strip() for v in value)):
            ok = _check_value(key, kind, value, path, lines.get(key, 1), problems) and ok

    sections, section_lines = split_sections(body, body_line, path, problems)
    for heading, name in SECTIONS.items():
        if name not in sections:
            problems.add(path, body_line, f"missing section '## {heading}'")
            ok = False
        elif not sections[name]:
            problems.add(path, section_lines[name], f"section '## {heading}' is empty")
            ok = False
    lines.update(section_lines)
    if not ok or problems.errors:
        return None, problems.items

    name = os.path.basename(path)  # `Path(path).stem`, without making a `Path` (a tenth of the cost)
    slug = name[:-3] if name.endswith(".md") and len(name) > 3 else Path(path).stem
    entry = Entry(
        slug=slug, path=path, lines=lines, origin=sections["origin"], usage=sections["usage"],
        related=list(data.get("related", [])),
        **{k: data[k] for k in ENTRY_FIELDS if k != "related" and k in data},
    )
    return entry, problems.items

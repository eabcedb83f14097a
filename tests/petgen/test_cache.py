"""The build cache: unchanged entry files are not parsed again, and a cached build equals a fresh one."""

from __future__ import annotations

import pickle
import re

import hashlib
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest
from click.testing import CliRunner

import petgen.build.files
import petgen.content.kb
import petgen.emit.api
from petgen.build import cache as cache_module
from petgen.build.distpack import SUMMARY_PACK, summary_pack
from petgen.build.pipeline import build
from petgen.cli.main import cli
from petgen.content.kb import _parse_source
from petgen.content.lazy import LazyEntry
from petgen.content.model import Entry
from petgen.content.problems import ContentError
from petgen.emit.api import DATA_FILE
from tests.conftest import BASE_URL, entry_text


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _chunks(cache: Path) -> list[Path]:
    return list(cache.glob("entries-*/*/*.pickle"))


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths parsed in this process (the test corpus is below the worker-pool threshold)."""
    seen: list[str] = []
    original = petgen.content.kb._parse_source

    def spy(path: str, raw: bytes):  # type: ignore[no-untyped-def]
        seen.append(Path(path).name)
        return original(path, raw)

    monkeypatch.setattr(petgen.content.kb, "_parse_source", spy)
    return seen


def test_a_cached_build_parses_nothing_and_writes_the_same_dist(content: Path, tmp_path: Path,
                                                                parsed: list[str]) -> None:
    build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(parsed) == 6
    build(content, tmp_path / "b", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(parsed) == 6  # nothing parsed again
    build(content, tmp_path / "fresh", base_url=BASE_URL)  # no cache at all
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b") == _tree(tmp_path / "fresh")


def test_only_changed_files_are_parsed_again(content: Path, tmp_path: Path, parsed: list[str]) -> None:
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    parsed.clear()
    path = content / "names" / "apfel.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Ein verspielter", "Ein frischer"), encoding="utf-8")
    (content / "names" / "hasi.md").write_text(entry_text("Hasi", "tiere"), encoding="utf-8")
    result = build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert sorted(parsed) == ["apfel.md", "hasi.md"]
    assert result.kb.by_slug["apfel"].meaning.startswith("Ein frischer")
    assert "hasi" in result.kb.by_slug


def test_an_edit_without_a_new_review_date_is_a_warning(content: Path, tmp_path: Path) -> None:
    """The contract: lastReviewed moves with the content (webhook subscribers get entry.updated with it)."""
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    path = content / "names" / "apfel.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "\n", encoding="utf-8")  # the file changed, its content did not
    quiet = build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert not any("lastReviewed is still" in p.message for p in quiet.kb.warnings)
    path.write_text(text.replace("Ein verspielter", "Ein frischer"), encoding="utf-8")
    result = build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    kept = [p for p in result.kb.warnings if "lastReviewed is still" in p.message]
    reviewed = re.search(r"^lastReviewed: (\S+)$", text, re.M)
    assert reviewed is not None and len(kept) == 1 and kept[0].path == str(path)
    assert kept[0].message == f"meaning changed since the last build, but lastReviewed is still {reviewed.group(1)}"
    assert kept[0].line == text.splitlines().index(reviewed.group(0)) + 1
    bumped = text.replace("Ein verspielter", "Ein ganz frischer").replace(reviewed.group(0), "lastReviewed: 2099-01-01")
    path.write_text(bumped, encoding="utf-8")
    again = build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert not any("lastReviewed is still" in p.message for p in again.kb.warnings)


def test_problems_of_a_cached_entry_are_reported_every_time(content: Path, tmp_path: Path,
                                                            parsed: list[str]) -> None:
    path = content / "names" / "apfel.md"
    path.write_text(path.read_text(encoding="utf-8").replace("categories:", "catgories:"), encoding="utf-8")
    messages = []
    for _ in range(2):
        with pytest.raises(ContentError) as caught:
            build(content, tmp_path / "d", cache_dir=tmp_path / "c")
        messages.append([p.format() for p in caught.value.problems])
    assert parsed.count("apfel.md") == 1  # the second run took the problems from the cache
    assert messages[0] == messages[1]
    assert any("unknown key 'catgories'" in m for m in messages[1])
    assert not (tmp_path / "d").exists()


def test_one_content_directory_spelt_two_ways_shares_its_cache(content: Path, tmp_path: Path, parsed: list[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`content`, `./content` and the absolute path are one directory: one cache, and every problem names the
    path as this build was given it."""
    path = content / "names" / "apfel.md"
    path.write_text(path.read_text(encoding="utf-8").replace("categories:", "catgories:"), encoding="utf-8")
    monkeypatch.chdir(content.parent)
    spellings = [content.resolve(), Path(content.name), Path(".") / content.name, content.resolve()]
    reported = []
    for spelling in spellings:
        with pytest.raises(ContentError) as caught:
            build(spelling, tmp_path / "d", cache_dir=tmp_path / "c")
        reported.append({p.path for p in caught.value.problems if "catgories" in p.message})
    assert len(parsed) == 6  # parsed once, by the first build; the others (and the first again) hit the cache
    assert reported == [{str(spellings[0] / "names" / "apfel.md")}, {f"{content.name}/names/apfel.md"},
                        {f"{content.name}/names/apfel.md"}, {str(spellings[0] / "names" / "apfel.md")}]


def test_a_damaged_cache_is_only_a_miss(content: Path, tmp_path: Path, parsed: list[str]) -> None:
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    chunks = list(_chunks(tmp_path / "c"))
    assert chunks
    for chunk in chunks:
        chunk.write_bytes(b"not a pickle")
    parsed.clear()
    result = build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(result.kb.entries) == 6  # a rebuild with nothing changed reads no chunk: light forms only
    build(content, tmp_path / "e", base_url=BASE_URL, cache_dir=tmp_path / "c")  # every page rendered: every chunk
    assert parsed  # the entries whose chunk was read were parsed again; the others were read from their light form
    build(content, tmp_path / "fresh", base_url=BASE_URL)
    assert _tree(tmp_path / "d") == _tree(tmp_path / "fresh") == _tree(tmp_path / "e")


def test_a_chunk_damaged_during_a_build_is_parsed_from_its_file(content: Path, tmp_path: Path,
                                                                 parsed: list[str]) -> None:
    """An entry loaded from its light form reads the rest of its chunk only when a stage needs it: if the
    chunk was damaged in between, the entry is parsed again from its file, the same entry."""
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    parsed.clear()
    kb = petgen.content.kb.load_knowledge_base(content, base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert parsed == [] and all(isinstance(e, LazyEntry) for e in kb.entries)
    for chunk in _chunks(tmp_path / "c"):
        chunk.write_bytes(b"not a pickle")
    assert [e.faq for e in kb.entries] and len(parsed) == 6
    fresh = petgen.content.kb.load_knowledge_base(content, base_url=BASE_URL)
    assert kb.entries == fresh.entries


def test_results_of_other_code_are_never_used(content: Path, tmp_path: Path, parsed: list[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    old = {p.name for p in (tmp_path / "c").glob("entries-*")}
    monkeypatch.setattr(petgen.build.files, "fingerprint", lambda *packages: "0123456789abcdef")
    parsed.clear()
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(parsed) == 6
    assert {p.name for p in (tmp_path / "c").glob("entries-*")} == {"entries-0123456789abcdef"} != old


@pytest.mark.parametrize("source", ["content/validate.py", "content/model.py", "content/scaffold.py", "emit/site.py"])
def test_the_fingerprint_covers_every_petgen_source(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to any rule (placeholders turned from warnings into errors in validate.py, say) gives the
    cache a new directory, so an entry checked by the old rules can never hide a new error."""
    before = petgen.build.files.fingerprint.__wrapped__()
    read_bytes = Path.read_bytes

    def edited(path: Path) -> bytes:
        data = read_bytes(path)
        return data + b"\n# edited\n" if path.as_posix().endswith(f"/petgen/{source}") else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    assert petgen.build.files.fingerprint.__wrapped__() != before


def test_chunks_of_deleted_entries_are_removed(content: Path, tmp_path: Path) -> None:
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    (content / "names" / "hasi.md").write_text(entry_text("Hasi", "tiere"), encoding="utf-8")
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(list(_chunks(tmp_path / "c"))) == 2
    (content / "names" / "hasi.md").unlink()
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(list(_chunks(tmp_path / "c"))) == 1


def test_many_chunks_are_compacted_into_one(content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_CHUNKS", 3)
    counts = []
    for title in ("Hasi", "Mausi", "Spatzi", "Bärli"):  # each build after the first adds a chunk
        (content / "names" / f"{title.lower().replace('ä', 'ae')}.md").write_text(entry_text(title, "tiere"),
                                                                                 encoding="utf-8")
        build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
        counts.append(len(list(_chunks(tmp_path / "c"))))
    assert counts == [1, 2, 3, 1]


def test_chunks_mostly_unused_are_compacted(content: Path, tmp_path: Path, parsed: list[str]) -> None:
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    for name in ("apfel", "schnucki", "ohrwurm"):  # half of the first chunk's six entries change
        path = content / "names" / f"{name}.md"
        path.write_text(path.read_text(encoding="utf-8") + "\nNoch ein Satz.\n", encoding="utf-8")
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(list(_chunks(tmp_path / "c"))) == 1  # 9 stored for 6 in use: rewritten as one
    parsed.clear()
    result = build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert parsed == [] and len(result.kb.entries) == 6


def test_cli_no_cache_writes_no_cache(content: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["build", "--content", str(content), "--out", str(tmp_path / "d"),
                                 "--cache-dir", str(tmp_path / "c"), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "c").exists()
    result = runner.invoke(cli, ["build", "--content", str(content), "--out", str(tmp_path / "d"),
                                 "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert list(_chunks(tmp_path / "c"))


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The slugs whose pages were rendered (not taken from the page cache) in this process."""
    from petgen.emit.site import PageRenderer

    seen: list[str] = []
    original = PageRenderer.render

    def spy(self, entry):  # type: ignore[no-untyped-def]
        seen.append(entry.slug)
        return original(self, entry)

    monkeypatch.setattr(PageRenderer, "render", spy)
    return seen


def test_pages_are_rendered_again_only_when_they_would_change(content: Path, tmp_path: Path,
                                                              rendered: list[str]) -> None:
    hasi = entry_text("Hasi", "tiere", "zaertlich", "partner", "sie").replace("datePublished:", "related: [apfel]\ndatePublished:")
    (content / "names" / "hasi.md").write_text(hasi, encoding="utf-8")
    build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(rendered) == 7
    rendered.clear()
    build(content, tmp_path / "b", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert rendered == [] and _tree(tmp_path / "a") == _tree(tmp_path / "b")

    apfel = content / "names" / "apfel.md"  # a new title: its page, and the page linking to it
    apfel.write_text(apfel.read_text(encoding="utf-8").replace("title: Apfel", "title: APFEL"), encoding="utf-8")
    build(content, tmp_path / "c2", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert sorted(rendered) == ["apfel", "hasi"]
    assert ">APFEL</a>" in (tmp_path / "c2" / "names" / "hasi" / "index.html").read_text(encoding="utf-8")

    rendered.clear()  # another base URL changes every page
    build(content, tmp_path / "d", base_url="https://elsewhere.example", cache_dir=tmp_path / "c")
    assert len(rendered) == 7
    build(content, tmp_path / "fresh", base_url="https://elsewhere.example")
    assert _tree(tmp_path / "d") == _tree(tmp_path / "fresh")


def test_a_damaged_page_cache_is_rendered_again(content: Path, tmp_path: Path, rendered: list[str]) -> None:
    build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=tmp_path / "c")
    pages = list((tmp_path / "c").glob("entries-*/*/pages-*/*.pickle"))
    assert pages
    for page in pages:
        page.write_bytes(b"\x80garbage")
    rendered.clear()
    build(content, tmp_path / "b", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(rendered) == 6 and _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_a_local_and_a_production_build_keep_their_pages(content: Path, tmp_path: Path, rendered: list[str]) -> None:
    for base_url in (BASE_URL, "https://kosenamen.example", BASE_URL, "https://kosenamen.example"):
        build(content, tmp_path / "d", base_url=base_url, cache_dir=tmp_path / "c")
    assert len(rendered) == 12  # six pages for each base URL, once


@pytest.mark.parametrize("package", ["cmarkgfm", "jinja2", "markupsafe", "orjson"])
def test_the_page_context_names_the_installed_versions_of_the_renderers(package: str) -> None:
    from importlib.metadata import version

    from petgen.emit.site import installed_version

    assert installed_version(package) == version(package)


def _memo(cache: Path, name: str) -> Path:
    found = list(cache.glob(f"entries-*/*/{name}.memo"))
    assert len(found) == 1
    return found[0]


def test_summaries_are_kept_per_entry_file_and_made_again_only_for_changed_ones(
        content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "made"  # a file: written wherever the build makes the summaries (it may fork)
    original = petgen.emit.api.encoded_summary

    def spy(entry, *args, **kwargs):  # type: ignore[no-untyped-def]
        with log.open("a") as out:
            out.write(entry.slug + "\n")
        return original(entry, *args, **kwargs)

    def made() -> list[str]:
        found = log.read_text().split() if log.exists() else []
        log.unlink(missing_ok=True)
        return found

    monkeypatch.setattr(petgen.emit.api, "encoded_summary", spy)
    build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert len(made()) == 6
    path = content / "names" / "apfel.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Ein verspielter", "Ein frischer"), encoding="utf-8")
    build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert made() == ["apfel"]
    build(content, tmp_path / "a", base_url="https://kosenamen.example", cache_dir=tmp_path / "c")
    assert len(made()) == 6  # another site: its summaries hold other URLs
    build(content, tmp_path / "fresh", base_url="https://kosenamen.example")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "fresh")


def test_a_damaged_memo_is_only_a_miss(content: Path, tmp_path: Path) -> None:
    build(content, tmp_path / "a", base_url=BASE_URL, cache_dir=tmp_path / "c")
    _memo(tmp_path / "c", "summaries").write_bytes(b"not a pickle")
    build(content, tmp_path / "b", base_url=BASE_URL, cache_dir=tmp_path / "c")
    build(content, tmp_path / "fresh", base_url=BASE_URL)
    assert _tree(tmp_path / "b") == _tree(tmp_path / "fresh")


def test_the_summary_pack_is_the_one_the_runtime_would_make_from_the_data_file(dist: Path) -> None:
    """The build writes `_data/summaries.pack` from the list filters it made anyway; the runtime makes it from
    `_data/index.json` when it is missing: both must be the same bytes."""
    data = orjson.loads((dist / DATA_FILE).read_bytes())
    assert (dist / SUMMARY_PACK).read_bytes() == summary_pack(data)


def test_an_entry_memo_writes_only_what_a_build_made_and_compacts_what_is_unused(tmp_path: Path) -> None:
    made: list[str] = []

    def run(keys: list[str]) -> list[str]:
        memo = cache_module.EntryMemo(tmp_path, "test", "context")
        values = memo.get_all(list(keys), lambda i: made.append(keys[i]) or f"value of {keys[i]}")
        memo.save()
        return values

    keys = [f"k{i}" for i in range(20)]
    assert run(keys) == [f"value of {k}" for k in keys] and len(made) == 20
    base = (tmp_path / "test.memo").read_bytes()
    made.clear()
    assert run(keys[:19] + ["new"]) == [f"value of {k}" for k in keys[:19] + ["new"]] and made == ["new"]
    assert (tmp_path / "test.memo").read_bytes() == base  # only the new result written, beside it
    assert cache_module.pickle.loads((tmp_path / "test.memo-new").read_bytes()) == ("context", {"new": "value of new"})
    made.clear()
    assert run(keys[:19] + ["new"]) == [f"value of {k}" for k in keys[:19] + ["new"]] and made == []
    assert run(keys[:10] + ["new"]) and made == []  # half unused: one new memo of the results in use
    assert not (tmp_path / "test.memo-new").exists()
    stored = cache_module.pickle.loads((tmp_path / "test.memo").read_bytes())
    assert stored == ("context", {k: f"value of {k}" for k in keys[:10] + ["new"]})
    assert cache_module.EntryMemo(tmp_path, "test", "another context").found == {}


def test_a_lazy_entry_reads_its_chunk_only_when_needed_and_pickles_as_an_entry(content: Path, tmp_path: Path) -> None:
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    kb = petgen.content.kb.load_knowledge_base(content, base_url=BASE_URL, cache_dir=tmp_path / "c")
    fresh = petgen.content.kb.load_knowledge_base(content, base_url=BASE_URL)
    entry, plain = kb.entries[0], fresh.entries[0]
    assert isinstance(entry, LazyEntry) and "origin" not in vars(entry)  # only the light fields are loaded
    assert entry.title == plain.title and "origin" not in vars(entry)
    copy = cache_module.pickle.loads(cache_module.pickle.dumps(entry))
    assert type(copy) is type(plain) and vars(copy) == vars(plain)  # pickled whole, as the plain entry
    assert entry.origin == plain.origin and entry == plain and plain == entry


def test_a_lazy_entry_reads_its_column_fields_apart_from_its_chunk(content: Path, tmp_path: Path,
                                                                   parsed: list[str]) -> None:
    """The fields beyond the light form (the search terms, the meaning, the taxonomy, …) are kept beside it, field by
    field: each read when first needed, from its own column (the chunk stays unread, the other columns too), or from
    the chunk if that file is damaged; the same values either way."""
    build(content, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    fresh = petgen.content.kb.load_knowledge_base(content, base_url=BASE_URL)
    parsed.clear()
    kb = petgen.content.kb.load_knowledge_base(content, base_url=BASE_URL, cache_dir=tmp_path / "c")
    assert all("terms" not in vars(e) and "meaning" not in vars(e) for e in kb.entries)
    for chunk in _chunks(tmp_path / "c"):
        chunk.write_bytes(b"not a pickle")  # read it and the entries are parsed again
    assert [e.terms for e in kb.entries] == [e.terms for e in fresh.entries] and parsed == []
    assert all("meaning" not in vars(e) for e in kb.entries)  # another column: not read with this one
    assert [e.meaning for e in kb.entries] == [e.meaning for e in fresh.entries] and parsed == []
    assert [e.genderNote for e in kb.entries] == [e.genderNote for e in fresh.entries] and parsed == []  # a default
    assert all("origin" not in vars(e) for e in kb.entries)  # the rest still to load
    build(content, tmp_path / "e", base_url=BASE_URL, cache_dir=tmp_path / "c2")
    for columns in (tmp_path / "c2").glob("entries-*/*/*.columns"):
        columns.write_bytes(b"not a pickle")
    parsed.clear()
    kb = petgen.content.kb.load_knowledge_base(content, base_url=BASE_URL, cache_dir=tmp_path / "c2")
    assert [e.terms for e in kb.entries] == [e.terms for e in fresh.entries] and parsed == []  # from the chunks
    assert [e.moods for e in kb.entries] == [e.moods for e in fresh.entries]


def test_a_lazy_entry_loads_a_field_with_a_default_when_it_is_read_first(bundled: Path, tmp_path: Path) -> None:
    """A field with a default that the light form leaves out (`caution`, `phrases`) reads as the entry's value, not
    as the default, even when it is the first field read of a lazy entry."""
    build(bundled, tmp_path / "d", base_url=BASE_URL, cache_dir=tmp_path / "c")
    fresh = petgen.content.kb.load_knowledge_base(bundled, base_url=BASE_URL)
    for name in ("caution", "phrases"):
        kb = petgen.content.kb.load_knowledge_base(bundled, base_url=BASE_URL, cache_dir=tmp_path / "c")
        assert all(isinstance(e, LazyEntry) and name not in vars(e) for e in kb.entries)
        assert [getattr(e, name) for e in kb.entries] == [getattr(e, name) for e in fresh.entries]
    assert any(e.caution for e in fresh.entries) and all(e.phrases for e in fresh.entries)


def test_entries_pickle_as_their_field_values_and_load_the_same(content: Path) -> None:
    """Entries go between the build's processes pickled as the values of their fields in order: they load as
    equal entries with every field, a lazy entry as the whole plain entry, and one with an attribute of its own
    the usual way, that attribute kept."""
    path = next((content / "names").glob("*.md"))
    entry, problems = _parse_source(str(path), path.read_bytes())
    assert entry is not None and problems == []
    blob = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(blob)
    assert type(back) is Entry and back == entry and vars(back) == vars(entry)
    assert b"name_keys" not in blob and b"phrases" not in blob  # values only, no field names
    lazy = LazyEntry.__new__(LazyEntry)
    lazy.__dict__ = {**{k: v for k, v in vars(entry).items() if k != "origin"},
                     "_source": (SimpleNamespace(entry=lambda key: entry), "its key")}
    assert type(loaded := pickle.loads(pickle.dumps(lazy))) is Entry and vars(loaded) == vars(entry)
    entry.extra = "kept"  # type: ignore[attr-defined]
    again = pickle.loads(pickle.dumps(entry))
    assert again.extra == "kept" and again == entry  # type: ignore[attr-defined]


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("parsed again")


def test_the_content_settings_are_loaded_once_while_their_files_are_unchanged(
        content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """site.yml, the taxonomy, the lexicon and the bots are parsed and checked again only when one of them changes;
    what their checks found is reported from the cache as when they were parsed."""
    cache = tmp_path / "cache"
    first = petgen.content.kb.load_knowledge_base(content, cache_dir=cache)
    with monkeypatch.context() as patched:
        for loader in ("load_site", "load_moods", "load_categories", "load_facets", "load_lexicon", "load_bots"):
            patched.setattr(petgen.content.kb, loader, _refuse)
        again = petgen.content.kb.load_knowledge_base(content, cache_dir=cache, base_url="https://other.example")
    assert (again.site.name, again.categories, again.moods, again.facets, again.lexicon, again.bots) == (
        first.site.name, first.categories, first.moods, first.facets, first.lexicon, first.bots)
    assert again.site.base_url == "https://other.example" and again.source_hash == first.source_hash

    site = content / "site.yml"
    site.write_text(site.read_text(encoding="utf-8").replace("name: Kosenamen API", "name: Kosenamen Probe"),
                    encoding="utf-8")
    assert petgen.content.kb.load_knowledge_base(content, cache_dir=cache).site.name == "Kosenamen Probe"

    site.write_text(site.read_text(encoding="utf-8").replace("site: kosenamen\n", ""), encoding="utf-8")
    with pytest.raises(ContentError) as parsed:
        petgen.content.kb.load_knowledge_base(content, cache_dir=cache)
    with monkeypatch.context() as patched, pytest.raises(ContentError) as remembered:
        patched.setattr(petgen.content.kb, "load_site", _refuse)
        petgen.content.kb.load_knowledge_base(content, cache_dir=cache)
    assert [p.format() for p in remembered.value.problems] == [p.format() for p in parsed.value.problems]
    assert any(p.path.endswith("site.yml") for p in parsed.value.problems)


def test_damaged_remembered_settings_are_parsed_again(content: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = petgen.content.kb.load_knowledge_base(content, cache_dir=cache)
    stored, = cache.rglob(f"{petgen.content.kb.SETTINGS}.memo")
    stored.write_bytes(b"\x80 not a pickle")
    assert petgen.content.kb.load_knowledge_base(content, cache_dir=cache).categories == first.categories
    assert pickle.loads(stored.read_bytes())[0]  # written again

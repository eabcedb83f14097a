"""Incremental builds (petgen/build/incremental.py): after any sequence of edits, additions, renames and deletions,
the dist an incremental build leaves is the same, file for file and byte for byte, as a clean build's."""

from __future__ import annotations

import hashlib
import json
import marshal
import multiprocessing
import os
import random
import re
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest

import petgen.build.cache
import petgen.build.dist
import petgen.build.files
import petgen.build.forked
import petgen.build.incremental
import petgen.build.pipeline
import petgen.content.phrases
import petgen.emit.browse
import petgen.emit.guide
import petgen.emit.listpage
import petgen.emit.llms
import petgen.emit.site
from petgen.build.dist import MANIFEST
from petgen.build.files import content_root, load_stamps
from petgen.build.incremental import Layered, Marshalled, load_state, spare_path
from petgen.build.pipeline import build
from petgen.build.routelayout import LastRules, Layout
from petgen.build.routeparts import Merged, RouteParts
from petgen.content.problems import ContentError
from petgen.content.text import slugify
from petgen.emit.browse import Browse
from petgen.emit.entries import entry_keys
from petgen.emit.listindex import ListIndex
from petgen.emit.site import PageRenderer
from petgen.emit.templating import environment as template
from runtime.builds.files import BuildDir
from tests.conftest import BASE_URL, entry_text

RELATED = re.compile(r"^related: \[(.*)\]$", re.MULTILINE)


def tree(root: Path) -> dict[str, str]:
    """Every directory and file under `root`, files with a hash of their bytes."""
    found: dict[str, str] = {}
    for parent, dirs, files in os.walk(root):
        rel = os.path.relpath(parent, root)
        found.update({os.path.join(rel, d) + "/": "dir" for d in dirs})
        for name in files:
            found[os.path.join(rel, name)] = hashlib.sha256(Path(parent, name).read_bytes()).hexdigest()
    return found


class Editor:
    """Seeded random changes to a copy of the bundled content that keep it valid."""

    def __init__(self, content: Path, seed: int) -> None:
        self.names = content / "names"
        self.random = random.Random(seed)
        self.added = 0

    def slugs(self) -> list[str]:
        return sorted(p.stem for p in self.names.glob("*.md"))

    def text(self, slug: str) -> str:
        return (self.names / f"{slug}.md").read_text(encoding="utf-8")

    def write(self, slug: str, text: str) -> None:
        (self.names / f"{slug}.md").write_text(text, encoding="utf-8")

    def relink(self, old: str, new: str | None) -> None:
        """Point every `related` link to `old` at `new` (None: drop it)."""
        for path in self.names.glob("*.md"):
            text = path.read_text(encoding="utf-8")
            match = RELATED.search(text)
            if not match:
                continue
            links = [s.strip() for s in match.group(1).split(",") if s.strip()]
            if old not in links:
                continue
            links = [new if s == old else s for s in links if s != old or new]
            path.write_text(text[:match.start()] + f"related: [{', '.join(links)}]" + text[match.end():],
                            encoding="utf-8")

    def step(self) -> str:
        slug = self.random.choice(self.slugs())
        kind = self.random.choice(["meaning", "title", "moods", "categories", "facets", "related", "add", "rename",
                                   "reletter", "delete"])
        text = self.text(slug)
        if kind == "meaning":
            self.write(slug, re.sub(r'^meaning: ("?)', r"meaning: \1Neu gesagt, ", text, count=1, flags=re.MULTILINE))
        elif kind == "title":  # the same slug, another title on its page, in the lists and in related links
            self.write(slug, re.sub(r'^title: ("?)(.*?)("?)$', r"title: \1\2!\3", text, count=1, flags=re.MULTILINE))
        elif kind == "moods":  # leaves some lists, joins others
            mood = self.random.choice(["frech", "romantisch", "verspielt", "nostalgisch"])
            self.write(slug, re.sub(r"^moods: .*$", f"moods: [{mood}]", text, count=1, flags=re.MULTILINE))
        elif kind == "categories":  # moves between category pages, category resources and their JSON lists
            category = self.random.choice(["klassiker", "tiere", "suesses", "natur", "lustig"])
            self.write(slug, re.sub(r"^categories: .*$", f"categories: [{category}]", text, count=1, flags=re.MULTILINE))
        elif kind == "facets":  # moves between the region and relationship pages (a region alias category too)
            key, value = self.random.choice([("region", "[bayern-oesterreich]"), ("region", "[ueberregional]"),
                                             ("relationship", "[freunde]"), ("relationship", "[partner, kind]")])
            self.write(slug, re.sub(rf"^{key}: .*$", f"{key}: {value}", text, count=1, flags=re.MULTILINE))
        elif kind == "related":  # a link to another entry of its gender: its page names that entry, which cites it
            gender = re.search(r"^gender: (\S+)", text, re.MULTILINE)
            links = [s.strip() for s in (RELATED.search(text) or re.match("()", "")).group(1).split(",") if s.strip()]
            others = [other for other in self.slugs() if other != slug and other not in links and gender is not None
                      and re.search(rf"^gender: {gender.group(1)}$", self.text(other), re.MULTILINE)]
            if others and RELATED.search(text):
                links.append(self.random.choice(others))
                self.write(slug, RELATED.sub(f"related: [{', '.join(links)}]", text, count=1))
        elif kind == "add":
            self.added += 1
            title = f"Probename{self.added}"
            self.write(title.lower(), entry_text(title, "tiere", "verspielt"))
        elif kind == "rename":  # a new title, so a new slug: moves in every list
            title = re.search(r'^title: "?(.*?)"?$', text, re.MULTILINE).group(1) + " Neu"  # type: ignore[union-attr]
            (self.names / f"{slug}.md").unlink()
            self.write(slugify(title), re.sub(r"^title: .*$", f"title: {title}", text, count=1, flags=re.MULTILINE))
            self.relink(slug, slugify(title))
        elif kind == "reletter":  # a title with another first letter: leaves its A–Z page for another
            title = "Xaver " + re.search(r'^title: "?(.*?)"?$', text, re.MULTILINE).group(1)  # type: ignore[union-attr]
            (self.names / f"{slug}.md").unlink()
            self.write(slugify(title), re.sub(r"^title: .*$", f"title: {title}", text, count=1, flags=re.MULTILINE))
            self.relink(slug, slugify(title))
        else:
            (self.names / f"{slug}.md").unlink()
            self.relink(slug, None)
        return f"{kind} {slug}"


@pytest.mark.parametrize("seed,cores,slow_child", [(1, None, False), (2, None, False), (3, 1, False), (4, None, True)])
def test_incremental_builds_equal_clean_builds(bundled: Path, tmp_path: Path, seed: int, cores: int | None,
                                               slow_child: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """With one core the incremental build writes everything in the build process (else part in a forked child).
    `_headers` and `_redirects` are patched from the last build's (`Layout.patch`), but for the first edit after a
    full build. With a child slower than the build process and no patching, the build process makes what the files
    listing every route need of its own routes while it waits (`RouteParts.add_some`)."""
    if cores is not None:
        monkeypatch.setattr(os, "cpu_count", lambda: cores)
    ahead: list[int] = []
    patched: list[bool] = []
    patch = LastRules.patch

    def patching(self: LastRules, *args: Any) -> tuple[bytes, bytes, Layout] | None:
        found = None if slow_child else patch(self, *args)
        patched.append(found is not None)
        return found

    monkeypatch.setattr(LastRules, "patch", patching)
    if slow_child:
        child_part, add, merge = petgen.build.pipeline._emit_child_part, RouteParts.add_some, RouteParts.merged

        def slowly(*args: object) -> None:
            time.sleep(0.5)
            child_part(*args)  # type: ignore[arg-type]

        def counted(self: RouteParts, routes: dict, count: int = 2000) -> bool:
            more = add(self, routes, count=5)  # a part at a time
            if not more:
                ahead.append(len(self.hashes))  # all of them made ahead
            return more

        def merged(self: RouteParts, routes: dict) -> Merged | None:
            found = merge(self, routes)
            if self.hashes:  # some were made ahead
                ahead.append(found is not None)
            return found

        monkeypatch.setattr(petgen.build.pipeline, "_emit_child_part", slowly)
        monkeypatch.setattr(RouteParts, "add_some", counted)
        monkeypatch.setattr(RouteParts, "merged", merged)
    editor = Editor(bundled, seed)
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    for number in range(5):
        done = [editor.step() for _ in range(1 + number % 3)]
        result = build(bundled, out, base_url=BASE_URL, cache_dir=cache)
        assert result.changed is not None, f"step {number} ({done}) was not built incrementally"
        clean = tmp_path / f"clean{number}"
        build(bundled, clean, base_url=BASE_URL)
        incremental, expected = tree(out), tree(clean)
        assert incremental.keys() == expected.keys(), (done, sorted(incremental.keys() ^ expected.keys())[:10])
        assert incremental == expected, (done, [k for k in expected if incremental[k] != expected[k]][:10])
    assert len(ahead) == (10 if slow_child else 0) and all(ahead)  # made ahead, and merged
    assert len(patched) == 5 and not patched[0] and (any(patched) != slow_child)


@pytest.mark.parametrize("origin,signed", [(None, False), ("https://runtime.example", False),
                                           ("https://runtime.example", True)])
def test_route_parts_made_ahead_give_the_same_files(dist: Path, tmp_path: Path, origin: str | None,
                                                    signed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest, `_routes.pack`, `_redirects` and `_headers` are the same bytes with parts of some routes made
    ahead: merged with the rest (those of the pages, as an incremental build's own, all or some), or used route by
    route where they cannot be (the list pages' queries among them, a route written again since they were made)."""
    routes = orjson.loads((dist / MANIFEST).read_bytes())["routes"]
    extra = {"version": 1, **({"runtime_origin": origin} if origin else {}),
             **({"signed_proxies": True} if signed else {})}
    merged = []

    def files(ahead: str) -> dict[str, str]:
        writer = petgen.build.dist.DistWriter(tmp_path / ahead)
        writer.root.mkdir()
        writer.routes = {route: dict(info) for route, info in reversed(routes.items())}
        parts = RouteParts(origin)
        pages = {route: info for route, info in writer.routes.items() if not route.startswith("/api/")}
        if ahead == "pages":
            parts.add(pages)
        elif ahead == "some pages":  # the child was done before all were made
            assert parts.add_some(pages, count=50) and parts.add_some(pages, count=50)
        elif ahead != "none":
            early = dict(list(writer.routes.items())[::2])  # every other route, the list pages' queries among them
            if ahead == "moved":
                early = {route: info for route, info in early.items() if "?" not in route}
                moved = next(route for route, info in early.items() if info["hashed"])
                early[moved] = {**early[moved], "file": "moved.json"}  # another record than the writer's
            parts.add(early)
        merged.append(parts.merged(writer.routes) is not None)
        writer.write_manifest(extra, parts)
        return tree(writer.root)

    expected = files("none")
    assert len(expected) == 4
    for ahead in ("pages", "some pages", "queries", "moved"):
        assert files(ahead) == expected, ahead
    assert merged == [False, True, True, False, False]
    # A full build's workers, idle by then, render `_redirects` and `_headers` from the manifest they are sent.
    pooled = petgen.build.dist.DistWriter(tmp_path / "pool")
    pooled.root.mkdir()
    pooled.routes = {route: dict(info) for route, info in reversed(routes.items())}
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        submitted = []
        real_submit = pool.submit
        pool.submit = lambda *args: submitted.append(args[1]) or real_submit(*args)  # type: ignore[method-assign]
        monkeypatch.setattr(petgen.build.dist, "RULES_APART", 1)
        pooled.write_manifest(extra, RouteParts(origin), pool)
    assert sorted(submitted) == ["_headers", "_redirects"]
    assert tree(pooled.root) == expected


def test_an_edited_entry_rewrites_only_what_shows_it(bundled: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "dist", tmp_path / "cache"
    path = bundled / "names" / "baerchen.md"
    text = path.read_text(encoding="utf-8")
    changed = []
    for number in range(4):  # the first two builds bring the live tree and the spare up to date
        path.write_text(text.replace("meaning: ", f"meaning: Fassung {number}, "), encoding="utf-8")
        changed.append(build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed)
    written = changed[-1]
    assert written is not None
    # Its JSON and page, the list pages and search shards it is in, the data, llms, sitemap and manifest files:
    # each at most twice (the spare catches up with the build before), each old one removed.
    assert written < 150, changed
    assert written < tree(out).__len__() / 10


def test_a_change_everywhere_is_a_full_build_and_the_next_one_is_incremental_again(bundled: Path,
                                                                                   tmp_path: Path) -> None:
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    categories = bundled / "categories.yml"
    categories.write_text(categories.read_text(encoding="utf-8").replace("title: Tiere", "title: Tierisch"),
                          encoding="utf-8")
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is None  # every page shows the themes
    Editor(bundled, 3).step()
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
    build(bundled, tmp_path / "clean", base_url=BASE_URL)
    assert tree(out) == tree(tmp_path / "clean")


def test_many_changed_entry_files_are_a_full_build(bundled: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted by their files before the child is forked (the pages' keys are made after): more than a tenth of them
    changed (or INCREMENTAL_ENTRIES) is a full build; and the entries linking to a changed title are rendered too."""
    monkeypatch.setattr(petgen.build.pipeline, "INCREMENTAL_ENTRIES", 3)
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    names = sorted((bundled / "names").glob("*.md"))
    for path in names[:3]:
        path.write_text(path.read_text(encoding="utf-8").replace("meaning: ", "meaning: Neu, ", 1), encoding="utf-8")
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
    linked = next(p for p in names if "related: [" in p.read_text(encoding="utf-8"))
    target = re.search(r"related: \[([^,\]]+)", linked.read_text(encoding="utf-8"))[1].strip()  # type: ignore[index]
    path = bundled / "names" / f"{target}.md"
    title = re.search(r"^title: (.*)$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)[1]  # type: ignore[index]
    path.write_text(path.read_text(encoding="utf-8").replace(f"title: {title}", f"title: {title.upper()}", 1),
                    encoding="utf-8")
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
    assert f">{title.upper()}</a>" in (out / "names" / linked.stem / "index.html").read_text(encoding="utf-8")
    build(bundled, tmp_path / "clean", base_url=BASE_URL)
    assert tree(out) == tree(tmp_path / "clean")
    for path in names[:len(names) // 10 + 1]:
        path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is None


def test_a_tree_a_runtime_serves_from_is_never_rewritten(bundled: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A runtime still holding the spare (the build before the live one) keeps reading exactly that build: the
    next build clones the live tree instead of rewriting the spare."""
    monkeypatch.setattr(petgen.build.incremental, "LOCK_WAIT", 0.2)
    out, cache = tmp_path / "dist", tmp_path / "cache"
    editor = Editor(bundled, 4)
    for _ in range(2):
        build(bundled, out, base_url=BASE_URL, cache_dir=cache)
        editor.step()
    spare = spare_path(out)
    held = BuildDir(spare)  # as a runtime that has not reloaded yet
    before = held.read(MANIFEST)
    result = build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    assert result.changed is not None
    assert held.read(MANIFEST) == before
    del held
    build(bundled, tmp_path / "clean", base_url=BASE_URL)
    assert tree(out) == tree(tmp_path / "clean")


def test_without_a_cache_no_spare_is_kept(bundled: Path, tmp_path: Path) -> None:
    out = tmp_path / "dist"
    for _ in range(2):
        assert build(bundled, out, base_url=BASE_URL).changed is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content", "dist"]


def test_list_pages_and_the_search_index_are_rendered_again_only_when_what_they_show_changed(
        bundled: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "dist", tmp_path / "cache"
    path = bundled / "names" / "baerchen.md"
    first = build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    assert first.units > 100 and first.reused == 0  # a full build renders every unit
    other = bundled / "names" / "albi.md"  # not the OpenAPI document's example (baerchen), which /docs shows
    text = other.read_text(encoding="utf-8")  # the usage: on the entry's own page only, in no list, card or index
    other.write_text(text.replace("## Verwendung\n\n", "## Verwendung\n\nAuch so. ", 1), encoding="utf-8")
    result = build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    assert result.changed is not None and result.reused == result.units == first.units
    path.write_text(path.read_text(encoding="utf-8").replace("meaning: ", "meaning: Neu gesagt, ", 1),
                    encoding="utf-8")  # the meaning: in its cards, its JSON summaries and the search index
    result = build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    rendered = result.units - result.reused
    dist = BuildDir(out)
    files = orjson.loads(dist.read("search/index.json"))["documents"]["files"]
    assert any(b"Neu gesagt" in dist.read(file.lstrip("/")) for file in files)  # the search's document files
    # The lists that show it: its themes, moods and facet values (site and JSON, first pages), the category×mood
    # pairs, the unfiltered list, its category resources, and the index. Nothing else.
    assert 2 < rendered < 60, rendered
    build(bundled, tmp_path / "clean", base_url=BASE_URL)
    assert tree(out) == tree(tmp_path / "clean")


def test_entry_files_are_hashed_again_when_their_stamp_changed(bundled: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry file whose size, modification and change times and inode are as the last load found them is
    not read again; any change to the file changes one of them (the change time even when the modification time
    is set back). A file changed within RACY_NS of a load is not stamped (its key is kept with an empty stamp): it is
    read by the next load too."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    old = time.time_ns() - 3600 * 10**9
    for path in (bundled / "names").glob("*.md"):
        os.utime(path, ns=(old, old))
    monkeypatch.setattr(petgen.build.files, "RACY_NS", 0)
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    stamps = load_stamps(content_root(cache, bundled))
    assert sorted(stamps) == sorted(f"names/{p.name}" for p in (bundled / "names").glob("*.md"))

    path = bundled / "names" / "baerchen.md"
    text = path.read_text(encoding="utf-8")
    same_size = text.replace("meaning: ", "meaning: X", 1).replace("Kaum ein ", "Kaum ein", 1)  # a byte in, one out
    assert len(same_size.encode()) == len(text.encode()) and same_size != text
    path.write_text(same_size, encoding="utf-8")
    os.utime(path, ns=(old, old))  # the modification time set back: only the change time tells
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    (name,) = (out / "api" / "names").glob("baerchen.*.json")
    assert json.loads(name.read_bytes())["meaning"].startswith("X")
    assert load_stamps(content_root(cache, bundled))["names/baerchen.md"] != stamps["names/baerchen.md"]
    build(bundled, tmp_path / "clean", base_url=BASE_URL)
    assert tree(out) == tree(tmp_path / "clean")

    monkeypatch.setattr(petgen.build.files, "RACY_NS", 10 * 10**9)
    path.write_text(text, encoding="utf-8")
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    assert load_stamps(content_root(cache, bundled))["names/baerchen.md"][0] == ()  # no stamp: read again next time
    (name,) = (out / "api" / "names").glob("baerchen.*.json")
    assert not json.loads(name.read_bytes())["meaning"].startswith("X")


def test_a_build_that_fails_while_it_changes_the_spare_leaves_it_unknown(bundled: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The spare is marked as changing before it is written to; the next build does not trust it (it clones
    the live tree) and still equals a clean build."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    for _ in range(2):
        build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    assert petgen.build.incremental.load_state(cache, out).spare is not None  # type: ignore[union-attr]
    path = bundled / "names" / "baerchen.md"
    path.write_text(path.read_text(encoding="utf-8").replace("meaning: ", "meaning: Neu, ", 1), encoding="utf-8")

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("interrupted")

    monkeypatch.setattr(petgen.build.pipeline, "emit_manifest", fail)
    with pytest.raises(RuntimeError):
        build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    assert petgen.build.incremental.load_state(cache, out).spare is None  # type: ignore[union-attr]
    monkeypatch.undo()
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
    build(bundled, tmp_path / "clean", base_url=BASE_URL)
    assert tree(out) == tree(tmp_path / "clean")


def test_the_spare_stays_recyclable_when_the_manifest_is_kept(bundled: Path, tmp_path: Path) -> None:
    """A rebuild that changes nothing keeps the manifest's bytes (a hard link to the spare's file) but stamps it
    with the time of the swap: the spare's own stamp must not move with it, or every later build clones."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    for _ in range(3):
        build(bundled, out, base_url=BASE_URL, cache_dir=cache)
        state = petgen.build.incremental.load_state(cache, out)
        assert state is not None
        if state.spare is not None:
            assert petgen.build.dist.manifest_stamp(spare_path(out)) == state.spare_stamp
    assert state.spare is not None
    target = petgen.build.incremental.target_tree(out, state)
    try:
        assert target.recycled
    finally:
        petgen.build.incremental.release(target)


def test_an_edit_cuts_llms_full_from_the_last_one_and_keeps_the_big_states(bundled: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit, the unchanged entries' sections of llms-full.txt are cut out of the last build's file
    (petgen/emit/llms.py), and the phrase count and the search index kept in the cache are not saved again (each
    build updates the saved ones until more than KEEP_STATE entries changed); the output is a clean build's."""
    seen = tmp_path / "spliced"  # a file: the spy may run in the build's forked child
    original = petgen.emit.llms._spliced

    def spy(*args):  # type: ignore[no-untyped-def]
        found = original(*args)
        with seen.open("a") as log:
            log.write("1" if found is not None else "0")
        return found

    monkeypatch.setattr(petgen.emit.llms, "_spliced", spy)
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    saved = [*cache.glob(f"entries-*/*/{petgen.content.phrases.STATE}"), *cache.glob("builds/*.search")]
    assert len(saved) == 2
    stamps = [p.stat().st_mtime_ns for p in saved]
    path = bundled / "names" / "baerchen.md"
    for number in range(3):
        path.write_text(path.read_text(encoding="utf-8").replace("meaning: ", f"meaning: Fassung {number}, ", 1),
                        encoding="utf-8")
        assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
        assert seen.read_text()[-1:] == "1", number
        assert [p.stat().st_mtime_ns for p in saved] == stamps
        build(bundled, tmp_path / f"clean{number}", base_url=BASE_URL)
        assert tree(out) == tree(tmp_path / f"clean{number}")
    assert b"Fassung 2, Fassung 1, Fassung 0" in (out / "llms-full.txt").read_bytes()


@pytest.mark.parametrize("served", [False, True])
def test_an_edit_that_fails_the_checks_across_entries_changes_nothing(bundled: Path, tmp_path: Path, served: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An incremental build writes into its tree (the search index, the JSON API, discovery: in a forked child)
    while it checks across entries; when a check fails (here a variant that is another entry's title), the live
    tree is as it was, no other tree is left beside it, the spare (or, while a runtime holds it, the clone) is not
    trusted, and the build after the fix equals a clean build."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    for _ in range(2):
        build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    before = tree(out)
    path = bundled / "names" / "baerchen.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("meaning: ", "meaning: Neu, ", 1).replace("variants: [Bärle,", "variants: [Schatz, Bärle,", 1),
                    encoding="utf-8")
    monkeypatch.setattr(petgen.build.incremental, "LOCK_WAIT", 0.2)
    held = BuildDir(spare_path(out)) if served else None  # a runtime serving the spare: the build clones the live tree
    with pytest.raises(ContentError) as failed:
        build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    del held
    assert [p.message for p in failed.value.problems if p.severity == "error"] == [
        "variant 'Schatz' is the title of another entry (%s)" % (bundled / "names" / "schatz.md")]
    assert tree(out) == before
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".")) == [spare_path(out).name]
    path.write_text(text.replace("meaning: ", "meaning: Neu, ", 1), encoding="utf-8")
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
    build(bundled, tmp_path / "clean", base_url=BASE_URL)
    assert tree(out) == tree(tmp_path / "clean")


def test_an_edit_patches_the_site_lists_instead_of_grouping_every_entry(bundled: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The lists of the last build are kept in the cache (petgen/emit/listindex.py): after an edit that moves an entry
    between lists and A–Z pages, the site's lists and the API's list filters are patched at its position, not
    grouped again, and give the same bytes. (One core: the API is written in the build process.)"""
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    grouped: list[str] = []
    lists, letters, patch = Browse._grouped, Browse.by_letter.func, ListIndex.patch
    monkeypatch.setattr(Browse, "_grouped", lambda self: grouped.append("lists") or lists(self))
    monkeypatch.setattr(Browse.by_letter, "func", lambda self: (
        grouped.append("letters") if not self.patching else None) or letters(self))
    monkeypatch.setattr(ListIndex, "patch", lambda self, member_of: grouped.append("patched") or patch(self, member_of))
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    assert grouped == ["lists", "letters"]
    editor = Editor(bundled, 0)
    text = editor.text("baerchen")
    moved = (text.replace("moods: [kuschelig, zaertlich]", "moods: [frech]")
             .replace("region: [ueberregional]", "region: [schweiz]")
             .replace("relationship: [partner, kind]", "relationship: [freunde]"))
    for step in range(2):
        if step == 0:  # other moods and facet values: leaves some lists, joins others
            assert moved != text
            editor.write("baerchen", moved)
        else:  # renamed to another letter: the entries between its old and new position move up one
            (bundled / "names" / "baerchen.md").unlink()
            editor.write("dachsbaerchen", moved.replace("title: Bärchen", "title: Dachsbärchen"))
            editor.relink("baerchen", "dachsbaerchen")
        assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
        assert grouped == ["lists", "letters", "patched", "patched"]
        clean = tmp_path / "clean"
        build(bundled, clean, base_url=BASE_URL)  # no cache: grouped
        assert tree(out) == tree(clean)
        shutil.rmtree(clean)
        del grouped[2:]


def test_a_layered_dict_is_its_base_with_the_changes_since() -> None:
    """Until the changes since its base are a sixteenth of it, a `Layered` dict keeps the base's bytes as they are."""
    plain = {f"k{i}": {"n": i} for i in range(100)}
    base = Layered(Marshalled(blob=Marshalled(dict(plain)).blob))
    one = base.after({"k1": {"n": -1}, "new": {"n": 100}, "k2": None})
    plain.update(k1={"n": -1}, new={"n": 100})
    del plain["k2"]
    assert one.base is base.base and one.value == plain and base.value.keys() == {f"k{i}" for i in range(100)}
    blob, since = one.stored()
    assert Layered(Marshalled(blob=blob), since).value == plain  # as the next build loads it
    two = one.after({"k2": {"n": 2}, "new": None})
    assert two.base is base.base and two.value == {**{k: v for k, v in plain.items() if k != "new"}, "k2": {"n": 2}}
    many = one.after(dict.fromkeys([f"k{i}" for i in range(3, 10)]))  # ten changes: it is marshalled whole again
    assert many.since == {} and many.value == {k: v for k, v in plain.items() if k not in {f"k{i}" for i in range(3, 10)}}


def test_an_edit_stores_again_only_the_routes_of_the_entries_it_changed(bundled: Path, tmp_path: Path) -> None:
    """The entries' routes in the build state are the full build's bytes and the edited entries' routes since, and
    the same routes as a full build of that content stores."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    first = load_state(cache, out)
    assert first is not None and first.routes.since == {}
    editor = Editor(bundled, 0)
    slug, gone = editor.slugs()[:2]
    editor.write(slug, re.sub(r'^meaning: ("?)', r"meaning: \1Neu gesagt, ", editor.text(slug), count=1,
                              flags=re.MULTILINE))
    (bundled / "names" / f"{gone}.md").unlink()
    editor.relink(gone, None)
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    state = load_state(cache, out)
    assert state is not None and state.routes.base.blob == first.routes.base.blob
    assert state.routes.since.keys() - first.keys.keys() == set()  # no entry was added
    assert state.routes.since[gone] is None and state.routes.since[slug] != first.routes.value[slug]
    build(bundled, tmp_path / "full", base_url=BASE_URL, cache_dir=tmp_path / "cache2")
    full = load_state(tmp_path / "cache2", tmp_path / "full")
    assert full is not None and state.routes.value == full.routes.value


def test_an_edit_keys_again_only_the_changed_entries_and_those_that_link_to_them(
        bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages' keys (`entry_keys`) of the entries whose file is unchanged and which link to no changed entry are
    the last build's; a changed title is keyed again on the pages that link to it, which show it."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    editor = Editor(bundled, 0)
    linked = {slug: [s.strip() for s in match.group(1).split(",") if s.strip()]
              for slug in editor.slugs() if (match := RELATED.search(editor.text(slug)))}
    target = next(s for s in editor.slugs() if any(s in links for links in linked.values()))
    citing = {slug for slug, links in linked.items() if target in links}
    keyed: list[str] = []
    page_key = PageRenderer.page_key
    monkeypatch.setattr(PageRenderer, "page_key", lambda self, key, entry: keyed.append(entry.slug) or page_key(
        self, key, entry))
    title = re.search(r'^title: "?(.*?)"?$', editor.text(target), re.MULTILINE).group(1)  # type: ignore[union-attr]
    editor.write(target, re.sub(r'^title: ("?)(.*?)("?)$', r"title: \1\2!\3", editor.text(target), count=1,
                                flags=re.MULTILINE))  # the same slug
    kb = build(bundled, out, base_url=BASE_URL, cache_dir=cache).kb
    assert set(keyed) == {target, *citing}
    state = load_state(cache, out)
    assert state is not None and state.keys == entry_keys(kb, PageRenderer(kb))  # as if all were keyed again
    clean = tmp_path / "clean"
    build(bundled, clean, base_url=BASE_URL)
    assert tree(out) == tree(clean)
    for slug in citing:
        assert f"{title}!" in (out / "names" / slug / "index.html").read_text(encoding="utf-8")


def test_an_edit_that_changes_no_overview_renders_no_template(bundled: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit of one entry's meaning (not one the home page shows), its page and the list pages that show it are
    filled into the frames kept in the build cache (`kept_frame`), and the home, search, 404 and overview pages are
    taken over (units): no template is rendered, and Jinja need not be imported. The same bytes as a clean build."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    kb = build(bundled, out, base_url=BASE_URL, cache_dir=cache).kb
    shown = {e.slug for e in petgen.emit.site.featured(kb, Browse(kb))}
    slug = next(s for s in Editor(bundled, 0).slugs() if s not in shown)
    rendered: list[str] = []
    for module in (petgen.emit.site, petgen.emit.browse, petgen.emit.listpage, petgen.emit.guide):
        monkeypatch.setattr(module, "environment", lambda site: rendered.append("template") or template(site))
    path = bundled / "names" / f"{slug}.md"
    path.write_text(path.read_text(encoding="utf-8").replace("meaning: ", "meaning: Neu gesagt, ", 1), encoding="utf-8")
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is not None
    assert rendered == []
    clean = tmp_path / "clean"
    build(bundled, clean, base_url=BASE_URL)
    assert rendered  # without a cache the frames are made from the templates
    assert tree(out) == tree(clean)


@pytest.mark.parametrize("field,value", [("routes", (b"\x00", [1, 2])), ("routes", "x"), ("live", [1]),
                                         ("version", -1)])
def test_a_state_of_another_shape_is_a_full_build(bundled: Path, tmp_path: Path, field: str, value: Any) -> None:
    """A state file whose parts are not of the shape this version writes (another version's, or damaged) is no
    state: the next build is a full one, not a traceback."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(bundled, out, base_url=BASE_URL, cache_dir=cache)
    path = petgen.build.incremental.state_path(cache, out)
    found = marshal.loads(path.read_bytes())
    found[field] = value
    path.write_bytes(marshal.dumps(found))
    assert load_state(cache, out) is None
    assert build(bundled, out, base_url=BASE_URL, cache_dir=cache).changed is None  # a full build
    assert load_state(cache, out) is not None


def _slow_to_exit(code: int) -> None:
    """An edit's child that stays alive for a second after it has sent its result (as on a busy machine)."""
    time.sleep(1.0)
    os._exit(code)


def test_the_tree_swapped_in_is_not_locked_by_an_edits_child(bundled: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The child of an edit inherits the descriptor that locks the tree it writes into; it closes it, so that a
    runtime can lock the new tree as soon as the build has returned, not only once the child has exited."""
    out, cache = tmp_path / "dist", tmp_path / "cache"
    path = bundled / "names" / "baerchen.md"
    text = path.read_text(encoding="utf-8")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(petgen.build.forked, "_exit", _slow_to_exit)
    for number in range(3):  # the third build recycles the spare, which it locks
        path.write_text(text.replace("meaning: ", f"meaning: Fassung {number}, "), encoding="utf-8")
        result = build(bundled, out, base_url=BASE_URL, cache_dir=cache)
        fd = os.open(out, os.O_RDONLY)
        try:
            assert petgen.build.dist.lock_tree(fd, exclusive=False, wait=False), number
        finally:
            os.close(fd)
    assert result.changed is not None

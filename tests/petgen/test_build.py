"""The build's output: schemas, determinism, manifest, CDN rules, list pages, order."""

from __future__ import annotations

import hashlib
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path

import orjson
import pytest
import xxhash
from jsonschema import Draft202012Validator, FormatChecker

from petgen.build import dist
from petgen.build.cache import EntryCache
from petgen.build.dist import DistWriter, remove_tree
from petgen.build.pipeline import ApiEntry, _emit_api_task, api_handoff, build
from petgen.content.kb import PARALLEL_THRESHOLD as PARSE_THRESHOLD
from petgen.content.kb import KnowledgeBase, load_knowledge_base
from petgen.content.model import Site
from petgen.content.problems import ContentError
from petgen.content.synthetic import write_corpus
from petgen.contract.schemas import schema_for
from petgen.emit import entries, templating
from petgen.emit.api import emit_api
from petgen.emit.entries import PARALLEL_THRESHOLD as EMIT_THRESHOLD
from petgen.emit.entries import TAKEN, Claims, emit_entries, entries_context, shared_claims, submit_entries
from petgen.emit.site import PageRenderer, compile_templates
from tests.conftest import BASE_URL, REPO, write_site


def load(dist: Path, route: str) -> dict:
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    return orjson.loads((dist / manifest["routes"][route]["file"]).read_bytes())


def schema_name(route: str) -> str:
    path = route.split("?")[0]
    if path == "/api/names":
        return "NameList"
    if path.startswith("/api/names/"):
        return "Name"
    if path == "/api/categories":
        return "CategoryList"
    if path.startswith("/api/categories/"):
        return "Category"
    assert path == "/api/status", path
    return "Status"


@pytest.mark.parametrize("fixture", ["dist", "big_dist"])
def test_every_json_route_validates_against_its_schema(fixture: str, request: pytest.FixtureRequest) -> None:
    dist: Path = request.getfixturevalue(fixture)
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    checked = 0
    validators = {}
    for route, info in manifest["routes"].items():
        if not route.startswith("/api/"):
            continue
        name = schema_name(route)
        validator = validators.setdefault(name, Draft202012Validator(schema_for(name), format_checker=FormatChecker()))
        errors = list(validator.iter_errors(orjson.loads((dist / info["file"]).read_bytes())))
        assert errors == [], (route, errors[0].message)
        checked += 1
    assert checked > 10


def test_same_content_gives_byte_identical_dist(content: Path, tmp_path: Path) -> None:
    def digest(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*")) if p.is_file()}

    build(content, tmp_path / "one")
    (content / "names" / "apfel.md").touch()  # a newer mtime must not matter
    build(content, tmp_path / "two")
    assert digest(tmp_path / "one") == digest(tmp_path / "two")


def test_the_api_counts_facet_values_and_citations_as_the_entries_have_them(tmp_path: Path) -> None:
    """The facet counts taken from the list filters' sizes and the citations counted in one pass are those of a
    count over the entries (every value in the vocabulary's order; each other entry naming one once)."""
    kb = load_knowledge_base(REPO / "content")
    build(REPO / "content", tmp_path / "dist")
    data = orjson.loads((tmp_path / "dist" / "_data" / "index.json").read_bytes())
    counted = kb.facet_counts()
    assert [(name, list(counts.items())) for name, counts in data["facetCounts"].items()] == [
        (name, list(counts.items())) for name, counts in counted.items()]
    assert load(tmp_path / "dist", "/api/status")["facets"] == counted
    named = [sum(entry.slug in other.related for other in kb.entries if other is not entry) for entry in kb.entries]
    assert data["cited"] == named and any(named)


def test_workers_and_one_process_give_the_same_dist(tmp_path: Path) -> None:
    """Above the thresholds for worker processes, a full build parses in workers forked first (fed chunk by
    chunk while the files are read), has them build the search index and the JSON API between chunks of entries
    while this process writes the site: the same bytes as a build that does everything in one process."""
    def digest(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*")) if p.is_file()}

    content = write_corpus(tmp_path / "content", max(PARSE_THRESHOLD, EMIT_THRESHOLD) + 100,
                           taxonomy_from=REPO / "content")
    alone = build(content, tmp_path / "alone" / "dist", workers=1)
    parallel = build(content, tmp_path / "parallel" / "dist", workers=2)
    assert alone.files == parallel.files > 2 * EMIT_THRESHOLD
    assert digest(tmp_path / "alone" / "dist") == digest(tmp_path / "parallel" / "dist")


def test_a_worker_writes_the_api_of_the_fields_it_reads(tmp_path: Path) -> None:
    """The worker that writes the JSON API is handed the knowledge base without its entries and of each entry the
    fields the API reads: it writes the same files, routes and units as `emit_api` in the build process; a field
    it was not handed is missing (not a dataclass default)."""
    content = write_corpus(tmp_path / "content", 60, taxonomy_from=REPO / "content")
    kb = load_knowledge_base(content, workers=1)
    alone, worker = DistWriter(tmp_path / "alone"), DistWriter(tmp_path / "worker")
    alone.root.mkdir()
    worker.root.mkdir()
    emit_api(kb, alone)
    fields = ApiEntry.fields(kb)
    assert "originCertainty" in fields  # a facet, counted in /api/categories
    result = _emit_api_task(worker.root, "", api_handoff(kb))
    assert result == (alone.routes, alone.written, alone.units) and len(alone.written) > 30
    assert {p.name: p.read_bytes() for p in worker.root.rglob("*") if p.is_file()} == {
        p.name: p.read_bytes() for p in alone.root.rglob("*") if p.is_file()}
    with pytest.raises(AttributeError):
        ApiEntry({"slug": "x"}).originCertainty  # noqa: B018 - a field with a dataclass default


_GATE: list = []  # in the test below: the event its pool's only worker waits for (inherited through the fork)


def _wait_at_gate() -> None:
    _GATE[0].wait(60)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _written_alone(tmp_path: Path) -> tuple[KnowledgeBase, PageRenderer, DistWriter]:
    """A knowledge base of enough entries for workers, its pages, and its entries written in this process."""
    content = write_corpus(tmp_path / "content", EMIT_THRESHOLD + 100, taxonomy_from=REPO / "content")
    kb = load_knowledge_base(content, workers=1)
    pages = PageRenderer(kb)
    alone = DistWriter(tmp_path / "alone")
    alone.root.mkdir()
    emit_entries(kb, alone, pages=pages, workers=1)
    return kb, pages, alone


@contextmanager
def _behind_a_busy_worker(tmp_path: Path, kb: KnowledgeBase, pages: PageRenderer, *, claims: bool
                          ) -> Iterator[tuple[ProcessPoolExecutor, list[Future], DistWriter]]:
    """A pool of one worker, busy until the gate is set (at the latest once the block is done), handed every chunk
    of `kb` to write into a fresh tree after that (with `Claims` shared, if `claims`): the pool, the chunks' futures
    and the tree's writer."""
    context = multiprocessing.get_context("fork")
    _GATE[:] = [context.Event()]
    try:
        with shared_claims(context) if claims else nullcontext(), ProcessPoolExecutor(1, mp_context=context) as pool:
            busy = pool.submit(_wait_at_gate)
            taken = DistWriter(tmp_path / "taken")
            taken.root.mkdir()
            yield pool, submit_entries(pool, entries_context(kb, taken, pages), kb.packed), taken
            _GATE[0].set()
            busy.result()
    finally:
        _GATE[0].set()
        _GATE.clear()


def test_the_build_process_writes_the_chunks_no_worker_has_started(tmp_path: Path) -> None:
    """Once the build process is done with the rest, it takes back the chunks of entries that no worker has
    started and writes them itself: here the pool's only worker is busy until the first chunk taken back is
    written. The files and routes are those of a build in one process."""
    kb, pages, alone = _written_alone(tmp_path)
    with _behind_a_busy_worker(tmp_path, kb, pages, claims=False) as (pool, futures, taken):
        emit_entries(kb, taken, pages=pages, pool=pool, submitted=futures, progress=lambda _: _GATE[0].set())
    assert len(futures) > 3 and futures[-1].cancelled()  # taken back before the worker was free again
    assert not futures[0].cancelled()  # queued for the worker already: it wrote that one
    assert taken.routes == alone.routes and taken.written == alone.written
    assert _files(taken.root) == _files(alone.root)


def test_the_build_process_takes_back_the_chunks_a_worker_was_handed_but_has_not_started(tmp_path: Path) -> None:
    """With `Claims` shared with the workers (a full build's early workers), the build process also takes back the
    chunks that the executor has handed a worker ahead, which `Future.cancel` cannot: here every chunk, the pool's
    only worker being busy until this process is done. The worker then skips them; the files and routes are those
    of a build in one process."""
    kb, pages, alone = _written_alone(tmp_path)
    with _behind_a_busy_worker(tmp_path, kb, pages, claims=True) as (pool, futures, taken):
        deadline = time.monotonic() + 30
        while not futures[0].running():  # handed to the worker ahead, behind the task it is busy with
            assert time.monotonic() < deadline, "the executor never handed the worker its first chunk"
            time.sleep(0.01)
        emit_entries(kb, taken, pages=pages, pool=pool, submitted=futures)
    handed = [f for f in futures if not f.cancelled()]
    assert handed and all(f.result() == ({}, {}, TAKEN) for f in handed)
    assert taken.routes == alone.routes and taken.written == alone.written
    assert _files(taken.root) == _files(alone.root)


def test_a_lock_held_by_a_dead_worker_takes_nothing_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """If a worker died holding the lock of `Claims`, the build process does not wait for it for ever: after
    TAKE_WAIT it takes nothing back (the chunk's future reports the broken pool); with the lock free it takes."""
    monkeypatch.setattr(entries, "TAKE_WAIT", 0.05)
    claims = Claims(multiprocessing.get_context("fork"))
    claims.reset()
    claims.lock.acquire()  # as a worker killed inside `start` leaves it
    began = time.monotonic()
    assert not claims.take(3)
    assert time.monotonic() - began < 5
    claims.lock.release()
    assert claims.take(3) and not claims.start(3) and claims.start(2)


def test_the_rest_of_the_content_is_loaded_while_the_workers_parse(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """With workers that parse, the lexicon, the bots and `while_parsing` (a full build compiles its templates
    there) are done once every file is handed to them and before the first parsed chunk is taken; in one process,
    before the files are parsed. Either way the knowledge base is the same as without `while_parsing`."""
    content = write_corpus(tmp_path / "content", PARSE_THRESHOLD + 100, taxonomy_from=REPO / "content")
    events: list[str] = []
    taken = EntryCache.add_chunk
    monkeypatch.setattr(EntryCache, "add_chunk", lambda self, blob: events.append("chunk") or taken(self, blob))
    seen: list[Site] = []

    def meanwhile(site: Site) -> None:
        events.append("while parsing")
        seen.append(site)

    plain = load_knowledge_base(content, workers=1, base_url="https://example.org/x")
    events.clear()
    alone = load_knowledge_base(content, workers=1, base_url="https://example.org/x", while_parsing=meanwhile)
    assert events[0] == "while parsing" and events.count("while parsing") == 1 and "chunk" in events
    events.clear()
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        pooled = load_knowledge_base(content, workers=2, pool=pool, base_url="https://example.org/x",
                                     while_parsing=meanwhile)
    assert events[0] == "while parsing" and events.count("while parsing") == 1 and events.count("chunk") > 2
    assert seen == [plain.site, plain.site] and plain.site.base_url == "https://example.org/x"
    for kb in (alone, pooled):
        assert (kb.lexicon, kb.bots, kb.source_hash, kb.warnings) == (
            plain.lexicon, plain.bots, plain.source_hash, plain.warnings)
        assert [e.slug for e in kb.entries] == [e.slug for e in plain.entries]


def test_compile_templates_compiles_every_template_a_full_build_renders(content: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile_templates` (while the workers parse) leaves no template for a full build to compile later."""
    def compiled() -> set[str]:
        return {template.name for env in templating._environments.values() for template in env.cache.values()}

    monkeypatch.setattr(templating, "_environments", {})
    kb = build(content, tmp_path / "dist", workers=1).kb
    rendered = compiled()
    monkeypatch.setattr(templating, "_environments", {})
    compile_templates(kb.site)
    assert {"name.html", "list.html", "overview.html", "docs.html"} <= rendered <= compiled()


def test_a_full_build_that_fails_its_checks_across_entries_leaves_nothing_behind(tmp_path: Path) -> None:
    """The workers start writing the entries as soon as they are parsed, while the build process checks them
    against each other; when those checks fail (a related entry that does not exist, which only the checks
    across entries find, and whose page cannot be rendered), the build fails with the problem, the workers'
    files are removed and the last build's dist is left as it was."""
    content = write_corpus(tmp_path / "content", max(PARSE_THRESHOLD, EMIT_THRESHOLD) + 100,
                           taxonomy_from=REPO / "content")
    out = tmp_path / "site" / "dist"
    build(content, out, workers=2)
    before = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    first = min((content / "names").iterdir())
    text = first.read_text()
    assert "\nrelated:" not in text
    first.write_text(text.replace("\n---\n", "\nrelated: [gibt-es-nicht]\n---\n", 1))
    with pytest.raises(ContentError) as raised:
        build(content, out, workers=2)
    assert any("related entry 'gibt-es-nicht' does not exist" in p.message for p in raised.value.problems)
    assert sorted(p.name for p in out.parent.iterdir()) == ["dist"]  # no tree of the failed build
    assert {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


def test_hashed_file_names_carry_the_etag(dist: Path) -> None:
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    info = manifest["routes"]["/api/names/schnucki"]
    body = (dist / info["file"]).read_bytes()
    assert info["file"] == f"api/names/schnucki.{info['etag']}.json"
    assert xxhash.xxh3_64_hexdigest(body)[:12] == info["etag"]
    assert info["type"] == "application/json; charset=utf-8"


def test_name_resource(dist: Path) -> None:
    name = load(dist, "/api/names/oelprinz")
    assert name["title"] == "Ölprinz"
    assert name["url"] == f"{BASE_URL}/names/oelprinz/"
    assert name["license"] == "CC BY 4.0" and name["licenseUrl"] == "https://creativecommons.org/licenses/by/4.0/"
    assert name["categories"] == ["maerchen"]
    assert (name["relationship"], name["gender"], name["region"], name["language"], name["originCertainty"]) == \
        (["partner"], "ihn", ["ueberregional"], "deutsch", "vermutet")
    assert "caution" not in name and "genderNote" not in name  # only where an entry has them
    assert name["origin"].startswith("Der Name Ölprinz ist eine Bildung")
    assert (dist / "names" / "oelprinz" / "index.html").read_text().count("Ölprinz") > 3


def test_list_order_is_german_collation(dist: Path) -> None:
    titles = [item["title"] for item in load(dist, "/api/names")["items"]]
    assert titles == ["Äffchen", "Apfel", "ohrwurm", "Ölprinz", "Schnucki", "Zuckerstück"]


def test_list_pages_for_every_filter(dist: Path) -> None:
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    routes = set(manifest["routes"])
    assert "/api/names?category=tiere" in routes
    assert "/api/names?category=altmodisch" in routes  # empty categories still have their page
    assert "/api/names?mood=leidenschaftlich" in routes
    assert "/api/names?category=klassiker&mood=verspielt" in routes
    assert "/api/names?category=altmodisch&mood=verspielt" not in routes  # empty pairs are computed live
    page = load(dist, "/api/names?category=neutral")  # an alias of gender=alle: derived from the facet
    assert [i["slug"] for i in page["items"]] == ["aeffchen", "ohrwurm", "schnucki", "zuckerstueck"]
    assert page["total"] == 4 and page["nextUrl"] is None and page["limit"] == 200 and page["offset"] == 0
    assert load(dist, "/api/names?gender=alle")["items"] == page["items"]
    assert [i["slug"] for i in load(dist, "/api/names?category=regional")["items"]] == ["apfel", "ohrwurm"]
    assert [i["slug"] for i in load(dist, "/api/names?region=berlin")["items"]] == ["ohrwurm"]
    assert [i["slug"] for i in load(dist, "/api/names?relationship=kind")["items"]] == ["aeffchen", "apfel"]
    assert load(dist, "/api/names?language=englisch")["total"] == 0  # every value has its page, empty or not
    assert load(dist, "/api/categories/fuer-ihn")["names"][0]["slug"] == "oelprinz"


def test_big_lists_are_paged_with_absolute_next_urls(big_dist: Path) -> None:
    first = load(big_dist, "/api/names")
    assert first["total"] == 450 and len(first["items"]) == 200
    assert first["nextUrl"] == f"{BASE_URL}/api/names?offset=200"
    third = load(big_dist, "/api/names?offset=400")
    assert len(third["items"]) == 50 and third["nextUrl"] is None


def test_static_status_uses_newest_review_date(dist: Path) -> None:
    status = load(dist, "/api/status")
    assert status["timestamp"] == "2026-11-01T00:00:00Z"
    assert (status["status"], status["names"], status["categories"], status["moods"]) == ("ok", 6, 15, 10)
    assert status["version"] == "1.0.0" and status["license"] == "CC BY 4.0"


def test_redirects_and_headers_come_from_the_manifest(dist: Path) -> None:
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    redirects = (dist / "_redirects").read_text().splitlines()
    headers = (dist / "_headers").read_text()
    info = manifest["routes"]["/api/names/schnucki"]
    assert f"/api/names/schnucki /{info['file']} 200" in redirects
    pair = manifest["routes"]["/api/names?category=klassiker&mood=verspielt"]
    assert f"/api/names category=klassiker mood=verspielt /{pair['file']} 200" in redirects
    # query rules come before the bare path they refine
    assert redirects.index(f"/api/names /{manifest['routes']['/api/names']['file']} 200") > \
        redirects.index(f"/api/names category=klassiker mood=verspielt /{pair['file']} 200")
    assert f"/{info['file']}\n  Cache-Control: public, max-age=31536000, immutable" in headers
    assert "/api/names/schnucki\n  Cache-Control: public, max-age=60, must-revalidate" in headers


def test_base_url_option_overrides_site(content: Path, tmp_path: Path) -> None:
    build(content, tmp_path / "d", base_url="https://example.org/")
    assert load(tmp_path / "d", "/api/names/apfel")["url"] == "https://example.org/names/apfel/"


def test_rebuild_replaces_dist_atomically(content: Path, tmp_path: Path) -> None:
    out = tmp_path / "dist"
    build(content, out)
    (content / "names" / "apfel.md").unlink()
    build(content, out)
    assert not list(out.glob("api/names/apfel.*.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content", "dist"]


def test_an_old_tree_is_removed_without_following_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if dist._BY_DIR_FD:  # by its own walk, not by shutil's
        monkeypatch.setattr(dist.shutil, "rmtree", lambda *args, **kwargs: pytest.fail("shutil.rmtree"))
    outside = tmp_path / "outside"
    (outside / "kept").mkdir(parents=True)
    (outside / "kept" / "file").write_text("x")
    tree = tmp_path / "old"
    for rel in ("a/b/c/page.html", "a/b/index.html", "a/top.json", "file.txt"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(rel)
    (tree / "a" / "link").symlink_to(outside)
    (tree / "filelink").symlink_to(outside / "kept" / "file")
    remove_tree(tree)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside"]
    assert (outside / "kept" / "file").read_text() == "x"
    remove_tree(tmp_path / "missing")  # nothing to remove: no error


def test_empty_knowledge_base_builds(tmp_path: Path) -> None:
    content = write_site(tmp_path / "c", titles=[])
    result = build(content, tmp_path / "d")
    assert result.routes > 0
    assert load(tmp_path / "d", "/api/names")["items"] == []


def test_categories_hold_the_entries_their_definition_selects_in_list_order(tmp_path: Path) -> None:
    """`in_category` (grouped in one pass per facet) and `first_in_category` (found without grouping) select, for
    every category and alias category, the entries `Category.has` accepts, in list order."""
    from petgen.content.kb import load_knowledge_base

    content = write_corpus(tmp_path / "content", 300, taxonomy_from=REPO / "content")
    kb = load_knowledge_base(content)
    firsts = {c.slug: kb.first_in_category(c.slug, 3) for c in kb.categories}
    assert any(c.facet is not None for c in kb.categories)
    for category in kb.categories:
        expected = [e.slug for e in kb.entries if category.has(e)]
        assert expected, category.slug
        assert [e.slug for e in kb.in_category(category.slug)] == expected, category.slug
        assert [e.slug for e in firsts[category.slug]] == expected[:3] == [
            e.slug for e in kb.first_in_category(category.slug, 3)]

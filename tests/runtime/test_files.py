"""Static files from disk: the route table, the bounded cache, large files, and builds swapped under a
running runtime (a response always comes whole from one build)."""

from __future__ import annotations

import hashlib
import mmap
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from starlette.testclient import TestClient

from petgen.build import distpack
from petgen.build.dist import IMMUTABLE, MANIFEST, REVALIDATE, content_hash
from petgen.build.distpack import ROUTE_HASH, ROUTE_PACK, SUMMARY_PACK
from petgen.build.pipeline import build
from petgen.contract.resources import filter_summaries
from petgen.contract.security import RAW_SECURITY_HEADERS
from petgen.search.packfile import Pack
from runtime.builds import files
from runtime.builds.dist import Dist
from runtime.builds.files import HOT_FILE_MAX, LargeFile, StaticFile
from tests.conftest import BASE_URL, entry_text
from tests.runtime.test_server import running_server
from tests.serving import petgen_serve


def manifest_of(dist: Path) -> dict:  # type: ignore[type-arg]
    return orjson.loads((dist / "_manifest.json").read_bytes())


def raw_start(app: object, path: str, method: str = "GET", headers: list[tuple[bytes, bytes]] | None = None,
              extensions: dict | None = None) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    """Call the ASGI app directly: the start message as sent (header order included) and the body."""
    import anyio

    sent: list[dict] = []  # type: ignore[type-arg]

    async def receive() -> dict:  # type: ignore[type-arg]
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:  # type: ignore[type-arg]
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [(b"host", b"testserver"), *(headers or [])], "client": ("127.0.0.1", 1234),
             "server": ("testserver", 80), "scheme": "http", "http_version": "1.1", "root_path": "",
             "extensions": extensions or {}}
    anyio.run(app, scope, receive, send)  # type: ignore[arg-type]
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0], body


def expected_headers(info: dict, size: int, cache_control: str) -> list[tuple[bytes, bytes]]:  # type: ignore[type-arg]
    """What the runtime sent for a static file when it held every file in memory (the same list, in order)."""
    return [(b"content-type", info["type"].encode()), (b"etag", f'"{info["etag"]}"'.encode()),
            (b"cache-control", cache_control.encode()), (b"content-length", str(size).encode()),
            *RAW_SECURITY_HEADERS,
            *((name.lower().encode(), value.encode()) for name, value in info.get("headers", {}).items())]


def test_headers_are_those_of_the_in_memory_runtime(dist: Path) -> None:
    """Every header of a static answer, in order: clean route, hashed path, a route with its own headers,
    a large file, HEAD and 304."""
    from runtime.app import create_app
    from runtime.settings import Settings

    app = create_app(Settings(dist=dist, rate_limit=0))
    routes = manifest_of(dist)["routes"]
    linked = next(route for route, info in routes.items() if info.get("headers"))
    cors = [(b"access-control-allow-origin", b"*")]
    for path, route, cache_control in (("/api/names/apfel", "/api/names/apfel", REVALIDATE),
                                       ("/" + routes["/api/names/apfel"]["file"], "/api/names/apfel", IMMUTABLE),
                                       (linked, linked, REVALIDATE), ("/openapi.json", "/openapi.json", REVALIDATE)):
        info = routes[route]
        data = (dist / info["file"]).read_bytes()
        start, body = raw_start(app, path)
        sent = [h for h in start["headers"] if h[0] != b"x-request-id"]
        assert sent[:len(expected_headers(info, len(data), cache_control))] == expected_headers(
            info, len(data), cache_control), path
        assert sent[len(expected_headers(info, len(data), cache_control)):][:1] == cors, path
        assert body == data, path
        head, body = raw_start(app, path, "HEAD")
        assert [h for h in head["headers"] if h[0] != b"x-request-id"] == sent and body == b"", path
        not_modified, body = raw_start(app, path, headers=[(b"if-none-match", f'"{info["etag"]}"'.encode())])
        assert not_modified["status"] == 304 and body == b"", path
        assert [h for h in not_modified["headers"] if h[0] != b"x-request-id"] == [
            h for h in sent if h[0] not in (b"content-length", b"content-type")], path


def test_route_table_answers_exactly_the_manifest(big_dist: Path) -> None:
    manifest = manifest_of(big_dist)["routes"]
    dist = Dist.load(big_dist)
    paths = set(manifest) | {"/" + info["file"] for info in manifest.values() if info["hashed"]}
    assert set(dist.routes) == paths and len(dist.routes) == len(paths)
    for path in paths:
        assert path in dist.routes
    for path in ("/api/names/apfelx", "/api/names", "/api/names/", "/API/names/schnucki", "", "/",
                 "/api/names?category=nope", "/api/names/" + "x" * 500):
        assert (path in dist.routes) == (path in paths), path
        assert (dist.routes.serve(path) is None) == (path not in paths), path
    shard = next(route for route, info in manifest.items() if info["hashed"] and route == "/" + info["file"])
    served = dist.routes.serve(shard)
    assert served is not None and (b"cache-control", IMMUTABLE.encode()) in served.headers  # as its file path


def test_a_route_pack_of_another_hash_is_made_again_from_the_manifest(big_dist: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A route pack whose table was hashed otherwise (by an earlier petgen: BLAKE2b) would find no route with this
    runtime's hash; the runtime makes the table again from the manifest, and every route is found."""
    old = tmp_path / "dist"
    shutil.copytree(big_dist, old)
    manifest = orjson.loads((big_dist / MANIFEST).read_bytes())
    with monkeypatch.context() as patched:
        patched.setattr(distpack, "ROUTE_HASH", "blake2b-64")
        patched.setattr(distpack, "xxh3_64_intdigest", lambda data: int.from_bytes(
            hashlib.blake2b(data, digest_size=8).digest(), "little"))
        (old / ROUTE_PACK).write_bytes(distpack.route_pack(manifest.pop("routes"), manifest,
                                                           (big_dist / MANIFEST).stat().st_size))
    assert Pack.open(old / ROUTE_PACK).meta["routeHash"] == "blake2b-64"
    loaded = Dist.load(old)
    assert loaded.routes.table.pack.meta["routeHash"] == ROUTE_HASH
    assert not isinstance(loaded.routes.table.pack.buffer, mmap.mmap)  # made in memory
    for path in manifest_of(big_dist)["routes"]:
        assert loaded.routes.table.find(path) >= 0, path


def test_a_build_without_its_pack_files_loads_the_same_from_json(big_dist: Path, tmp_path: Path) -> None:
    """The route table and summaries mapped from the build's pack files equal those made from its JSON (a
    build written before there were pack files), route by route and entry by entry."""
    old = tmp_path / "dist"
    shutil.copytree(big_dist, old)
    (old / ROUTE_PACK).unlink()
    (old / SUMMARY_PACK).unlink()
    mapped, parsed = Dist.load(big_dist), Dist.load(old)
    assert isinstance(mapped.routes.table.pack.buffer, mmap.mmap) and isinstance(parsed.routes.table.pack.buffer, bytes)
    manifest = manifest_of(big_dist)
    assert mapped.manifest == parsed.manifest == {k: v for k, v in manifest.items() if k != "routes"}
    assert sorted(mapped.routes) == sorted(parsed.routes)
    for path, info in manifest["routes"].items():
        route = mapped.routes.table.route(mapped.routes.table.find(path))
        assert route == parsed.routes.table.route(parsed.routes.table.find(path))
        assert (route.file, route.etag, route.content_type, route.headers) == (
            info["file"], info["etag"], info["type"], info.get("headers"))
    assert list(mapped.items) == list(parsed.items)
    assert mapped.items.docs.keys() == parsed.items.docs.keys()
    for key, docs in mapped.items.docs.items():
        assert docs.tolist() == parsed.items.docs[key].tolist(), key
    assert (mapped.site, mapped.categories, mapped.moods, mapped.aliases, mapped.facets, mapped.source_hash) == (
        parsed.site, parsed.categories, parsed.moods, parsed.aliases, parsed.facets, parsed.source_hash)


def test_cache_stays_within_its_budget(big_dist: Path) -> None:
    budget = 40_000
    dist = Dist.load(big_dist, static_cache=budget)
    routes = [r for r in manifest_of(big_dist)["routes"] if r.startswith("/api/names/")][:200]
    for _ in range(2):
        for route in routes:
            file = dist.routes.serve(route)
            assert isinstance(file, StaticFile) and file.body == dist.routes[route].body
            assert dist.routes.cached <= budget
    assert 0 < len(dist.routes.hot) < len(routes)
    nothing = Dist.load(big_dist, static_cache=0)
    assert nothing.routes.serve(routes[0]) is not None and nothing.routes.cached == 0 and not nothing.routes.hot


def test_large_files_are_streamed_from_disk(dist: Path, make_client: Callable[..., TestClient]) -> None:
    size = (dist / "openapi.json").stat().st_size
    assert size > HOT_FILE_MAX  # the OpenAPI document is one
    client = make_client(dist, rate_limit=0)
    loaded = client.app.runtime.dist  # type: ignore[attr-defined]
    assert isinstance(loaded.routes.serve("/openapi.json"), LargeFile)
    assert not loaded.routes.hot.get("/openapi.json")
    response = client.get("/openapi.json")
    assert response.content == (dist / "openapi.json").read_bytes()
    assert response.headers["content-length"] == str(size)
    assert response.headers["etag"] == f'"{content_hash(response.content)}"'


def test_pathsend_names_a_file_the_build_holds_open(dist: Path, tmp_path: Path) -> None:
    """Where the server sends files by path, opening it after the app returned, the path names the file
    the loaded build holds open: the right bytes even after `dist/` was renamed away and deleted."""
    import anyio

    from runtime.static import send_large

    loaded = Dist.load(dist)
    expected = (dist / "openapi.json").read_bytes()
    file = loaded.routes.serve("/openapi.json")
    assert isinstance(file, LargeFile)
    os.rename(dist, tmp_path / "moved")
    shutil.rmtree(tmp_path / "moved")
    sent: list[dict] = []  # type: ignore[type-arg]

    async def send(message: dict) -> None:  # type: ignore[type-arg]
        sent.append(message)

    scope = {"type": "http", "method": "GET", "extensions": {"http.response.pathsend": {}}}
    anyio.run(send_large, scope, send, file)
    [pathsend] = sent
    assert pathsend["type"] == "http.response.pathsend" and Path(pathsend["path"]).read_bytes() == expected
    assert any(lent is file.build for _, lent in files._lent)  # kept open for the server
    sent.clear()
    anyio.run(send_large, {**scope, "extensions": {}}, send, file)  # streamed (uvicorn): the same bytes
    assert b"".join(m["body"] for m in sent) == expected and not sent[-1]["more_body"]
    del loaded


def test_a_request_after_a_swap_is_answered_from_one_build(content: Path, tmp_path: Path,
                                                           make_client: Callable[..., TestClient]) -> None:
    out = tmp_path / "dist"
    build(content, out, base_url=BASE_URL)
    client = make_client(out, rate_limit=0, dist_poll=0)
    before = client.get("/names/apfel/")
    # The next build is swapped in, the old tree kept (as while `petgen build` has not deleted it yet):
    # the loaded build still answers, with its own bytes.
    os.rename(out, tmp_path / "kept")
    (content / "names" / "apfel.md").write_text(entry_text("Apfel", "natur", "verspielt"), encoding="utf-8")
    build(content, out, base_url=BASE_URL)
    assert (out / "names/apfel/index.html").read_bytes() != before.content
    same = client.get("/names/apfel/")
    assert same.content == before.content and same.headers["etag"] == before.headers["etag"]
    # Once the old tree is deleted, a file not cached yet is missing: the runtime loads the build on disk and
    # answers from it, and from then on every file comes from the new build.
    shutil.rmtree(tmp_path / "kept")
    api = client.get("/api/names/apfel")
    assert api.status_code == 200 and "verspielt" in api.json()["moods"]
    after = client.get("/names/apfel/", headers={"If-None-Match": before.headers["etag"]})
    assert after.status_code == 200 and after.content == (out / "names/apfel/index.html").read_bytes()
    assert after.headers["etag"] == f'"{content_hash(after.content)}"' != before.headers["etag"]
    # With no build left at all, a file not cached is the 503 of a runtime that is down, never a stale mix.
    shutil.rmtree(out)
    client.app.runtime._gone_tried = -10.0  # type: ignore[attr-defined]
    down = client.get("/api/names/schnucki")
    assert down.status_code == 503 and down.headers["retry-after"] == "5"
    assert down.json()["error"]["code"] and "try again" in down.json()["error"]["hint"]


def test_responses_never_mix_builds_while_rebuilding(content: Path, tmp_path: Path) -> None:
    """A real server polling for new builds while `petgen build` swaps builds in and deletes the old ones:
    every answer's ETag is the hash of its own body, and every body is one of the builds'."""
    out = tmp_path / "dist"
    build(content, out, base_url=BASE_URL)
    bodies = {(out / "names/apfel/index.html").read_bytes()}
    stop = threading.Event()
    errors: list[str] = []

    def rebuilding() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            (content / "names" / "apfel.md").write_text(
                entry_text("Apfel", "natur", "kuschelig" if n % 2 else "verspielt"), encoding="utf-8")
            try:
                build(content, out, base_url=BASE_URL)
                bodies.add((out / "names/apfel/index.html").read_bytes())
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(repr(exc))

    with running_server(out, rate_limit=0, dist_poll=0.05) as base:
        thread = threading.Thread(target=rebuilding)
        thread.start()
        answers = []
        try:
            with httpx.Client(base_url=base) as http:
                deadline = time.monotonic() + 6
                while time.monotonic() < deadline:
                    for path in ("/names/apfel/", "/api/names/apfel", "/openapi.json"):
                        r = http.get(path)
                        assert r.status_code == 200, (path, r.status_code, r.text[:200])
                        assert r.headers["etag"] == f'"{content_hash(r.content)}"', path
                        assert r.headers["content-length"] == str(len(r.content)), path
                        answers.append((path, r.content))
        finally:
            stop.set()
            thread.join()
    assert not errors
    pages = {body for path, body in answers if path == "/names/apfel/"}
    assert pages <= bodies and len(pages) >= 2  # both versions were served, and nothing else


@pytest.fixture
def granian(dist: Path, tmp_path: Path) -> Iterator[str]:
    with petgen_serve(dist, tmp_path, "--server", "granian", "--rate-limit", "0", base_url=BASE_URL,
                      env={"PETGEN_DIST_POLL": "0.1"}) as (base, _, _log):
        yield base


def test_granian_sends_large_files_by_path(granian: str, dist: Path, content: Path) -> None:
    expected = (dist / "openapi.json").read_bytes()
    with httpx.Client(base_url=granian) as http:
        for _ in range(3):
            r = http.get("/openapi.json")
            assert r.status_code == 200 and r.content == expected
            assert r.headers["content-length"] == str(len(expected))
            assert r.headers["etag"] == f'"{content_hash(expected)}"'
        assert http.head("/openapi.json").headers["content-length"] == str(len(expected))
        (content / "names" / "hasi.md").write_text(entry_text("Hasi", "tiere"), encoding="utf-8")
        build(content, dist, base_url=BASE_URL)  # swapped in, the old tree deleted
        deadline = time.monotonic() + 20
        while http.get("/api/names/hasi").status_code != 200:
            assert time.monotonic() < deadline, "the new build was not picked up"
            time.sleep(0.1)
        r = http.get("/openapi.json")
        assert r.content == (dist / "openapi.json").read_bytes()
        assert r.headers["etag"] == f'"{content_hash(r.content)}"'


def test_summaries_select_what_filter_summaries_selects(big_dist: Path) -> None:
    """The compact summaries and their filter index give the build's lists for every filter value."""
    dist = Dist.load(big_dist)
    data = orjson.loads((big_dist / manifest_of(big_dist)["data"]).read_bytes())
    items = data["items"]
    assert list(dist.items) == items and len(dist.items) == len(items)
    assert dist.items[0] == items[0] and dist.items[-1] == items[-1] and dist.items[3:7] == items[3:7]
    with pytest.raises(IndexError):
        dist.items[len(items)]
    vocabulary = {"category": dist.categories, "mood": dist.moods, **dist.facets}
    singles = [{name: value} for name, values in vocabulary.items() for value in values]
    pairs = [{**a, **b} for a in singles[::3] for b in singles[1::4] if list(a) != list(b)]
    for filters in [{}, *singles, *pairs]:
        expected = filter_summaries(items, filters, dist.aliases)
        selected = dist.items.select(filters)
        assert len(selected) == len(expected), filters
        assert selected[0:len(selected)] == expected, filters
    assert dist.mask("relationship", "partner").tolist() == ["partner" in item["relationship"] for item in items]
    assert dist.mask("category", "klassiker").tolist() == ["klassiker" in item["categories"] for item in items]
    assert dist.slugs == {item["slug"] for item in items}


def test_large_files_held_open_stay_bounded(big_dist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At most MAX_PINNED files of a build are held open; one let go is closed once LEND_SECONDS passed."""
    monkeypatch.setattr(files, "MAX_PINNED", 3)
    monkeypatch.setattr(files, "LEND_SECONDS", 0.0)
    monkeypatch.setattr(files, "_retired", type(files._retired)())
    build = files.BuildDir(big_dist)
    names = sorted(str(p.relative_to(big_dist)) for p in (big_dist / "api" / "names").iterdir())[:20]
    for name in names:
        fd = build.pinned(name)
        assert os.pread(fd, 1, 0) == b"{"
        assert len(build._pinned) <= 3 and len(files._retired) <= 1
    assert list(build._pinned) == names[-3:]

"""`_headers`, `_redirects` and the route pack patched from the last build's (petgen/build/routelayout.py) are the
same bytes as made route by route, and are made route by route where patching could not give those bytes."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import orjson
import pytest

from petgen.build.dist import MANIFEST, DistWriter
from petgen.build.routelayout import LastRules, Layout, stored_layout

Routes = dict[str, dict[str, Any]]


def write(root: Path, routes: Routes, extra: dict[str, Any], last: LastRules | None = None
          ) -> tuple[dict[str, bytes], Layout | None]:
    """The files `write_manifest` writes for `routes`, and the layout it returns."""
    writer = DistWriter(root)
    root.mkdir()
    writer.routes = {route: dict(info) for route, info in reversed(routes.items())}
    layout = writer.write_manifest(extra, last=last)
    return {path.name: path.read_bytes() for path in root.iterdir()}, layout


def edited(routes: Routes, hashed_page: str, query: str, gone: str) -> Routes:
    """Another build's routes: a page's file written again, a list page with a query too, one route gone, two
    new (one before every other route, one after), a page that gets headers of its own."""
    found = {route: dict(info) for route, info in routes.items() if route != gone}
    file = found[hashed_page]["file"]
    found[hashed_page].update(file=file.replace(".", ".new.", 1), etag="0123456789ab")
    found[query].update(file=found[query]["file"].replace(".", ".new.", 1), etag="ba9876543210")
    found["/!first"] = {"file": "first.json", "etag": "aaaaaaaaaaaa", "type": routes[query]["type"], "hashed": False}
    found["/~last/"] = {"file": "last/index.html", "etag": "bbbbbbbbbbbb", "type": routes["/"]["type"], "hashed": False}
    page = next(route for route, info in found.items() if route.startswith("/names/") and not info["hashed"])
    found[page]["headers"] = {"Link": "</x>; rel=alternate"}
    return found


@pytest.mark.parametrize("origin,signed", [(None, False), ("https://runtime.example", False),
                                           ("https://runtime.example", True)])
def test_patched_files_are_the_files_made_route_by_route(dist: Path, tmp_path: Path, origin: str | None,
                                                         signed: bool) -> None:
    routes = orjson.loads((dist / MANIFEST).read_bytes())["routes"]
    extra = {"version": 1, **({"runtime_origin": origin} if origin else {}),
             **({"signed_proxies": True} if signed else {})}
    first, layout = write(tmp_path / "first", routes, extra, LastRules(None, dict, tmp_path))
    assert layout is not None and first == write(tmp_path / "plain", routes, extra)[0]
    hashed_page = next(route for route, info in routes.items() if route.startswith("/api/names/") and info["hashed"])
    query = next(route for route in routes if "?" in route)
    gone = next(route for route in routes if route.startswith("/names/") and route.endswith("/"))
    bare = query.partition("?")[0]  # the first route of its path: its clean URL block comes with it
    moved = {**routes, bare: {**routes[bare], "file": "moved.json", "etag": "cccccccccccc"}}
    changes = [edited(routes, hashed_page, query, gone), routes, moved]  # and back, and the first of a path
    last, source = routes, tmp_path / "first"
    for number, changed in enumerate(changes):
        layout = stored_layout(marshal.loads(marshal.dumps(layout.stored())))  # as the build state keeps it
        assert layout is not None
        made = layout.patch(changed, last, source, origin, signed)
        assert made is not None
        before = LastRules(layout, dict(last).copy, source)
        files, layout = write(tmp_path / f"patched{number}", changed, extra, before)
        expected = write(tmp_path / f"expected{number}", changed, extra)[0]
        assert files == expected and (files["_headers"], files["_redirects"]) == made[:2]
        ordered = {route: changed[route] for route in made.layout.order}
        assert before.route_pack(made, ordered, extra, len(files[MANIFEST])) == files["_routes.pack"]
        assert (expected == first) == (number == 1)
        last, source = changed, tmp_path / f"patched{number}"


def test_what_cannot_be_patched_is_made_route_by_route(dist: Path, tmp_path: Path) -> None:
    """Another runtime origin, a path with queries that gains one, a file of the last build changed since: the files
    are made route by route (the same bytes as ever) and give the next build a layout."""
    routes = orjson.loads((dist / MANIFEST).read_bytes())["routes"]
    extra = {"version": 1}
    _, layout = write(tmp_path / "first", routes, extra, LastRules(None, dict, tmp_path))
    assert layout is not None
    query = next(route for route in routes if "?" in route)
    more = {**routes, query + "&x=1": routes[query]}
    source = tmp_path / "first"
    assert layout.patch(routes, routes, source, "https://runtime.example", False) is None
    assert layout.patch(more, routes, source, None, False) is None
    assert layout.patch(routes, routes, source, None, False) is not None
    (source / "_headers").write_bytes((source / "_headers").read_bytes() + b"\n# by hand\n")
    assert layout.patch(routes, routes, source, None, False) is None
    files, again = write(tmp_path / "second", more, extra, LastRules(layout, lambda: routes, source))
    assert again is not None and files == write(tmp_path / "expected", more, extra)[0]

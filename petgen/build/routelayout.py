"""The last build's `_headers` and `_redirects`, patched where routes changed instead of made again route by route.

Both files are a head, then a part per route in the order of the manifest (a block of `_headers`, a rewrite in
`_redirects`; some routes have none), then a tail. Made route by route that is a tenth of a second at 10,000
entries; a rebuild after one edit (`Edit.finish` in petgen/build/pipeline.py) changes the records of a few dozen
routes. So an incremental build keeps in the build state where each route's part lies in the live tree's files
(`Layout`), and the next one copies the bytes between the parts of the routes whose record changed and makes only
those (`Layout.patch`).

It does so only where that gives the bytes a build route by route would: the same routes as the last build (so
the same order), the same runtime origin and signing, and the live tree's files as that build wrote them (their
content hashes). The routes of a path with precomputed queries depend on each other (a clean URL's block of
`_headers` comes with the first of its routes; `_redirects` lists their rules together, before the rewrites):
where one of them changed, all of that path's are made again, and the head of `_redirects` with them. Anything
else (an entry added, renamed or deleted) is built route by route, and gives the next build its layout.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate, chain, compress
from operator import ne
from pathlib import Path
from typing import Any, NamedTuple

from petgen.build.dist import (
    GONE,
    Routes,
    Unit,
    content_hash,
    edited_runs,
    header_blocks,
    header_texts,
    headers_head,
)
from petgen.build.files import read_file
from petgen.emit.redirects import FileRule, Split, file_rule, precomputed_rule, redirects_frame, split_routes

Segments = tuple[str, int, bytes]  # a file's content hash, where its routes' parts begin, each part's length (int64)


@dataclass
class Layout:
    """Where the parts of each route lie in a build's `_headers` and `_redirects` (stored in the build state)."""

    order: list[str]  # the routes, in the order of the manifest
    queries: list[str]  # the paths with precomputed queries
    origin: str | None
    signed: bool
    headers: Segments
    redirects: Segments
    pack: str = ""  # the content hash of the route pack

    def stored(self) -> tuple[Any, ...]:
        return self.order, self.queries, self.origin, self.signed, self.headers, self.redirects, self.pack

    @classmethod
    def of(cls, routes: Routes, split: Split, texts: list[str | None], origin: str | None, signed: bool,
           etags: tuple[str, str, str]) -> Layout:
        """The layout of the files written route by route from `routes` (in order), `split` and `texts`."""
        head = redirects_frame(split[0], origin, signed)[0]
        return cls(list(routes), list(split[0]), origin, signed,
                   (etags[0], len(headers_head().encode()), _lengths(texts)),
                   (etags[1], len(head.encode()), _lengths(split[1])), etags[2])

    def patch(self, routes: Routes, last: Routes, source: Path, origin: str | None, signed: bool
              ) -> Patched | None:
        """`_headers` and `_redirects` of `routes` (any order) made from the files in `source` (the live tree), whose
        routes had the records `last` (those it lacks count as changed), and their layout; None where that would not
        give the same bytes as route by route (see the module)."""
        order, queries = self.order, set(self.queries)
        if origin != self.origin or signed != self.signed:
            return None
        changed: dict[int, str] = {}  # where in `order`
        added: list[tuple[int, str]] = []  # before which route of `order`
        for route in compress(routes, map(ne, map(last.get, routes), routes.values())):
            at = bisect_left(order, route)
            if at < len(order) and order[at] == route:
                changed[at] = route
            else:
                added.append((at, route))
        gone = set(order).difference(routes) if len(order) + len(added) != len(routes) else ()
        removed = [bisect_left(order, route) for route in gone]
        if any("?" in route or route in queries for route in [*(route for _, route in added),
                                                               *(order[at] for at in removed)]):
            return None  # the paths with queries, or their routes, are others
        try:
            old_headers, old_redirects = (read_file(source / name) for name in ("_headers", "_redirects"))
        except OSError:
            return None
        if content_hash(old_headers) != self.headers[0] or content_hash(old_redirects) != self.redirects[0]:
            return None
        rule = file_rule(origin)
        edits: list[tuple[int, int, str]] = []  # (where, 0: insert before it or 1: replace it, route or GONE)
        edits += ((at, 0, route) for at, route in added)
        edits += ((at, 1, GONE) for at in removed)
        edits += ((at, 1, route) for at, route in changed.items())
        texts: dict[str, str | None] = {}
        rules: dict[str, str | None] = {}
        for _, _, route in edits:
            if route is not GONE and route.partition("?")[0] not in queries:
                texts[route] = header_texts([(route, routes[route])])[0]
                rules[route] = rule(route, routes[route])
        by_path: dict[str, list[str]] = {}
        for route in changed.values():
            if (path := route.partition("?")[0]) in queries:
                by_path.setdefault(path, []).append(route)
        for path, members in by_path.items():  # no rewrites: the head of `_redirects` has their rules
            edits += self._path_texts(path, members, routes, texts)
        rules.update((route, None) for route in texts.keys() - rules.keys())
        head = self._head(old_redirects, by_path, routes, last, rule) if by_path else None
        edits = sorted(set(edits))
        new_order = list(chain.from_iterable(edited_runs(order, edits, lambda route: [route])))
        headers, header_lengths = _patched(old_headers, self.headers, edits, texts, None)
        redirects, rule_lengths = _patched(old_redirects, self.redirects, edits, rules, head)
        layout = Layout(new_order, self.queries, origin, signed, ("", self.headers[1], header_lengths),
                        ("", len(head) if head is not None else self.redirects[1], rule_lengths))
        return Patched(headers, redirects, layout, edits)

    def _path_texts(self, path: str, changed: list[str], routes: Routes, texts: dict[str, str | None]
                    ) -> list[tuple[int, int, str]]:
        """The blocks of `_headers` of the `changed` routes of a path with precomputed queries, as `header_texts`
        makes them: its first route's clean URL block comes with it, the others have their file's block alone. If
        the first changed (or has no clean URL block), every route of the path is made again (the edits to add)."""
        order = self.order
        members = self._members(path)
        first = order[members[0]]
        if first in changed or header_blocks(first, routes[first])[2] is None:
            every = [order[at] for at in members]
            texts.update(zip(every, header_texts([(route, routes[route]) for route in every])))
            return [(at, 1, route) for at, route in zip(members, every)]
        texts.update((route, header_blocks(route, routes[route])[0]) for route in changed)
        return []

    def _head(self, old: bytes, by_path: dict[str, list[str]], routes: Routes, last: Routes, rule: FileRule) -> bytes:
        """The head of `_redirects` (the rules of the paths with queries) with the rules of the `changed` routes of
        those paths put in place of their last ones; made again from every such route where one had no record."""
        head = old[:self.redirects[1]]
        for route in chain.from_iterable(by_path.values()):
            before = last.get(route)
            if before is None:
                break
            was, now = (precomputed_rule(route, info, self.origin) for info in (before, routes[route]))
            if was != now:
                if was is None or now is None or head.count(f"\n{was}\n".encode()) != 1:
                    break
                head = head.replace(f"\n{was}\n".encode(), f"\n{now}\n".encode())
        else:
            return head
        members = {self.order[at]: routes[self.order[at]] for path in self.queries for at in self._members(path)}
        return redirects_frame(split_routes(members, rule)[0], self.origin, self.signed)[0].encode()

    def _members(self, path: str) -> list[int]:
        """Where the routes of a path with precomputed queries are in `order`: the bare path's (if a route),
        then those with a query (together: no other route begins with the path and a question mark)."""
        order = self.order
        bare = bisect_left(order, path)
        first = [bare] if bare < len(order) and order[bare] == path else []
        return first + list(range(bisect_left(order, path + "?"), bisect_left(order, path + "@")))

    def written(self, etags: tuple[str, str, str]) -> Layout:
        """The layout with the content hashes of the files as written."""
        return Layout(self.order, self.queries, self.origin, self.signed, (etags[0], *self.headers[1:]),
                      (etags[1], *self.redirects[1:]), etags[2])


class Patched(NamedTuple):
    """`_headers` and `_redirects` patched, their layout, and the `edits` that made them: (where in the last build's
    order, 0: a route inserted before that one or 1: put in its place, the route or GONE), in order."""

    headers: bytes
    redirects: bytes
    layout: Layout
    edits: list[tuple[int, int, str]]


@dataclass
class LastRules:
    """What an incremental build has of the last build's `_headers` and `_redirects`: their `Layout` (None: none
    kept), the records of its routes (made when needed) and the tree it wrote (the live one)."""

    layout: Layout | None
    records: Callable[[], Routes]
    source: Path

    def patch(self, routes: Routes, origin: str | None, signed: bool) -> Patched | None:
        if self.layout is None:
            return None
        return self.layout.patch(routes, self.records(), self.source, origin, signed)

    def route_pack(self, patched: Patched, routes: Routes, manifest: dict[str, Any], manifest_size: int
                   ) -> bytes | None:
        """The route pack of `routes` (in order), the last build's patched with the edits that made `patched`; None
        where that build's is not as it wrote it, or cannot be patched (`patch_route_pack`)."""
        from petgen.build.distpack import ROUTE_PACK, patch_route_pack  # numpy: not imported before it is used
        from petgen.search.packfile import Pack

        assert self.layout is not None
        try:
            old = read_file(self.source / ROUTE_PACK)
        except OSError:
            return None
        if content_hash(old) != self.layout.pack:
            return None
        return patch_route_pack(Pack(old), patched.edits, routes, manifest, manifest_size)


def stored_layout(found: tuple[Any, ...] | None) -> Layout | None:
    return Layout(*found) if found is not None else None


def last_records(groups: Iterable[Routes], units: Iterable[Unit]) -> Routes:
    """The records of the last build's routes, of its entries (`groups`) and its units."""
    found: Routes = {}
    for routes in groups:
        found.update(routes)
    for unit in units:
        found.update(unit[1])
    return found


def _lengths(parts: list[str | None]) -> bytes:
    """Each part's length in its file: a line end and its UTF-8 bytes (none for none)."""
    return array("q", [len(part.encode()) + 1 if part else 0 for part in parts]).tobytes()


def _patched(old: bytes, segments: Segments, edits: list[tuple[int, int, str]], parts: dict[str, str | None],
             head: bytes | None) -> tuple[bytes, bytes]:
    """`old`, a file of the last build, with the `edits` made to the routes' parts (their new parts in `parts`) and
    its head replaced (if given), and the lengths of the parts."""
    _, start, stored = segments
    lengths = array("q")
    lengths.frombytes(stored)
    starts = list(accumulate(lengths, initial=start))
    new = {route: f"\n{part}".encode() if part else b"" for route, part in parts.items()}
    pieces = [head if head is not None else old[:start]]
    at = start
    for where, replace, route in edits:
        pieces.append(old[at:starts[where]])
        at = starts[where + replace]
        if route is not GONE:
            pieces.append(new[route])
    pieces.append(old[at:])
    sizes = edited_runs(lengths, edits, lambda route: array("q", [len(new[route])]))
    return b"".join(pieces), b"".join(size.tobytes() for size in sizes)

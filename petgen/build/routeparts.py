"""What the files that list every route make of each one, made ahead for the routes a build knows early.

Besides the manifest, `DistWriter.write_manifest` writes `_headers`, `_redirects` and `_routes.pack`, each a
function of every route in order: 20,000 and more at 10,000 entries, a tenth of a second to go through one by
one. A rebuild after one edit (petgen/build/pipeline.py, `Edit.finish`) knows all but a thousand of them, its
own, while its child still writes the rest (the JSON API and the search index): it adds them here meanwhile
(`RouteParts.add`), in order, with their blocks of `_headers`, their rules in `_redirects` and the hashes of
their paths, and after the child only the child's routes are made and put in their places (`merged`).

The result is the same bytes as made route by route (tests/petgen/test_incremental.py): a part is used only for
the very record it was made of, and the routes are merged only where no path is in both sets (a clean URL's
block of `_headers` comes with the first of its routes) and the early ones name no query (`_redirects` groups
a path's queries); else `write_manifest` goes route by route, using what was made.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from operator import is_
from typing import Any

from petgen.build.dist import HeaderBlocks, Routes, header_blocks, header_texts
from petgen.emit.redirects import Split, file_rule, split_routes


@dataclass
class Merged:
    """Every route in order, with what `_headers` and `_redirects` make of each (`header_texts`, `split_routes`)."""

    order: list[str]
    headers: list[str | None]
    split: Split


class RouteParts:
    """Each route's blocks of `_headers` (`header_blocks`), its rule in `_redirects` (`file_rule`) and the hashes
    of its paths in `_routes.pack` (`hashes`): made when `write_manifest` asks for them, or ahead (`add`)."""

    def __init__(self, runtime_origin: str | None) -> None:
        self._file_rule = file_rule(runtime_origin)
        self._made: dict[str, tuple[dict[str, Any], HeaderBlocks, str | None]] = {}
        self.hashes: dict[str, int] = {}  # a path (a route, or a hashed file's) -> its `route_hash`
        self._order: list[str] = []  # the routes added, in order
        self._records: list[dict[str, Any]] = []  # their records, in that order
        self._paths: set[str] = set()  # their paths (without a query)
        self._texts: list[str | None] = []  # their `header_texts`
        self._rules: list[str | None] = []  # their rules in `_redirects`
        self._queries = False  # whether one of them names a query
        self._pending: Iterator[tuple[str, dict[str, Any]]] | None = None  # what `add_some` has still to make

    def add(self, routes: Routes) -> None:
        """Make the parts of `routes` now."""
        self._add(list(routes.items()))
        self._lay_out()

    def add_some(self, routes: Routes, count: int = 2000) -> bool:
        """Make the parts of the next `count` of `routes` (the same routes at every call), and once all are made,
        lay them out in order; False when that is done. A build adds its routes so while its child still writes:
        it stops when the child is done, and `merged` makes what is left."""
        if self._pending is None:
            self._pending = iter(list(routes.items()))
        some = list(islice(self._pending, count))
        self._add(some)
        if len(some) < count:
            self._lay_out()
            return False
        return True

    def _add(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        from petgen.build.distpack import route_hashes  # not at the top: petgen.content imports the dist modules

        rule, made = self._file_rule, self._made
        for route, info in items:
            made[route] = (info, header_blocks(route, info), rule(route, info))
        paths = [*(route for route, _ in items), *("/" + info["file"] for _, info in items if info["hashed"])]
        self.hashes.update(zip(paths, route_hashes(paths).tolist()))
        self._order = []

    def _lay_out(self) -> None:
        """The routes made, in order, with what `merged` takes of them."""
        made = self._made
        self._order = sorted(made)
        self._records = [made[route][0] for route in self._order]
        self._paths = {route.partition("?")[0] for route in self._order}
        self._texts = header_texts([(route, made[route][0]) for route in self._order], self.blocks)
        self._rules = [made[route][2] for route in self._order]
        self._queries = any("?" in route for route in self._order)

    def blocks(self, route: str, info: dict[str, Any]) -> HeaderBlocks:
        found = self._made.get(route)
        return found[1] if found is not None and found[0] is info else header_blocks(route, info)

    def rule(self, route: str, info: dict[str, Any]) -> str | None:
        found = self._made.get(route)
        return found[2] if found is not None and found[0] is info else self._file_rule(route, info)

    def merged(self, routes: Routes) -> Merged | None:
        """`routes` in order with their `Merged` parts, made of those added ahead and the rest's; None when none
        were added, one of them is no longer in `routes` as it was, or they cannot be merged (see the module)."""
        if self._made and not self._order:
            self._lay_out()
        order = self._order
        if not order or self._queries or not all(map(is_, map(routes.get, order), self._records)):
            return None
        rest = {route: routes[route] for route in sorted(routes.keys() - self._made.keys())}
        if not self._paths.isdisjoint(route.partition("?")[0] for route in rest):
            return None
        queries, rules = split_routes(rest, self.rule)
        texts = header_texts(rest.items(), self.blocks)
        merged, headers, merged_rules = [], [], []
        done = 0
        for n, route in enumerate(rest):  # each of the rest after the routes added ahead that come before it
            at = bisect_left(order, route, done)
            if at > done:
                merged += order[done:at]
                headers += self._texts[done:at]
                merged_rules += self._rules[done:at]
                done = at
            merged.append(route)
            headers.append(texts[n])
            merged_rules.append(rules[n])
        merged += order[done:]
        headers += self._texts[done:]
        merged_rules += self._rules[done:]
        return Merged(merged, headers, (queries, merged_rules))

"""The tables the runtime loads from a build, written by the build in a form it maps instead of parsing.

`_manifest.json` and `_data/index.json` stay for every other reader; beside them the build writes

- `_routes.pack`: the manifest's routes as flat arrays (paths, files, ETags as string tables; a
  content type number per route; the extra headers, the rest of the manifest and its size in the header),
  plus a lookup table: the sorted `route_hash` of every path the runtime answers (a clean route,
  or a hashed file path) and, for each, the route it belongs to;
- `_data/summaries.pack`: the name summaries (each its JSON text, in list order), their slugs and
  titles as string tables, the documents of every list filter value (`FILTER_DOCS`), how many other
  entries name each one as related (`cited`, the data file's `cited`: /ask's sign of how common a name
  is), and the rest of the data file in the header.

Both are pack files (petgen/search/packfile.py): a JSON header, then aligned little-endian arrays. The
runtime maps them (runtime/builds/routes.py, summaries.py): a load does no work per route or entry.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain, compress, repeat
from operator import attrgetter, contains
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from xxhash import xxh3_64_intdigest

from petgen.build.dist import GONE, MANIFEST, edited_runs
from petgen.content.model import EVERY_REGION, FILTER_FACETS, SUPRAREGIONAL
from petgen.contract.resources import LIST_FILTERS
from petgen.search.packfile import Pack, write_pack

ROUTE_PACK = "_routes.pack"
SUMMARY_PACK = "_data/summaries.pack"
FIELD = {"category": "categories", "mood": "moods"}  # the summary field of a list filter, where named otherwise
Summary = dict[str, Any]


ROUTE_HASH = "xxh3-64"  # named in the route pack: a runtime finds routes only in a table of the hash it computes


def route_hash(path: str) -> int:
    """A hash of a path that every process computes alike (Python's `hash` of a str differs per process): the
    XXH3 hash of its UTF-8 bytes, as a signed 64-bit integer (a sixth of the time BLAKE2b took, per request too)."""
    value = xxh3_64_intdigest(path.encode())
    return value - (1 << 64) if value >= 1 << 63 else value


def route_hashes(paths: list[str]) -> np.ndarray:
    """`route_hash` of each path, as an array."""
    return np.fromiter(map(xxh3_64_intdigest, map(str.encode, paths)), dtype=np.uint64, count=len(paths)).view("<i8")


def hashes_of(paths: list[str], known: dict[str, int] | None) -> np.ndarray:
    """`route_hashes(paths)`, of those in `known` as found there (the rest hashed, and added to it)."""
    if known is None:
        return route_hashes(paths)
    missing = [path for path in paths if path not in known]
    if missing:
        known.update(zip(missing, route_hashes(missing).tolist()))
    return np.fromiter(map(known.__getitem__, paths), dtype="<i8", count=len(paths))


def string_table(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of `values` one after the other, and the N + 1 offsets where each begins and ends."""
    text = "".join(values)
    blob = text.encode()
    if len(blob) == len(text):  # ASCII: one byte per character
        lengths = np.fromiter(map(len, values), dtype=np.uint64, count=len(values))
    else:
        lengths = np.fromiter(map(len, map(str.encode, values)), dtype=np.uint64, count=len(values))
    ends = np.cumsum(lengths, dtype=np.uint64)
    if len(ends) and ends[-1] >= 1 << 32:
        raise ValueError("more than 4 GB of strings")
    return np.frombuffer(blob, dtype=np.uint8), np.concatenate(([0], ends)).astype(np.uint32)


def strings(arrays: dict[str, np.ndarray], name: str, values: list[str]) -> None:
    arrays[name], arrays[f"{name}_offsets"] = string_table(values)


def route_pack(routes: dict[str, dict[str, Any]], manifest: dict[str, Any], manifest_size: int | None = None,
               known: dict[str, int] | None = None) -> bytes:
    """`_routes.pack` of a build whose manifest is `manifest` (without routes) and `routes`, written in
    `manifest_size` bytes: the runtime checks that size, so that a manifest and a route table of
    different builds (or a broken manifest) are not loaded together. `known`: `route_hash` of paths hashed
    before (the others are added to it)."""
    paths, infos = list(routes), list(routes.values())
    files = [info["file"] for info in infos]
    types = sorted({info["type"] for info in infos})
    type_index = {t: n for n, t in enumerate(types)}
    arrays: dict[str, np.ndarray] = {}
    strings(arrays, "paths", paths)
    strings(arrays, "files", files)
    strings(arrays, "etags", [info["etag"] for info in infos])
    arrays["type_of"] = np.array([type_index[info["type"]] for info in infos], dtype=np.uint8)
    # Every key: 2 * route number for the clean route, 2 * route number + 1 for its hashed file path.
    # A hashed route at its own file path (a search shard) is immutable, as its file path always is.
    hashed = [n for n, info in enumerate(infos) if info["hashed"]]
    file_paths = ["/" + files[n] for n in hashed]
    clean = np.ones(len(paths), dtype=bool)
    clean[[n for n, path in zip(hashed, file_paths) if paths[n] == path]] = False
    keys = np.concatenate([hashes_of(paths, known)[clean], hashes_of(file_paths, known)])
    targets = np.concatenate([2 * np.flatnonzero(clean), 2 * np.asarray(hashed, dtype=np.int64) + 1])
    order = np.argsort(keys, kind="stable")
    arrays["hashes"] = keys[order]
    arrays["targets"] = targets[order].astype(np.uint32)
    extra = {str(n): info["headers"] for n, info in enumerate(infos) if info.get("headers")}
    return write_pack(arrays, {"manifest": manifest, "manifestSize": manifest_size, "types": types, "extra": extra,
                               "routeHash": ROUTE_HASH})


def patch_route_pack(old: Pack, edits: list[tuple[int, int, str]], routes: dict[str, dict[str, Any]],
                     manifest: dict[str, Any], manifest_size: int) -> bytes | None:
    """`route_pack` of `routes` (in order) made from `old`, the last build's, by `edits` to its routes (in order:
    where in its order, 0: a route inserted before that one or 1: put in its place, the route or GONE; every route
    whose record changed is put in its place): the same bytes, in time for the edits rather than the routes. None
    where it cannot be (a content type that was not there or is gone, two keys alike)."""
    types: list[str] = old.meta["types"]
    type_index = {t: n for n, t in enumerate(types)}
    made, number, kept = _numbered(edits, len(old["type_of"]))
    infos = [routes[route] for route in made]
    if any(info["type"] not in type_index for info in infos):
        return None
    arrays: dict[str, np.ndarray] = {}
    for name, values in (("paths", list(made)), ("files", [info["file"] for info in infos]),
                         ("etags", [info["etag"] for info in infos])):
        arrays[name], arrays[f"{name}_offsets"] = _edited_table(old[name], old[f"{name}_offsets"], edits, values)
    type_of = np.array([type_index[info["type"]] for info in infos], dtype=np.uint8)
    slices = iter([type_of[n:n + 1] for n in range(len(made))])  # in the order of `made`: that of the edits
    runs = edited_runs(old["type_of"], edits, lambda _route: next(slices))
    arrays["type_of"] = np.concatenate(runs)
    if len(arrays["type_of"]) != len(routes) or not np.bincount(arrays["type_of"], minlength=len(types)).all():
        return None
    # The keys of the routes kept point to their new numbers; those of the routes made are added.
    targets = old["targets"].astype(np.int64)
    keep = kept[targets >> 1]
    keys, targets = [old["hashes"][keep]], [number[targets[keep] >> 1] * 2 + (targets[keep] & 1)]
    for (route, n), info in zip(made.items(), infos):
        file = "/" + info["file"]
        if not (info["hashed"] and route == file):
            keys.append(np.array([route_hash(route)], dtype="<i8"))
            targets.append(np.array([2 * n], dtype=np.int64))
        if info["hashed"]:
            keys.append(np.array([route_hash(file)], dtype="<i8"))
            targets.append(np.array([2 * n + 1], dtype=np.int64))
    all_keys, all_targets = np.concatenate(keys), np.concatenate(targets)
    order = np.argsort(all_keys, kind="stable")
    arrays["hashes"] = all_keys[order]
    if bool((arrays["hashes"][1:] == arrays["hashes"][:-1]).any()):
        return None  # the order of keys alike depends on where they were in the full build's list
    arrays["targets"] = all_targets[order].astype(np.uint32)
    extra = {int(number[int(n)]): headers for n, headers in old.meta["extra"].items() if kept[int(n)]}
    extra.update((n, info["headers"]) for (route, n), info in zip(made.items(), infos) if info.get("headers"))
    return write_pack(arrays, {"manifest": manifest, "manifestSize": manifest_size, "types": types,
                               "extra": {str(n): extra[n] for n in sorted(extra)}, "routeHash": ROUTE_HASH})


def _numbered(edits: list[tuple[int, int, str]], count: int) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """The routes the `edits` make, with their numbers in the new order; for each route of the old one, its new
    number, and whether it is kept as it was (not gone, not made again)."""
    made: dict[str, int] = {}
    shift = np.zeros(count + 1, dtype=np.int64)
    kept = np.ones(count + 1, dtype=bool)
    offset = 0  # the new number of a route less its old one, at the point of the edit
    for where, replace, route in edits:
        if route is not GONE:
            made[route] = where + offset
        if not replace:
            offset += 1
            shift[where] += 1
        else:
            kept[where] = False
            if route is GONE:
                offset -= 1
                shift[where + 1] -= 1
    return made, np.arange(count + 1) + np.cumsum(shift), kept


def _edited_table(blob: np.ndarray, offsets: np.ndarray, edits: list[tuple[int, int, str]],
                  values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """`string_table` of the strings of an old one (`blob`, `offsets`) with the `edits` made (the new `values`)."""
    encoded = [np.frombuffer(value.encode(), dtype=np.uint8) for value in values]
    lengths = np.diff(offsets.astype(np.int64))
    pieces, sizes, at, made = [], [], 0, iter(encoded)
    for where, replace, route in edits:
        pieces.append(blob[offsets[at]:offsets[where]])
        sizes.append(lengths[at:where])
        at = where + replace
        if route is not GONE:
            value = next(made)
            pieces.append(value)
            sizes.append(np.array([len(value)], dtype=np.int64))
    pieces.append(blob[offsets[at]:])
    sizes.append(lengths[at:])
    ends = np.cumsum(np.concatenate(sizes), dtype=np.uint64)
    if len(ends) and ends[-1] >= 1 << 32:
        raise ValueError("more than 4 GB of strings")
    return np.concatenate(pieces), np.concatenate(([0], ends)).astype(np.uint32)


def built_manifest(dist: Path) -> dict[str, Any]:
    """The manifest of the build in `dist` without its routes: from the header of its route pack (a
    parse of the whole `_manifest.json` takes half a second at 50,000 entries), else from the JSON."""
    try:
        return Pack.open(dist / ROUTE_PACK).meta["manifest"]  # type: ignore[no-any-return]
    except FileNotFoundError:
        manifest = orjson.loads((dist / MANIFEST).read_bytes())
        manifest.pop("routes", None)
        return manifest  # type: ignore[no-any-return]


def documents_by_value(items: list[Summary], field: str) -> dict[str, list[int]]:
    """Each value of a field (a slug or a list of slugs) -> the documents that have it, ascending, and
    EVERY_REGION -> those with any value but SUPRAREGIONAL (as `facet_matches` has it)."""
    found: dict[str, list[int]] = {}
    every: list[int] = []
    for doc, item in enumerate(items):
        value = item.get(field)
        if value is None:
            continue
        for v in (value,) if isinstance(value, str) else value:
            docs = found.get(v)
            if docs is None:
                found[v] = [doc]
            elif docs[-1] != doc:  # a value listed twice selects the item once
                docs.append(doc)
            if v != SUPRAREGIONAL and (not every or every[-1] != doc):
                every.append(doc)
    found.setdefault(EVERY_REGION, every)
    return found


def filter_documents(items: list[Summary], data: dict[str, Any]) -> dict[tuple[str, str], list[int]]:
    """For every list filter and each of its values in the data file's vocabulary, the documents it selects
    (as `petgen.contract.resources.filter_summaries`); an alias category holds those with its facet value."""
    vocabulary = {"category": data["categories"], "mood": data["moods"], **data["facets"]}
    aliases = data["aliases"]
    by_field = {field: documents_by_value(items, field) for field in ("categories", "moods", *FILTER_FACETS)}
    found: dict[tuple[str, str], list[int]] = {}
    for name in LIST_FILTERS:
        for value in vocabulary.get(name, []):
            field, wanted = FIELD.get(name, name), value
            if name == "category" and value in aliases:
                field, wanted = aliases[value]
            by_value = by_field.get(field)
            if by_value is None:
                by_value = by_field[field] = documents_by_value(items, field)
            found[name, value] = by_value.get(wanted, [])
    return found


def citations(entries: list[Any], slugs: list[str] | None = None) -> list[int]:
    """For each entry (in list order), how many other entries name it among their related ones (`slugs`: the
    entries' slugs, if at hand). One count over every entry's related slugs, each named once per entry."""
    slugs = slugs if slugs is not None else [entry.slug for entry in entries]
    related = list(map(attrgetter("related"), entries))
    named = Counter(chain.from_iterable(map(set, related)))
    for slug in compress(slugs, map(contains, related, slugs)):  # an entry naming itself is not named by another
        named[slug] -= 1
    return list(map(named.get, slugs, repeat(0)))


def summary_pack(data: dict[str, Any], encoded: list[bytes] | None = None, *,
                 known: tuple[list[str], list[str], dict[tuple[str, str], list[int]]] | None = None) -> bytes:
    """`_data/summaries.pack` of the data file `data` (`_data/index.json`); `encoded`: its items as JSON, if
    encoded already; `known`: their slugs, titles and `filter_documents`, if known already (then `data` need
    not hold the items)."""
    items: list[Summary] = data["items"]
    encoded = encoded if encoded is not None else list(map(orjson.dumps, items))
    slugs, titles, docs = known if known is not None else (
        [item["slug"] for item in items], [item["title"] for item in items], filter_documents(items, data))
    arrays: dict[str, np.ndarray] = {
        "items": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "ends": np.cumsum(np.fromiter(map(len, encoded), dtype=np.uint64, count=len(encoded)), dtype=np.uint64),
    }
    strings(arrays, "slugs", slugs)
    strings(arrays, "titles", titles)
    starts = np.cumsum([0, *map(len, docs.values())])
    arrays["docs"] = np.fromiter(chain.from_iterable(docs.values()), dtype=np.uint32, count=int(starts[-1]))
    filters = [[name, value, int(start), len(found)] for ((name, value), found), start in zip(docs.items(), starts)]
    arrays["cited"] = np.asarray(data.get("cited") or np.zeros(len(encoded)), dtype=np.uint32)
    rest = {key: value for key, value in data.items() if key not in ("items", "cited")}
    return write_pack(arrays, {"data": rest, "filters": filters, "count": len(encoded)})

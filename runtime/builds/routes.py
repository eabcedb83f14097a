"""The manifest's route table in a compact form: a few flat arrays instead of a Python object per route.

At 50,000 entries the manifest names about 105,000 routes and 55,000 hashed file paths. As dicts of
strings they took ~75 MB; here each costs the UTF-8 bytes of its path, file name and ETag plus 24
bytes of arrays. A path is found by the hash of its text, binary-searched in a sorted array, and
then compared with the stored text, so a lookup is exact.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np


class Strings:
    """Many short strings in one buffer, by index."""

    def __init__(self, values: Iterable[str]) -> None:
        values = values if isinstance(values, list) else list(values)
        text = "".join(values)
        blob = text.encode()
        if len(blob) == len(text):  # ASCII, as routes, file names and ETags are: one length per character
            lengths = np.fromiter(map(len, values), dtype=np.uint64, count=len(values))
        else:
            lengths = np.fromiter((len(v.encode()) for v in values), dtype=np.uint64, count=len(values))
        ends = np.cumsum(lengths, dtype=np.uint64)
        if len(ends) and ends[-1] >= 1 << 32:
            raise ValueError("more than 4 GB of strings")
        self.blob = blob
        self.offsets = array("I", np.concatenate(([0], ends)).astype(np.uint32).tobytes())

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def raw(self, i: int) -> bytes:
        return self.blob[self.offsets[i]:self.offsets[i + 1]]

    def __getitem__(self, i: int) -> str:
        return self.raw(i).decode()


@dataclass(frozen=True)
class Route:
    """One manifest route, or the hashed file path of one (`immutable`)."""

    file: str  # relative to the dist root
    etag: str
    content_type: str
    immutable: bool
    headers: dict[str, str] | None  # extra headers of the clean route


class RouteTable:
    """Clean routes (`/api/names/baerchen`, `/api/names?category=tiere`) and hashed file paths
    (`/api/names/baerchen.8f3c9a1b2c3d.json`) of one build, as the manifest lists them."""

    def __init__(self, routes: dict[str, dict[str, Any]]) -> None:
        paths, infos = list(routes), list(routes.values())
        files = [info["file"] for info in infos]
        self.paths = Strings(paths)  # in manifest order: index = route number
        self.files = Strings(files)
        self.etags = Strings([info["etag"] for info in infos])
        self.types = sorted({info["type"] for info in infos})
        type_index = {t: n for n, t in enumerate(self.types)}
        self.type_of = array("B", [type_index[info["type"]] for info in infos])
        self.extra = {n: info["headers"] for n, info in enumerate(infos) if info.get("headers")}
        # Every key: 2 * route number for the clean route, 2 * route number + 1 for its hashed file path.
        # A hashed route at its own file path (a search shard) is immutable, as its file path always is.
        hashed = [n for n, info in enumerate(infos) if info["hashed"]]
        file_paths = ["/" + files[n] for n in hashed]
        clean = np.ones(len(paths), dtype=bool)
        clean[[n for n, path in zip(hashed, file_paths) if paths[n] == path]] = False
        keys = np.concatenate([np.fromiter(map(hash, paths), dtype=np.int64, count=len(paths))[clean],
                               np.fromiter(map(hash, file_paths), dtype=np.int64, count=len(file_paths))])
        targets = np.concatenate([2 * np.flatnonzero(clean), 2 * np.asarray(hashed, dtype=np.int64) + 1])
        order = np.argsort(keys, kind="stable")
        self.hashes = array("q", keys[order].tobytes())
        self.targets = array("I", targets[order].astype(np.uint32).tobytes())
        self.size = len(keys)

    def __len__(self) -> int:
        return self.size

    def find(self, path: str) -> int:
        """The key of a path (2n for route n, 2n + 1 for its hashed file path), or -1."""
        h = hash(path)
        i = bisect.bisect_left(self.hashes, h)
        hashes, size = self.hashes, self.size
        while i < size and hashes[i] == h:
            key = self.targets[i]
            n = key >> 1
            if (self.paths[n] if not key & 1 else "/" + self.files[n]) == path:
                return key
            i += 1
        return -1

    def route(self, key: int) -> Route:
        n = key >> 1
        return Route(self.files[n], self.etags[n], self.types[self.type_of[n]], bool(key & 1),
                     None if key & 1 else self.extra.get(n))

    def __iter__(self) -> Iterator[str]:
        """Every path this table answers (in no particular order)."""
        for key in self.targets:
            yield self.paths[key >> 1] if not key & 1 else "/" + self.files[key >> 1]

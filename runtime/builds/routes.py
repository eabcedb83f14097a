"""The manifest's route table as the build wrote it for the runtime (`_routes.pack`, petgen/build/distpack.py).

At 50,000 entries the manifest names about 105,000 routes and 55,000 hashed file paths. Parsed from
JSON they took ~75 MB and a second to load; here they are arrays in a file mapped into memory (shared
by every worker through the page cache), read in place: a load does no work per route. A path is
found by its `route_hash`, binary-searched in the sorted hashes, and then compared with the stored
text, so a lookup is exact.
"""

from __future__ import annotations

import bisect
import struct
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from petgen.build.distpack import route_hash
from petgen.search.packfile import Pack


def typed(pack: Pack, name: str, code: str) -> memoryview:
    """An array of the pack as a sequence of Python ints (`code`: its struct format), read in place."""
    _, offset, count = pack.places[name]
    view = memoryview(pack.buffer)[offset:offset + struct.calcsize(code) * count].cast(code)
    if sys.byteorder != "little":  # packs are little-endian: a copy in this machine's order
        swapped = array(code, view.tobytes())
        swapped.byteswap()
        return memoryview(swapped)
    return view


class Strings:
    """A string table of a pack (petgen/build/distpack.py `string_table`), by index."""

    def __init__(self, pack: Pack, name: str) -> None:
        self.buffer = pack.buffer
        self.base = pack.offset(name)
        self.offsets = typed(pack, f"{name}_offsets", "I")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def raw(self, i: int) -> bytes:
        return self.buffer[self.base + self.offsets[i]:self.base + self.offsets[i + 1]]

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

    def __init__(self, pack: Pack) -> None:
        self.pack = pack
        self.paths = Strings(pack, "paths")  # in manifest order: index = route number
        self.files = Strings(pack, "files")
        self.etags = Strings(pack, "etags")
        self.types: list[str] = pack.meta["types"]
        self.type_of = typed(pack, "type_of", "B")
        self.extra: dict[str, dict[str, str]] = pack.meta["extra"]  # route number (as text) -> its extra headers
        self.hashes = typed(pack, "hashes", "q")  # sorted
        self.targets = typed(pack, "targets", "I")  # 2n for route n, 2n + 1 for its hashed file path
        self.size = len(self.hashes)

    @property
    def manifest(self) -> dict[str, Any]:
        """The build's manifest without its routes."""
        return self.pack.meta["manifest"]  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return self.size

    def find(self, path: str) -> int:
        """The key of a path (2n for route n, 2n + 1 for its hashed file path), or -1."""
        h = route_hash(path)
        hashes, size = self.hashes, self.size
        i = bisect.bisect_left(hashes, h)
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
                     None if key & 1 else self.extra.get(str(n)))

    def file_of(self, path: str) -> str:
        """The file of a clean route (KeyError if there is none)."""
        key = self.find(path)
        if key < 0:
            raise KeyError(path)
        return self.files[key >> 1]

    def __iter__(self) -> Iterator[str]:
        """Every path this table answers (in no particular order)."""
        for key in self.targets:
            yield self.paths[key >> 1] if not key & 1 else "/" + self.files[key >> 1]

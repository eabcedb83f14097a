"""A file of named numpy arrays that a reader maps into memory instead of parsing (the search index).

Layout: the magic `PETGENPK`, a little-endian uint32 with the length of a JSON header, the header
(`{"arrays": {name: [dtype, offset, count]}, "meta": {...}}`), then, from the next multiple of `ALIGN`,
the arrays, each at its offset (a multiple of `ALIGN` too). A reader over an `mmap` gets arrays that are
views of the mapped file: nothing is copied, and every process mapping the same file shares its
pages through the OS page cache.
"""

from __future__ import annotations

import mmap
import os
import struct
from typing import Any

import numpy as np
import orjson

MAGIC = b"PETGENPK"
ALIGN = 64


def write_pack(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> bytes:
    """The file's bytes: header, then every array (C order, little-endian) at an aligned offset."""
    placed, offset = {}, 0
    for name, array in arrays.items():
        offset = _aligned(offset)
        placed[name] = [array.dtype.newbyteorder("<").str, offset, int(array.size)]
        offset += array.nbytes
    header = orjson.dumps({"arrays": placed, "meta": meta})
    out = bytearray(MAGIC + struct.pack("<I", len(header)) + header)
    data = _aligned(len(out))
    for name, array in arrays.items():
        out += b"\0" * (data + placed[name][1] - len(out))
        out += np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return bytes(out)


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


class Pack:
    """The arrays of a pack file, read from `buffer` (bytes, or an mmap of the file)."""

    def __init__(self, buffer: bytes | mmap.mmap) -> None:
        if buffer[:len(MAGIC)] != MAGIC:
            raise ValueError("not a petgen pack file")
        (size,) = struct.unpack("<I", buffer[len(MAGIC):len(MAGIC) + 4])
        header = orjson.loads(buffer[len(MAGIC) + 4:len(MAGIC) + 4 + size])
        self.buffer = buffer
        self.meta: dict[str, Any] = header["meta"]
        data = _aligned(len(MAGIC) + 4 + size)
        self.places: dict[str, tuple[str, int, int]] = {name: (dtype, data + offset, count)
                                                        for name, (dtype, offset, count) in header["arrays"].items()}
        end = max((offset + np.dtype(dtype).itemsize * count for dtype, offset, count in self.places.values()),
                  default=0)
        if end > len(buffer):
            raise ValueError("truncated pack file")

    def __getitem__(self, name: str) -> np.ndarray:
        dtype, offset, count = self.places[name]
        return np.frombuffer(self.buffer, dtype=dtype, count=count, offset=offset)

    def offset(self, name: str) -> int:
        return self.places[name][1]

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Pack:
        """Map the file read-only (the mapping stays valid after the file is deleted or replaced)."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            return cls(mmap.mmap(fd, 0, access=mmap.ACCESS_READ))
        finally:
            os.close(fd)

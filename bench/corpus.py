"""Synthetic content for benchmarks, and built dists of it kept between runs.

    python bench/corpus.py [N] [--out bench/out/corpus]      # write N synthetic entries (default 10,000)
    python bench/corpus.py N --dist                          # build them into bench/out/dists/ (or reuse)

`built_dist(count)` returns a dist/ of `count` synthetic entries under bench/out/dists/, building
it only when nothing there was built from the same inputs: the count, the generator's seed, the
taxonomy files it copies, petgen's templates and the sources of every petgen module (the build
imports the query side too: petgen/search/pack.py lays the index out for petgen/search/query.py). A
50,000-entry build takes minutes on a small machine; a reused one costs nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import time
from pathlib import Path

from petgen.build.pipeline import build
from petgen.content.synthetic import TAXONOMY, write_corpus

REPO = Path(__file__).resolve().parent.parent
DISTS = REPO / "bench" / "out" / "dists"
BASE_URL = "http://127.0.0.1"


def build_key(count: int, seed: int = 1) -> str:
    """A hash of everything a synthetic build of `count` entries depends on."""
    digest = hashlib.blake2b(f"{count}\0{seed}\0{BASE_URL}\0{sys.version}\0".encode(), digest_size=8)
    sources = sorted((REPO / "petgen").rglob("*.py"))
    sources += sorted(p for p in (REPO / "petgen" / "emit" / "templates").rglob("*") if p.is_file())
    sources += [REPO / "content" / name for name in TAXONOMY]
    for path in sources:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def built_dist(count: int, *, rebuild: bool = False, log=print) -> Path:
    """bench/out/dists/<count>-<key>/dist, built from `count` synthetic entries unless already there."""
    key = build_key(count)
    home = DISTS / f"{count}-{key}"
    dist = home / "dist"
    if (home / "complete").exists() and not rebuild:
        log(f"reusing the {count:,}-entry build in {home.relative_to(REPO)}")
        return dist
    for old in DISTS.glob(f"{count}-*"):
        shutil.rmtree(old, ignore_errors=True)
    started = time.perf_counter()
    corpus = write_corpus(home / "content", count, taxonomy_from=REPO / "content")
    build(corpus, dist, base_url=BASE_URL)
    shutil.rmtree(corpus, ignore_errors=True)  # the dist is what the benchmarks read
    (home / "complete").write_text(f"{time.perf_counter() - started:.1f} s\n")
    log(f"built {count:,} synthetic entries into {home.relative_to(REPO)} in {time.perf_counter() - started:.0f} s")
    return dist


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "corpus")
    parser.add_argument("--dist", action="store_true", help="build (or reuse) a dist under bench/out/dists/")
    parser.add_argument("--rebuild", action="store_true", help="with --dist: build even if one is there")
    args = parser.parse_args()
    if args.dist:
        print(built_dist(args.count, rebuild=args.rebuild))
        return
    started = time.perf_counter()
    write_corpus(args.out, args.count, taxonomy_from=REPO / "content")
    print(f"wrote {args.count} entries to {args.out} in {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()

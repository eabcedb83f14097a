"""Write a synthetic but valid content directory of N entries (default 10,000) for benchmarks.

    python bench/corpus.py [N] [--out bench/out/corpus]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from petgen.synthetic import write_corpus

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "corpus")
    args = parser.parse_args()
    started = time.perf_counter()
    write_corpus(args.out, args.count, taxonomy_from=REPO / "content")
    print(f"wrote {args.count} entries to {args.out} in {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()

"""What a browser downloads: the weight of the site's pages and of the static search index.

    python bench/page_weight.py [--count 10000] [--write-docs]

Builds the bundled content (and takes the `--count`-entry synthetic dist from bench/corpus.py, built
or reused) and prints, per kind of page, the heaviest page's HTML and its weight with the stylesheet
and script it links (uncompressed: the budget of 50 KB per page that `tests/petgen/test_site.py`
checks on every page); the assets; and what the search box fetches: `/search/index.json`, the shards
and the document files, raw and gzipped (level 6, what CDNs serve). `--write-docs` puts the output
into docs/benchmarks.md between the `page_weight.py` markers.
"""

from __future__ import annotations

import argparse
import gzip
import re
import statistics
import sys
import tempfile
from pathlib import Path

from corpus import built_dist

from docs import recorded
from petgen.build.pipeline import build

REPO = Path(__file__).resolve().parent.parent
ASSET = re.compile(r'<link rel="stylesheet" href="(/assets/[^"]+)">|<script src="(/assets/[^"]+)"')
# The kinds of page, by the first segment of their route ("" is the home page).
KINDS = {"": "home", "names": "a name", "categories": "a theme", "moods": "a mood", "a-z": "an A–Z letter",
         "relationships": "a relationship", "regions": "a region", "languages": "a language",
         "search": "search", "docs": "/docs (reference and guide)", "404.html": "404"}


def kib(size: float) -> str:
    return f"{size / 1024:.1f} KB"


def gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=6, mtime=0))


def page_weights(dist: Path) -> dict[str, tuple[str, int, int]]:
    """Kind of page -> (its heaviest page's route, HTML bytes, bytes with linked CSS and JS)."""
    heaviest: dict[str, tuple[str, int, int]] = {}
    for path in sorted(dist.rglob("*.html")):
        rel = path.relative_to(dist).as_posix()
        kind = KINDS.get(rel.split("/", 1)[0] if "/" in rel else ("404.html" if rel == "404.html" else ""), "other")
        html = path.read_bytes()
        assets = {p for pair in ASSET.findall(html.decode()) for p in pair if p}
        total = len(html) + sum((dist / p.lstrip("/")).stat().st_size for p in assets)
        if kind not in heaviest or total > heaviest[kind][2]:
            heaviest[kind] = ("/" + rel.removesuffix("index.html"), len(html), total)
    return heaviest


def search_files(dist: Path) -> list[tuple[str, int, int]]:
    """(what, raw bytes, gzipped bytes) of the static search index's files (medians for shards, documents)."""
    index = (dist / "search" / "index.json").read_bytes()
    rows = [("`/search/index.json`", len(index), gz(index))]
    for folder, label in (("shards", "a shard (median)"), ("docs", "a document file (median)")):
        files = [p.read_bytes() for p in sorted((dist / "search" / folder).glob("*.json"))]
        if files:
            rows.append((f"{label}, {len(files)} files", int(statistics.median(map(len, files))),
                         int(statistics.median(map(gz, files)))))
    return rows


def report(dist: Path, title: str) -> None:
    print(f"{title}\n")
    print(f"{'page (heaviest of its kind)':<44} {'HTML':>9} {'with CSS + JS':>14}")
    for kind, (route, html, total) in sorted(page_weights(dist).items(), key=lambda kv: -kv[1][2]):
        print(f"{kind + ' ' + route:<44.44} {kib(html):>9} {kib(total):>14}")
    print(f"\n{'asset':<44} {'bytes':>9} {'gzipped':>14}")
    for path in sorted((dist / "assets").iterdir()):
        data = path.read_bytes()
        print(f"{'/assets/' + path.name:<44} {kib(len(data)):>9} {kib(gz(data)):>14}")
    for what, raw, packed in search_files(dist):
        print(f"{what:<44} {kib(raw):>9} {kib(packed):>14}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="synthetic entries (0: the bundled content only)")
    parser.add_argument("--write-docs", action="store_true", help="write the output into docs/benchmarks.md")
    args = parser.parse_args()
    with recorded("page_weight.py", args.write_docs), tempfile.TemporaryDirectory() as tmp:
        result = build(REPO / "content", Path(tmp) / "dist", base_url="https://kosenamen.example")
        report(result.out, f"The bundled content ({len(result.kb.entries)} entries), `petgen build`:")
        if args.count:
            report(built_dist(args.count), f"{args.count:,} synthetic entries (bench/corpus.py):")


if __name__ == "__main__":
    sys.exit(main())

"""`petgen build` vs Hugo on the same 10,000 synthetic entries, side by side in one run.

    python bench/build_vs_hugo.py [--count 10000] [--rounds 3]

Hugo (Debian's `hugo`) renders every entry to one HTML and one JSON page from the very same
Markdown files; petgen builds its whole dist (JSON, pages, list pages, manifest). Each tool runs
`--rounds` times, alternating, into a fresh output directory; the table shows the median wall
time and the peak resident memory (from /usr/bin/time).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from petgen.synthetic import write_corpus

REPO = Path(__file__).resolve().parent.parent

HUGO_CONFIG = """baseURL = "https://kosenamen.example/"
languageCode = "de"
title = "Kosenamen"
disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404"]
[outputs]
  page = ["HTML", "JSON"]
  home = ["HTML"]
  section = ["HTML"]
"""
SINGLE_HTML = """<!doctype html><html lang="de"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>
<body><h1>{{ .Title }}</h1><p>{{ .Params.pronunciation }} [{{ .Params.ipa }}]</p><p>{{ .Params.meaning }}</p>
{{ .Content }}<ul>{{ range .Params.examples }}<li>{{ . }}</li>{{ end }}</ul>
<dl>{{ range .Params.faq }}<dt>{{ .question }}</dt><dd>{{ .answer }}</dd>{{ end }}</dl></body></html>
"""
SINGLE_JSON = """{{ dict "slug" .File.ContentBaseName "title" .Title "pronunciation" .Params.pronunciation "ipa" .Params.ipa
"meaning" .Params.meaning "content" .RawContent "examples" .Params.examples "variants" .Params.variants
"categories" .Params.categories "moods" .Params.moods "keywords" .Params.keywords "faq" .Params.faq
"url" .Permalink | jsonify }}
"""
LIST_HTML = "<!doctype html><html><body>{{ range .Pages }}<a href=\"{{ .RelPermalink }}\">{{ .Title }}</a>{{ end }}</body></html>\n"


def hugo_site(root: Path, corpus: Path) -> Path:
    site = root / "hugo"
    (site / "layouts" / "_default").mkdir(parents=True)
    (site / "config.toml").write_text(HUGO_CONFIG)
    (site / "layouts" / "_default" / "single.html").write_text(SINGLE_HTML)
    (site / "layouts" / "_default" / "single.json").write_text(SINGLE_JSON)
    (site / "layouts" / "_default" / "list.html").write_text(LIST_HTML)
    (site / "content").mkdir()
    (site / "content" / "names").symlink_to(corpus / "names")
    return site


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, int]:
    """Run a command under /usr/bin/time; return (wall seconds, peak RSS in MB)."""
    result = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{command[0]} failed:\n{result.stdout}\n{result.stderr}")
    wall, rss = result.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not shutil.which("hugo"):
        sys.exit("hugo not found: apt-get install hugo")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = write_corpus(root / "corpus", args.count, taxonomy_from=REPO / "content")
        site = hugo_site(root, corpus)
        results: dict[str, list[tuple[float, int]]] = {"hugo": [], "petgen build": []}
        for _ in range(args.rounds):
            shutil.rmtree(root / "hugo-out", ignore_errors=True)
            results["hugo"].append(timed(["hugo", "--quiet", "-d", str(root / "hugo-out")], cwd=site))
            shutil.rmtree(root / "dist", ignore_errors=True)
            results["petgen build"].append(timed([sys.executable, "-m", "petgen", "build", "--content", str(corpus),
                                                  "--out", str(root / "dist")]))
        hugo_files = sum(1 for p in (root / "hugo-out").rglob("*") if p.is_file())
        dist_files = sum(1 for p in (root / "dist").rglob("*") if p.is_file())
    print(f"{args.count} entries, {args.rounds} rounds each, alternating; median wall time, peak RSS")
    print(f"{'tool':<14} {'wall s':>8} {'peak MB':>8} {'files':>7}")
    for tool, runs in results.items():
        files = hugo_files if tool == "hugo" else dist_files
        print(f"{tool:<14} {statistics.median(r[0] for r in runs):>8.2f} {max(r[1] for r in runs):>8} {files:>7}")


if __name__ == "__main__":
    main()

"""`petgen build` vs Hugo on the same 10,000 synthetic entries, side by side in one run.

    python bench/build_vs_hugo.py [--count 10000] [--rounds 3]

Hugo (Debian's `hugo`) renders every entry to one HTML and one JSON page from the very same
Markdown files; petgen builds its whole dist (JSON, pages, list pages, manifest) twice per round:
cold (`--no-cache`: every entry parsed and checked) and with its cache of parsed entries filled by
an earlier build of the same content (what an editor's rebuild or a CI job with a restored cache
does). Each contender runs `--rounds` times, alternating, into a fresh output directory; the table
shows the median wall time, the median CPU time (user + system, all processes) and the peak
resident memory (from /usr/bin/time).

`--baseline DIR` adds another checkout of this repository (say, a worktree of main) as two more
contenders, cold and cached, run from that directory in the same alternation: a change's cost on the
same corpus, in the same minutes, on the same machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from petgen.content.synthetic import write_corpus

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


def settle(seconds: float = 3.0) -> None:
    """Flush and wait before a timed run, so that no run pays for writing back the files of the run
    before it."""
    os.sync()
    time.sleep(seconds)


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, float, float, int]:
    """Run a command under /usr/bin/time; return (wall, user CPU and system CPU seconds, peak RSS in MB)."""
    result = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", *command], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{command[0]} failed:\n{result.stdout}\n{result.stderr}")
    wall, user, system, rss = result.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user), float(system), int(rss) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout of petgen to compare with")
    args = parser.parse_args()
    if not shutil.which("hugo"):
        sys.exit("hugo not found: apt-get install hugo")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = write_corpus(root / "corpus", args.count, taxonomy_from=REPO / "content")
        site = hugo_site(root, corpus)

        def commands(run: int) -> dict[str, tuple[list[str], Path | None, Path]]:
            """Each run writes into a directory of its own: no run pays for deleting another's output
            (on a file system mounted with `discard`, a big delete slows the writes after it)."""
            out = root / "out" / str(run)
            petgen = [sys.executable, "-m", "petgen", "build", "--content", str(corpus), "--out", str(out / "dist")]
            baseline = {}
            if args.baseline:  # `python -m` from the checkout's directory imports that checkout's petgen first
                baseline = {
                    "baseline (cold)": ([*petgen, "--no-cache"], args.baseline, out / "dist"),
                    "baseline (cached)": ([*petgen, "--cache-dir", str(root / "cache-baseline")], args.baseline,
                                          out / "dist"),
                }
            return {
                "hugo": (["hugo", "--quiet", "-d", str(out / "hugo")], site, out / "hugo"),
                "petgen (cold)": ([*petgen, "--no-cache"], REPO, out / "dist"),
                "petgen (cached)": ([*petgen, "--cache-dir", str(root / "cache")], REPO, out / "dist"),
                **baseline,
            }

        for tool, (command, cwd, _) in commands(0).items():  # fill the caches
            if tool.endswith("(cached)"):
                subprocess.run(command, cwd=cwd, check=True, capture_output=True)
        results: dict[str, list[tuple[float, float, float, int]]] = {tool: [] for tool in commands(0)}
        files: dict[str, int] = {}
        run = 0
        for _ in range(args.rounds):
            for tool in results:
                run += 1
                command, cwd, out = commands(run)[tool]
                settle()
                results[tool].append(timed(command, cwd=cwd))
                files[tool] = sum(1 for p in out.rglob("*") if p.is_file())
    print(f"{args.count} entries, {args.rounds} rounds each, alternating; medians, peak RSS")
    print(f"{'tool':<18} {'wall s':>7} {'user s':>7} {'sys s':>7} {'peak MB':>8} {'files':>7}")
    for tool, runs in results.items():
        wall, user, system = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"{tool:<18} {wall:>7.2f} {user:>7.2f} {system:>7.2f} {max(r[3] for r in runs):>8} {files[tool]:>7}")


if __name__ == "__main__":
    main()

"""`petgen build` vs Hugo on the same 10,000 synthetic entries, side by side in one run.

    python bench/build_vs_hugo.py [--count 10000[,50000]] [--rounds 3] [--baseline DIR] [--write-docs]

Hugo (Debian's `hugo`) renders every entry to one HTML and one JSON page from the very same
Markdown files; petgen builds its whole dist (JSON, pages, list pages, manifest) twice per round:
cold (`--no-cache`: every entry parsed and checked) and with its cache of parsed entries filled by
an earlier build of the same content (what an editor's rebuild or a CI job with a restored cache
does). A third petgen contender measures the rebuild after one edited entry: before each of its runs
one entry of its own copy of the corpus is edited (its meaning, alternately two ways), then
`petgen build` with the cache rebuilds the same output directory incrementally (petgen/build/incremental.py).
Both checkouts' sources are compiled to bytecode first, as pip does for an installed package. Each contender runs `--rounds` times, alternating, into a fresh output directory (the one-edit rebuild
into its own, kept); the table shows the median wall time, the median CPU time (user + system, of the
whole process tree) and the peak memory of the whole process tree (worker processes included, sampled every
20 ms in one more run of each contender after the timed rounds: reading a tree's memory maps every 20 ms takes
the kernel's lock on them, which the measured processes' page faults and allocations then wait for, and slowed a
one-edit rebuild of about 1 s by some 0.15 s) in two columns: the proportional set size (PSS) summed over the tree, where a page that forked workers
share with the build counts once, divided among them; and the resident set size (RSS) summed over the tree,
where it counts once per process that maps it. Hugo is one process: its PSS is its RSS, less what it shares
with other programs (its libraries).

`--count` takes one size or several, comma-separated: each size is a corpus of its own, measured as above,
one table per size. `--write-docs` replaces the tables between the markers in docs/benchmarks.md with this run's.

`--baseline DIR` adds another checkout of this repository (say, a worktree of main) as three more
contenders, cold, cached and one edit, run from that directory in the same alternation: a change's cost on the
same corpus, in the same minutes, on the same machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from docs import replace_block
from petgen.content.synthetic import write_corpus

REPO = Path(__file__).resolve().parent.parent
PAGE = os.sysconf("SC_PAGE_SIZE")

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


def tree_memory(root: int) -> tuple[int, int]:
    """Bytes of process `root` and all its descendants now: the sum of their resident set sizes (RSS: a page
    shared by forked workers counts once per process) and of their proportional set sizes (PSS, from
    /proc/PID/smaps_rollup: a shared page counts once, split among the processes that share it)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    rss = pss = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                rss += int(f.read().split()[1]) * PAGE
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        pss += int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError, IndexError):
            pass
    return rss, pss


Run = tuple[float, float, float, int, int]  # wall, user CPU, system CPU, peak RSS and peak PSS of the tree (MB)


def timed(command: list[str], cwd: Path | None = None, sampled: bool = False) -> Run:
    """Run a command; return (wall, user CPU and system CPU seconds of its whole process tree, peak summed RSS and
    peak summed PSS of the tree in MB, sampled every 20 ms if `sampled`, else 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak_rss = peak_pss = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_rss, peak_pss
        while not done.wait(0.02):
            rss, pss = tree_memory(process.pid)
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)

    sampler = threading.Thread(target=sample if sampled else lambda: None)
    sampler.start()
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        sys.exit(f"{command[0]} failed:\n{stdout.decode()}\n{stderr.decode()[-4000:]}")
    return (wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, peak_rss // 2**20,
            peak_pss // 2**20)


def edit_one(corpus: Path, run: int) -> None:
    """Edit one entry's meaning, alternately two ways, so that every run has one changed entry to rebuild."""
    path = sorted((corpus / "names").glob("*.md"))[len(list((corpus / "names").glob("*.md"))) // 2]
    text = re.sub(r"^meaning: (Überarbeitet, )?", "meaning: " + ("Überarbeitet, " if run % 2 else ""),
                  path.read_text(encoding="utf-8"), count=1, flags=re.MULTILINE)
    path.write_text(text, encoding="utf-8")


def versions() -> str:
    hugo = subprocess.run(["hugo", "version"], capture_output=True, text=True).stdout.split()[1].split("-")[0]
    return (f"Python {platform.python_version()}, Hugo {hugo}, {os.cpu_count()} cores, {platform.machine()}, "
            f"{platform.system()} {platform.release()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", default="10000", help="entries, or several sizes comma-separated (10000,50000)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout of petgen to compare with")
    parser.add_argument("--write-docs", action="store_true", help="write the tables into docs/benchmarks.md")
    args = parser.parse_args()
    if not shutil.which("hugo"):
        sys.exit("hugo not found: apt-get install hugo")
    counts = [int(count) for count in args.count.split(",")]
    tables = []
    for i, count in enumerate(counts):
        if i:
            settle(10)  # the last size's trees were just deleted (see `commands`)
        results, files = measure(count, args)
        tables.append(render(results, files, args, count))
        print(tables[-1])
    if args.write_docs:
        replace_block("build_vs_hugo.py", "\n".join(tables))


def compile_sources(*checkouts: Path | None) -> None:
    """Compile each checkout's Python sources to bytecode first, as pip does for an installed package: with
    PYTHONDONTWRITEBYTECODE set (as in some environments) an editable checkout would otherwise compile its
    modules again in every run, about 0.1 s that no installed petgen pays."""
    for checkout in checkouts:
        if checkout is not None:
            subprocess.run([sys.executable, "-m", "compileall", "-q", "petgen"], cwd=checkout, check=True,
                           capture_output=True)


def measure(count: int, args: argparse.Namespace) -> tuple[dict[str, list[Run]], dict[str, int]]:
    """Run every contender `args.rounds` times, alternating, on a corpus of `count` entries, then once more with
    its memory sampled (that run's peaks replace the timed runs' zeros in the last run of each contender)."""
    compile_sources(REPO, args.baseline)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = write_corpus(root / "corpus", count, taxonomy_from=REPO / "content")
        for suffix in ("", "-baseline") if args.baseline else ("",):  # one copy per one-edit contender: each edits its own
            shutil.copytree(corpus, root / f"corpus-edited{suffix}")
        site = hugo_site(root, corpus)

        def one_edit(suffix: str) -> list[str]:
            """A rebuild of its own corpus copy into its own output directory, with its own cache."""
            return [sys.executable, "-m", "petgen", "build", "--content", str(root / f"corpus-edited{suffix}"), "--out",
                    str(root / f"edited{suffix}" / "dist"), "--cache-dir", str(root / f"cache-edited{suffix}")]

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
                    "baseline (one edit)": (one_edit("-baseline"), args.baseline, root / "edited-baseline" / "dist"),
                }
            return {
                "hugo": (["hugo", "--quiet", "-d", str(out / "hugo")], site, out / "hugo"),
                "petgen (cold)": ([*petgen, "--no-cache"], REPO, out / "dist"),
                "petgen (cached)": ([*petgen, "--cache-dir", str(root / "cache")], REPO, out / "dist"),
                "petgen (one edit)": (one_edit(""), REPO, root / "edited" / "dist"),
                **baseline,
            }

        for tool, (command, cwd, _) in commands(0).items():  # fill the caches (the one-edit trees: twice, for the spare)
            for _ in range(2 if tool.endswith("(one edit)") else 1):
                if tool.endswith(("(cached)", "(one edit)")):
                    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
        results: dict[str, list[Run]] = {tool: [] for tool in commands(0)}
        files: dict[str, int] = {}
        run = 0
        for sampled in [False] * args.rounds + [True]:
            for tool in results:
                run += 1
                command, cwd, out = commands(run)[tool]
                if tool.endswith("(one edit)"):
                    edit_one(root / ("corpus-edited-baseline" if tool.startswith("baseline") else "corpus-edited"), run)
                settle()
                measured = timed(command, cwd=cwd, sampled=sampled)
                if sampled:  # only the peaks of this run: its times were taken with the sampler running
                    results[tool][-1] = (*results[tool][-1][:3], *measured[3:])
                else:
                    results[tool].append(measured)
                files[tool] = sum(1 for p in out.rglob("*") if p.is_file())
    return results, files


def render(results: dict[str, list[Run]], files: dict[str, int], args: argparse.Namespace, count: int) -> str:
    where = f"TMPDIR={os.environ['TMPDIR']} " if os.environ.get("TMPDIR") else ""  # the trees on tmpfs, say
    command = (f"{where}python bench/build_vs_hugo.py --count {args.count} --rounds {args.rounds}"
               + (" --baseline DIR" if args.baseline else "") + " --write-docs")
    hugo_wall = statistics.median(r[0] for r in results["hugo"])
    hugo_rss = max(r[3] for r in results["hugo"])
    hugo_pss = max(r[4] for r in results["hugo"])
    lines = [(f"{count:,} entries, run of {dt.date.today().isoformat()} ({versions()}), load average "
              f"{os.getloadavg()[0]:.1f} at the end, `{command}`; medians of {args.rounds} alternating rounds, "
              "peak memory of the whole process tree (build and workers) sampled every 20 ms in one more run:"), "",
             ("| tool | wall time | × Hugo | user CPU | system CPU | peak PSS (tree) | × Hugo | peak RSS (tree, summed) "
              "| × Hugo | files in the output |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for tool, runs in results.items():
        wall, user, system = (statistics.median(r[i] for r in runs) for i in range(3))
        rss, pss = max(r[3] for r in runs), max(r[4] for r in runs)
        lines.append(f"| {tool} | {wall:.2f} s | {wall / hugo_wall:.2f} | {user:.2f} s | {system:.2f} s | "
                     f"{pss} MB | {pss / hugo_pss:.2f} | {rss} MB | {rss / hugo_rss:.2f} | {files[tool]:,} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

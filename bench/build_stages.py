"""Where a cold build's CPU time goes, stage by stage, beside Hugo's whole build of the same entries.

    python bench/build_stages.py [--count 10000] [--rounds 3] [--write-docs]

The same synthetic corpus and Hugo site as bench/build_vs_hugo.py. Three contenders alternate, each run in a
process of its own into a fresh directory: Hugo; `petgen build --no-cache` as a user runs it (its workers
included); and the same cold build in one process (`workers=1`), with each stage timed. A stage is timed by
wrapping the function that does it and reading the process's CPU time (user + system) around each call; a
stage's time is its own, without the stages called inside it, so the rows add up to the process's CPU time
(`other`: what no stage covers). In one process the stages
cost what they cost in the workers, without the pickling that hands work to them and back (which the
multi-process build pays on top: its CPU row).

The table shows the median of the rounds for each row, per entry, and as a share of Hugo's CPU time for its
whole build in the same rounds: the stages a cold build would have to shed to match Hugo's wall time on the
same cores. `--write-docs` puts the table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# (label, functions: "module:attribute" as the build looks them up). Where a module imported a function by name,
# the name in that module is wrapped.
STAGES: list[tuple[str, list[str]]] = [
    ("reading and hashing the entry files", ["petgen.content.kb:read_file", "petgen.content.kb:entry_key"]),
    ("parsing: front matter, sections", ["petgen.content.kb:parse_entry"]),
    ("each entry's own checks, its words", ["petgen.content.kb:check_entry_alone", "petgen.content.kb:entry_words"]),
    ("each entry's search terms", ["petgen.content.kb:document_terms"]),
    ("sentence and phrase hashes (for the checks across entries)", ["petgen.content.kb:sign_entries"]),
    ("decoding each file, gathering its search fields", ["petgen.content.kb:_parse_source"]),
    ("pickling the parsed chunks", ["petgen.content.kb:_parse_chunk"]),
    ("unpickling the parsed chunks", ["petgen.build.cache:EntryCache.add_chunk"]),
    ("site.yml, taxonomy, lexicon", ["petgen.content.kb:_load_settings"]),
    ("templates compiled (Jinja)", ["jinja2.environment:Environment.compile"]),
    ("checks across entries", ["petgen.content.kb:validate"]),
    ("entry pages (HTML)", ["petgen.emit.site:PageRenderer.emit"]),
    ("entry JSON", ["petgen.emit.entries:emit_name"]),
    ("entries' chunks unpickled for writing", ["petgen.emit.entries:_emit_chunk"]),
    ("search index", ["petgen.build.pipeline:emit_search_index"]),
    ("JSON API: lists, categories, data file", ["petgen.build.pipeline:emit_api"]),
    ("OpenAPI, discovery, llms.txt", ["petgen.emit.discovery:emit_openapi_and_discovery"]),
    ("site: list pages, A–Z, home, search page", ["petgen.build.pipeline:emit_site"]),
    ("sitemap, manifest, route pack, _redirects, _headers", ["petgen.build.pipeline:emit_sitemap",
                                                            "petgen.build.pipeline:emit_manifest"]),
]
STARTUP = "start and imports"
OTHER = "other: the knowledge base's indexes, modules imported on the way, the swap, …"


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def resolve(target: str) -> tuple[Any, str]:
    """The object that holds a stage's function ("module:attribute", the attribute maybe "Class.method"), and the
    attribute's name; exits if it is not there (the build's code moved: STAGES names it as the build looks it up)."""
    module_name, _, name = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, attribute = name.split(".")
    for part in path:
        owner = getattr(owner, part, None)
    if owner is None or not callable(getattr(owner, attribute, None)):
        sys.exit(f"{target} not found: update STAGES in {Path(__file__).name}")
    return owner, attribute


def child(corpus: Path, out: Path) -> None:
    """The timed one-process build (`--child`): prints {stage: CPU seconds} as JSON. Its start (the interpreter's,
    this script's few imports of the standard library, then the build's) counts from the process's start."""
    import petgen.build.pipeline  # noqa: F401 - imported before the wrapping, as `petgen build` imports it

    begun = cpu()  # the modules imported for the wrapping below are imported later by a build (in `other`)
    spent = {label: 0.0 for label, _ in STAGES}
    inner = [0.0]  # CPU time of the stages running inside the current one

    def wrapped(function: Any, label: str) -> Any:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            outer, inner[0] = inner[0], 0.0
            begun = cpu()
            try:
                return function(*args, **kwargs)
            finally:
                total = cpu() - begun
                spent[label] += total - inner[0]
                inner[0] = outer + total

        return run

    for label, targets in STAGES:
        for target in targets:
            owner, attribute = resolve(target)
            setattr(owner, attribute, wrapped(getattr(owner, attribute), label))
    from petgen.build.pipeline import build

    spent[STARTUP] = begun
    spent[OTHER] = cpu() - begun
    build(corpus, out, workers=1)
    spent[OTHER] += cpu() - sum(spent.values())
    print(json.dumps(spent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--child", nargs=2, type=Path, metavar=("CORPUS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    # Imported here, not at the top: the timed child's start is measured.
    from build_vs_hugo import compile_sources, hugo_site, settle, timed

    from docs import header, replace_block
    from petgen.content.synthetic import write_corpus

    if not shutil.which("hugo"):
        sys.exit("hugo not found: apt-get install hugo")
    compile_sources(REPO)
    stages: dict[str, list[float]] = {}
    runs: dict[str, list[tuple[float, float]]] = {"hugo": [], "petgen": []}  # (wall, CPU)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = write_corpus(root / "corpus", args.count, taxonomy_from=REPO / "content")
        site = hugo_site(root, corpus)
        for run in range(args.rounds):
            out = root / "out" / str(run)
            settle()
            wall, user, system, _, _ = timed(["hugo", "--quiet", "-d", str(out / "hugo")], cwd=site)
            runs["hugo"].append((wall, user + system))
            settle()
            wall, user, system, _, _ = timed([sys.executable, "-m", "petgen", "build", "--content", str(corpus),
                                              "--out", str(out / "dist"), "--no-cache"], cwd=REPO)
            runs["petgen"].append((wall, user + system))
            settle()
            done = subprocess.run([sys.executable, __file__, "--child", str(corpus), str(out / "one" / "dist")],
                                  cwd=REPO, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                sys.exit(f"the timed build failed:\n{done.stderr[-4000:]}")
            for label, seconds in json.loads(done.stdout.strip().splitlines()[-1]).items():
                stages.setdefault(label, []).append(seconds)
            shutil.rmtree(out, ignore_errors=True)
    table = render(stages, runs, args)
    print(table)
    if args.write_docs:
        replace_block("build_stages.py", header(tools=("hugo",)) + "\n" + table)


def render(stages: dict[str, list[float]], runs: dict[str, list[tuple[float, float]]],
           args: argparse.Namespace) -> str:
    hugo_cpu = statistics.median(c for _, c in runs["hugo"])
    total = statistics.median(sum(values[i] for values in stages.values()) for i in range(args.rounds))
    title = (f"{args.count:,} entries, medians of {args.rounds} rounds; the share is of Hugo's CPU time for its "
             "whole build:\n")
    rows = [title, "| stage (one process) | CPU | per entry | share of Hugo's CPU |", "|---|---:|---:|---:|"]
    order = [STARTUP, *(label for label, _ in STAGES), OTHER]
    for label in order:
        seconds = statistics.median(stages[label])
        rows.append(f"| {label} | {seconds:.2f} s | {1e6 * seconds / args.count:.0f} µs | "
                    f"{100 * seconds / hugo_cpu:.0f} % |")
    rows.append(f"| **all stages, one process** | **{total:.2f} s** | {1e6 * total / args.count:.0f} µs | "
                f"{100 * total / hugo_cpu:.0f} % |")
    for name, label in (("petgen", "`petgen build --no-cache`, its workers included"), ("hugo", "Hugo")):
        wall = statistics.median(w for w, _ in runs[name])
        seconds = statistics.median(c for _, c in runs[name])
        rows.append(f"| {label} (wall {wall:.2f} s) | {seconds:.2f} s | {1e6 * seconds / args.count:.0f} µs | "
                    f"{100 * seconds / hugo_cpu:.0f} % |")
    return "\n".join(rows)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    if "--child" not in sys.argv:
        print(f"({time.perf_counter() - started:.0f} s)")

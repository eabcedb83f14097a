"""Search speed: in-process latency, index load time, and HTTP requests/s vs Datasette.

    python bench/search_speed.py [--count 10000] [--reps 200] [--duration 5] [--rounds 3] [--connections 32]

Uses the queries of bench/search_quality.py and two knowledge bases: the bundled one and
`--count` synthetic entries (petgen.synthetic.write_corpus), each built into a temporary dist.

1. Latency: `runtime.search.search_results(q, 10, dist)` (what `GET /api/search` computes: the top
   10 and the total) and `runtime.ask.answer` (`POST /ask`), every query `--reps` times after one
   warm-up pass, with the loaded dist frozen for the garbage collector as the runtime does;
   p50, p99 and max of all calls.
2. Load time: `Dist.load` (everything the runtime loads at start) and `load_search_index` (the
   search shards alone), median of `--loads` runs in this process.
3. HTTP: wrk (1 thread, `--connections`, `--duration` s after a 1 s warm-up) cycles through the
   same queries, URL-encoded, against the runtime under granian (1 worker, rate limiter off) with
   `GET /api/search?q=…` and against Datasette serving an SQLite copy of the same entries (the
   four indexed fields; FTS5 table made by sqlite-utils' enable_fts, tokenizer
   `unicode61 remove_diacritics 2`) with its FTS table URL `/names/names.json?_search=…&_size=10`.
   Datasette runs with `suggest_facets off`, so it does not compute facet suggestions on every
   request (its default); both answer 10 rows and the total. The servers alternate for
   `--rounds` rounds; the table shows the median. Loopback only; the script starts and stops
   both servers.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import orjson
import sqlite_utils

from servers import free_port, run_server, stop
from petgen.synthetic import write_corpus
from runtime.ask import answer
from runtime.search import search_results
from runtime.dist import Dist, load_search_index
from search_quality import CLASSES, QUERIES, build_dist, fts_rows

REPO = Path(__file__).resolve().parent.parent

WRK_SCRIPT = """-- cycle through the benchmark queries, one path per request
local paths = {{
{paths}
}}
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
"""


# ---------------------------------------------------------------------------------------------
# In-process latency and load time


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def latencies(fn: Callable[[str], object], queries: list[str], reps: int) -> list[float]:
    """Milliseconds per call, every query `reps` times (after one warm-up pass), interleaved."""
    for q in queries:
        fn(q)
    samples = []
    clock = time.perf_counter_ns
    for _ in range(reps):
        for q in queries:
            start = clock()
            fn(q)
            samples.append((clock() - start) / 1e6)
    return samples


def load_times(root: Path, runs: int) -> tuple[float, float]:
    """Median seconds for Dist.load and for load_search_index alone."""
    manifest = orjson.loads((root / "_manifest.json").read_bytes())
    full, index = [], []
    for _ in range(runs):
        start = time.perf_counter()
        Dist.load(root)
        full.append(time.perf_counter() - start)
        start = time.perf_counter()
        load_search_index(root, manifest)
        index.append(time.perf_counter() - start)
    return statistics.median(full), statistics.median(index)


def index_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / "search").rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------
# HTTP










def sqlite_copy(dist: Dist, path: Path) -> Path:
    """The entries' four indexed fields in an SQLite table `names` with an FTS5 index, for Datasette."""
    db = sqlite_utils.Database(path, recreate=True)
    db["names"].insert_all(fts_rows(dist), pk="slug")
    db["names"].enable_fts(["title", "variants", "keywords", "meaning"], fts_version="FTS5",
                           tokenize="unicode61 remove_diacritics 2")
    db.close()
    return path


def wrk(base: str, paths: list[str], script: Path, duration: int, connections: int) -> float:
    """Requests/s for wrk cycling through `paths` on `base`; exits if any answer is not 2xx/3xx."""
    script.write_text(WRK_SCRIPT.format(paths=",\n".join(f'  "{p}"' for p in paths)))
    command = ["wrk", "-t1", f"-c{connections}", "-s", str(script)]
    subprocess.run([*command, "-d1s", base], capture_output=True, check=True, timeout=60)  # warm-up
    out = subprocess.run([*command, f"-d{duration}s", base], capture_output=True, text=True, check=True,
                         timeout=duration + 60).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{base}: {errors.group(1)} error responses\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]


def check(url: str) -> None:
    """GET one URL before wrk: it must answer 200 with a JSON list of items (runtime) or rows (Datasette)."""
    with urllib.request.urlopen(url, timeout=10) as response:  # loopback only; raises on 4xx/5xx
        data = orjson.loads(response.read())
    if not isinstance(data.get("items", data.get("rows")), list):
        raise SystemExit(f"{url}: unexpected answer {str(data)[:200]}")


def http(label: str, dist_root: Path, dist: Dist, root: Path, args: argparse.Namespace) -> dict[str, float]:
    """Median requests/s of the runtime (granian) and Datasette on the same queries."""
    queries = [q for _, q, _ in QUERIES]
    db = sqlite_copy(dist, root / f"names-{label}.db")
    servers = {
        "runtime": ([sys.executable, "-m", "granian", "--interface", "asgi", "--factory", "--no-ws",
                     "--log-level", "warning", "--host", "127.0.0.1", "--port", "{port}", "runtime.app:create_app"],
                    {"PETGEN_DIST": str(dist_root), "PETGEN_RATE_LIMIT": "0"},
                    [f"/api/search?q={quote(q)}" for q in queries]),
        "datasette": ([sys.executable, "-m", "datasette", "serve", str(db), "--host", "127.0.0.1", "--port", "{port}",
                       "--setting", "suggest_facets", "off"],
                      {},
                      [f"/{db.stem}/names.json?_search={quote(q)}&_size=10" for q in queries]),
    }
    results: dict[str, list[float]] = {name: [] for name in servers}
    for _ in range(args.rounds):
        for name, (command, env, paths) in servers.items():
            port = free_port()
            proc = run_server([part.format(port=port) for part in command], port, env)
            try:
                base = f"http://127.0.0.1:{port}"
                check(base + paths[0])
                results[name].append(wrk(base, paths, root / "paths.lua", args.duration, args.connections))
            finally:
                stop(proc)
    return {name: statistics.median(rps) for name, rps in results.items()}


# ---------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="synthetic entries for the large index")
    parser.add_argument("--reps", type=int, default=200, help="in-process repetitions of every query")
    parser.add_argument("--loads", type=int, default=5, help="index loads to take the median of")
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating wrk rounds per server")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--slowest", type=int, default=10, help="how many of the slowest queries to list")
    parser.add_argument("--no-http", action="store_true", help="skip the wrk runs")
    args = parser.parse_args()
    if not args.no_http and not shutil.which("wrk"):
        sys.exit("wrk not found: apt-get install wrk")
    queries = [q for _, q, _ in QUERIES]
    latency_rows, load_rows, class_rows, slow_rows, http_rows = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = write_corpus(root / "c", args.count, taxonomy_from=REPO / "content")
        kbs = [("bundled", REPO / "content"), (f"{args.count:,} synthetic", corpus)]
        for n, (label, content) in enumerate(kbs):
            work = root / f"kb{n}"
            start = time.perf_counter()
            dist = build_dist(content, work)
            built = time.perf_counter() - start
            size = len(dist.items)
            megabytes = index_bytes(work / "dist") / 1e6
            print(f"built {label}: {size} entries in {built:.1f} s, search index {megabytes:.1f} MB", flush=True)
            gc.collect()
            gc.freeze()  # as the runtime does after loading (runtime.app.Runtime)
            for system, fn in (("search", lambda q, d=dist: search_results(q, 10, d)),
                               ("ask", lambda q, d=dist: answer(q, d, 10).hits)):
                samples = latencies(fn, queries, args.reps)
                latency_rows.append((size, system, len(samples), statistics.median(samples),
                                     percentile(samples, 99), max(samples)))
                if system == "search" and n == len(kbs) - 1:
                    reps = args.reps
                    for cls in CLASSES:
                        own = [i for i, (c, _, _) in enumerate(QUERIES) if c == cls]
                        picked = [samples[r * len(queries) + i] for r in range(reps) for i in own]
                        class_rows.append((cls, statistics.median(picked), percentile(picked, 99)))
                    for i, q in enumerate(queries):
                        own = [samples[r * len(queries) + i] for r in range(reps)]
                        slow_rows.append((statistics.median(own), max(own), dist.search.top(q, 1)[1], q))
            full, index = load_times(work / "dist", args.loads)
            load_rows.append((size, full, index))
            if not args.no_http:
                rps = http(f"kb{n}", work / "dist", dist, root, args)
                http_rows.append((size, rps["runtime"], rps["datasette"]))

    print(f"\nIn-process latency, {len(queries)} queries x {args.reps} (ms per call)")
    print(f"{'entries':>8} {'system':<7} {'calls':>7} {'p50':>8} {'p99':>8} {'max':>8}")
    for size, system, calls, p50, p99, worst in latency_rows:
        print(f"{size:>8} {system:<7} {calls:>7} {p50:>8.3f} {p99:>8.3f} {worst:>8.2f}")
    print(f"\nsearch latency by query class at {latency_rows[-1][0]} entries (ms)")
    print(f"{'class':<11} {'p50':>8} {'p99':>8}")
    for cls, p50, p99 in class_rows:
        print(f"{cls:<11} {p50:>8.3f} {p99:>8.3f}")
    print(f"\nslowest queries at {latency_rows[-1][0]} entries (ms per call, matching entries)")
    print(f"{'p50':>8} {'max':>8} {'hits':>6}  query")
    for p50, worst, hits, q in sorted(slow_rows, reverse=True)[:args.slowest]:
        print(f"{p50:>8.3f} {worst:>8.2f} {hits:>6}  {q}")
    print(f"\nLoad time at start, median of {args.loads} (s)")
    print(f"{'entries':>8} {'Dist.load':>10} {'search index':>13}")
    for size, full, index in load_rows:
        print(f"{size:>8} {full:>10.3f} {index:>13.3f}")
    if http_rows:
        print(f"\nHTTP, same {len(queries)} queries in turn: wrk -t1 -c{args.connections} -d{args.duration}s, "
              f"median of {args.rounds} alternating rounds, {os.cpu_count()} cores, loopback")
        print(f"{'entries':>8} {'runtime (granian) req/s':>24} {'Datasette req/s':>16} {'ratio':>6}")
        for size, ours, theirs in http_rows:
            print(f"{size:>8} {ours:>24.0f} {theirs:>16.0f} {ours / theirs:>5.1f}x")


if __name__ == "__main__":
    main()

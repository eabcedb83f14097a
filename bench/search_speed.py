"""Search speed: in-process latency by query class, adversarial queries, index load time, and HTTP
requests/s of /api/search, /ask and the MCP search tool, at several sizes in one run.

    python bench/search_speed.py [--counts 10000 50000] [--reps 100] [--duration 5] [--rounds 3]
                                 [--connections 32] [--datasette]

Uses the queries of bench/search_quality.py, the `ADVERSARIAL` queries below, and the bundled
knowledge base plus one synthetic knowledge base per `--counts` (built once into bench/out/dists/
and reused by later runs, bench/corpus.py).

1. Latency: `runtime.search.search_results(q, 10, dist)` (what `GET /api/search` computes: the top
   10 and the total) and `runtime.ask.answer` (`POST /ask`), every query `--reps` times after one
   warm-up pass, with the loaded dist frozen for the garbage collector as the runtime does;
   p50, p99 and max of all calls, and per query class at every synthetic size.
2. Adversarial queries (two-letter words, 20-word queries, repeated letters, every umlaut):
   queries per second against the ordinary queries', both as wall-clock and as CPU time.
3. Load time: `Dist.load` and `load_search_index` (mapping the search index's pack file alone), median
   of `--loads`.
4. HTTP: one runtime under granian (1 worker, rate limiter off) per knowledge base; wrk (1 thread,
   `--connections`, `--duration` s after a 1 s warm-up) cycles through the same queries as
   `GET /api/search?q=…`, as `POST /ask` `{"query": …, "limit": 10}` and as MCP `tools/call` of
   `search` (`POST /mcp`, limit 10); the three alternate for `--rounds` rounds, the table shows the
   median and each one's ratio to /api/search, and a second table the requests served per CPU second of
   the server's processes (from /proc) in the same runs, which other load on the machine changes much
   less than requests/s. With `--datasette`, Datasette serving an SQLite
   copy of the same entries (FTS5, `unicode61 remove_diacritics 2`, `suggest_facets off`) at
   `/names/names.json?_search=…&_size=10` runs in the same rounds. Loopback only; the script
   starts and stops every server.
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
from corpus import built_dist
from search_quality import CLASSES, QUERIES, build_dist, fts_rows
from servers import free_port, group_cpu, run_server, stop

from docs import recorded
from runtime.ask import answer
from runtime.builds.dist import Dist, load_search_index
from runtime.search import search_results

REPO = Path(__file__).resolve().parent.parent

WRK_SCRIPT = """-- cycle through the benchmark requests: method, path and body of each
local requests = {{
{requests}
}}
local i = 0
request = function()
  i = i % #requests + 1
  local r = requests[i]
  if r[3] == "" then
    return wrk.format(r[1], r[2])
  end
  return wrk.format(r[1], r[2], {{["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream"}}, r[3])
end
"""

# Queries built to be expensive: two-letter words (prefix expansion), 20 words (many groups), repeated
# letters (typo candidates), every umlaut (folding and expansion). At most 200 characters, as /api/search.
ADVERSARIAL = [
    "ab", "hi", "ku", "ma", "xy", "ei au oh", "ab cd ef gh ij kl",
    ("kuscheln kosename maus bär herz schatz sonne mond stern blume engel zucker honig liebling spatz hase "
     "katze bienchen knuddel prinzessin"),
    "a b c d e f g h i j k l m n o p q r s t",
    ("was wie wer wo warum wann welche welcher kosename name für meine meinen freund freundin frau mann kind "
     "baby oma opa"),
    "aaaaaaaaaa", "eeeeeeeeeeeeeeeeeeee", "zzzzzzzz", "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", "sssss ttttt",
    "äöüß ÄÖÜ", "üüüüüü", "ßßßß äää", "äöü äöü äöü äöü äöü", "Ää Öö Üü ß",
]


# ---------------------------------------------------------------------------------------------
# In-process latency and load time


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


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


def wrk(base: str, requests: list[tuple[str, str, str]], script: Path, duration: int, connections: int,
        cpu: Callable[[], float]) -> tuple[float, float]:
    """Requests/s for wrk cycling through `requests` (method, path, body) on `base`, and requests per CPU second
    of the server (`cpu`: its CPU seconds so far), which other load on the machine barely changes; exits if any
    answer is not 2xx/3xx."""
    lua = ",\n".join("  {" + ", ".join(json_lua(part) for part in r) + "}" for r in requests)
    script.write_text(WRK_SCRIPT.format(requests=lua))
    command = ["wrk", "-t1", f"-c{connections}", "-s", str(script)]
    subprocess.run([*command, "-d1s", base], capture_output=True, check=True, timeout=60)  # warm-up
    used = cpu()
    out = subprocess.run([*command, f"-d{duration}s", base], capture_output=True, text=True, check=True,
                         timeout=duration + 60).stdout
    used = cpu() - used
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{base}: {errors.group(1)} error responses\n{out}")
    served = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), served / max(used, 1e-9)  # type: ignore[union-attr]


def json_lua(text: str) -> str:
    """A Lua string literal (decimal escapes for every byte outside printable ASCII, quotes and backslashes)."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03d}"
                         for b in text.encode()) + '"'


def check(base: str, request: tuple[str, str, str]) -> None:
    """Send one request before wrk: it must answer 200 with results (items, result, rows or an MCP result)."""
    method, path, body = request
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"} if body else {}
    req = urllib.request.Request(base + path, data=body.encode() if body else None, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as response:  # loopback only; raises on 4xx/5xx
        data = orjson.loads(response.read())
    data = data.get("result", data)
    data = data.get("structuredContent", data) if isinstance(data, dict) else data
    if not isinstance(data, list) and not isinstance(data.get("items", data.get("rows")), list):
        raise SystemExit(f"{path}: unexpected answer {str(data)[:200]}")


def endpoints(queries: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """The same queries as each endpoint takes them: (method, path, body)."""
    return {
        "/api/search": [("GET", f"/api/search?q={quote(q)}", "") for q in queries],
        "/ask": [("POST", "/ask", orjson.dumps({"query": q, "limit": 10}).decode()) for q in queries],
        "MCP search": [("POST", "/mcp", orjson.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": q, "limit": 10}}}).decode()) for i, q in enumerate(queries)],
    }


def http(label: str, dist_root: Path, dist: Dist, root: Path,
         args: argparse.Namespace) -> tuple[dict[str, float], dict[str, float]]:
    """Median requests/s of /api/search, /ask and the MCP search tool on one runtime (and Datasette), and median
    requests per CPU second of the server."""
    queries = [q for _, q, _ in QUERIES]
    runtime = [sys.executable, "-m", "granian", "--interface", "asgi", "--factory", "--no-ws", "--log-level",
               "warning", "--host", "127.0.0.1", "--port", "{port}", "runtime.app:create_app"]
    servers = {"runtime": (runtime, {"PETGEN_DIST": str(dist_root), "PETGEN_RATE_LIMIT": "0"}, endpoints(queries))}
    if args.datasette:
        db = sqlite_copy(dist, root / f"names-{label}.db")
        servers["datasette"] = ([sys.executable, "-m", "datasette", "serve", str(db), "--host", "127.0.0.1",
                                 "--port", "{port}", "--setting", "suggest_facets", "off"], {},
                                {"Datasette": [("GET", f"/{db.stem}/names.json?_search={quote(q)}&_size=10", "")
                                               for q in queries]})
    results: dict[str, list[float]] = {}
    per_cpu: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for command, env, paths in servers.values():
            port = free_port()
            proc = run_server([part.format(port=port) for part in command], port, env)
            try:
                base = f"http://127.0.0.1:{port}"
                for name, requests in paths.items():
                    check(base, requests[0])
                    rps, cpu = wrk(base, requests, root / "requests.lua", args.duration, args.connections,
                                   lambda proc=proc: group_cpu(proc))
                    results.setdefault(name, []).append(rps)
                    per_cpu.setdefault(name, []).append(cpu)
            finally:
                stop(proc)
    return ({name: statistics.median(rps) for name, rps in results.items()},
            {name: statistics.median(cpu) for name, cpu in per_cpu.items()})


# ---------------------------------------------------------------------------------------------


def throughput(fn: Callable[[str], object], queries: list[str], reps: int) -> tuple[float, float]:
    """Queries per second, by the wall clock and by this process's CPU time, every query `reps` times."""
    for q in queries:
        fn(q)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(reps):
        for q in queries:
            fn(q)
    calls = reps * len(queries)
    return calls / (time.perf_counter() - wall), calls / max(time.process_time() - cpu, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[10_000, 50_000], help="synthetic sizes")
    parser.add_argument("--reps", type=int, default=100, help="in-process repetitions of every query")
    parser.add_argument("--loads", type=int, default=3, help="index loads to take the median of")
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating wrk rounds")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--slowest", type=int, default=8, help="how many of the slowest queries to list")
    parser.add_argument("--no-http", action="store_true", help="skip the wrk runs")
    parser.add_argument("--datasette", action="store_true", help="also time Datasette over HTTP")
    parser.add_argument("--rebuild", action="store_true", help="build the synthetic dists again")
    parser.add_argument("--write-docs", action="store_true",
                        help="put what this run prints into docs/benchmarks.md (bench/docs.py)")
    args = parser.parse_args()
    with recorded("search_speed.py", args.write_docs, tools=('wrk',)):
        run(args)


def run(args: argparse.Namespace) -> None:
    if not args.no_http and not shutil.which("wrk"):
        sys.exit("wrk not found: apt-get install wrk")
    queries = [q for _, q, _ in QUERIES]
    latency_rows, load_rows, class_rows, slow_rows, adversarial_rows, http_rows = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        kbs = [("bundled", None)] + [(f"{count:,} synthetic", count) for count in args.counts]
        for n, (label, count) in enumerate(kbs):
            if count is None:
                build_dist(REPO / "content", root / "bundled")
                dist_root = root / "bundled" / "dist"
            else:
                dist_root = built_dist(count, rebuild=args.rebuild)
            dist = Dist.load(dist_root)
            size = len(dist.items)
            print(f"loaded {label}: {size} entries, search index {index_bytes(dist_root) / 1e6:.1f} MB", flush=True)
            gc.collect()
            gc.freeze()  # as the runtime does after loading (runtime.app.Runtime)
            search = lambda q, d=dist: search_results(q, 10, d)
            for system, fn in (("search", search), ("ask", lambda q, d=dist: answer(q, d, 10).hits)):
                samples = latencies(fn, queries, args.reps)
                latency_rows.append((size, system, len(samples), statistics.median(samples),
                                     percentile(samples, 99), max(samples)))
                if system == "search" and count is not None:
                    for cls in CLASSES:
                        own = [i for i, (c, _, _) in enumerate(QUERIES) if c == cls]
                        picked = [samples[r * len(queries) + i] for r in range(args.reps) for i in own]
                        class_rows.append((size, cls, statistics.median(picked), percentile(picked, 99)))
                    for i, q in enumerate(queries):
                        own = [samples[r * len(queries) + i] for r in range(args.reps)]
                        slow_rows.append((size, statistics.median(own), max(own), q))
            if count is not None:
                hard = latencies(search, ADVERSARIAL, args.reps)
                class_rows.append((size, "adversarial", statistics.median(hard), percentile(hard, 99)))
                ordinary = throughput(search, queries, max(1, args.reps // 4))
                adversarial = throughput(search, ADVERSARIAL, max(1, args.reps // 4))
                adversarial_rows.append((size, *ordinary, *adversarial))
            full, index = load_times(dist_root, args.loads)
            load_rows.append((size, full, index))
            if not args.no_http:
                http_rows.append((size, *http(f"kb{n}", dist_root, dist, root, args)))
            gc.unfreeze()

    print(f"\nIn-process latency, {len(queries)} queries x {args.reps} (ms per call)")
    print(f"{'entries':>8} {'system':<7} {'calls':>7} {'p50':>8} {'p99':>8} {'max':>8}")
    for size, system, calls, p50, p99, worst in latency_rows:
        print(f"{size:>8} {system:<7} {calls:>7} {p50:>8.3f} {p99:>8.3f} {worst:>8.2f}")
    print(f"\nsearch latency by query class (ms; adversarial: {len(ADVERSARIAL)} queries of bench/search_speed.py)")
    print(f"{'entries':>8} {'class':<12} {'p50':>8} {'p99':>8}")
    for size, cls, p50, p99 in class_rows:
        print(f"{size:>8} {cls:<12} {p50:>8.3f} {p99:>8.3f}")
    print("\nadversarial vs ordinary queries, search queries/s (wall clock; CPU time)")
    print(f"{'entries':>8} {'ordinary':>16} {'adversarial':>16} {'ratio':>12}")
    for size, wall, cpu, hard_wall, hard_cpu in adversarial_rows:
        print(f"{size:>8} {wall:>7.0f}; {cpu:>6.0f} {hard_wall:>7.0f}; {hard_cpu:>6.0f} "
              f"{hard_wall / wall:>5.2f}; {hard_cpu / cpu:>4.2f}")
    print("\nslowest queries (ms per call)")
    print(f"{'entries':>8} {'p50':>8} {'max':>8}  query")
    for size in args.counts:
        own = sorted((row for row in slow_rows if row[0] == size), key=lambda row: -row[1])
        for _, p50, worst, q in own[:args.slowest]:
            print(f"{size:>8} {p50:>8.3f} {worst:>8.2f}  {q}")
    print(f"\nLoad time at start, median of {args.loads} (s)")
    print(f"{'entries':>8} {'Dist.load':>10} {'search index':>13}")
    for size, full, index in load_rows:
        print(f"{size:>8} {full:>10.3f} {index:>13.3f}")
    if http_rows:
        print(f"\nHTTP, same {len(queries)} queries in turn: wrk -t1 -c{args.connections} -d{args.duration}s, "
              f"median of {args.rounds} alternating rounds, {os.cpu_count()} cores, loopback (req/s, ratio to "
              "/api/search)")
        names = list(http_rows[0][1])
        print(f"{'entries':>8} " + " ".join(f"{name:>18}" for name in names))
        for size, rps, _ in http_rows:
            base = rps["/api/search"]
            print(f"{size:>8} " + " ".join(f"{rps[name]:>10.0f} ({rps[name] / base:.2f}x)" for name in names))
        print("\nThe same runs, requests per CPU second of the server's processes (other load on the machine changes "
              "this less than requests/s; ratio to /api/search)")
        print(f"{'entries':>8} " + " ".join(f"{name:>18}" for name in names))
        for size, _, cpu in http_rows:
            base = cpu["/api/search"]
            print(f"{size:>8} " + " ".join(f"{cpu[name]:>10.0f} ({cpu[name] / base:.2f}x)" for name in names))


if __name__ == "__main__":
    main()

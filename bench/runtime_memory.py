"""The runtime's memory and start time at 256, 10,000 and 50,000 synthetic entries.

    python bench/runtime_memory.py [--sizes 256,10000,50000] [--servers uvicorn,granian] [--before main]
                                   [--write-docs]

Builds each synthetic corpus once (`bench/corpus.py`: bench/out/dists/<N>-<key>/dist, kept between
runs and rebuilt only when petgen changed; 50,000 entries take minutes), then starts `petgen serve
--server S` on it, one worker, no access log, and measures:

- first 200: seconds from starting the command to the first 200 of `GET /api/names/{slug}`
  (polled every 20 ms), at a first start (a fresh state directory) and at a restart on the same
  state directory;
- webhook baseline: at the first start, seconds from starting the command until the webhook store
  in the state directory holds the baseline of the build (this checkout derives it after the first
  answer; before, the runtime derived it before it served). The first-start process is stopped
  only then, so the restart finds the baseline and derives nothing;
- at the restart, RSS at first 200, and RSS after one request to every surface (a computed list page, /api/search,
  /ask, an MCP initialize and tools/call), of the serving process (the granian worker; uvicorn
  serves in the `petgen serve` process) and of all its processes together;
- in a separate process: the seconds `import runtime.app` takes, whether the MCP SDK is imported
  with it (or what importing it adds later, when /mcp is loaded), what `Dist.load` holds and takes,
  and what the search index adds (`runtime.builds.dist.load_search_index` alone).

Both codes are compiled to bytecode first, as an installed package is.
`--before REF` measures the code of a git revision the same way in the same run (`git archive REF`
into bench/out/runtime/src-REF, run with PYTHONPATH pointing there), alternating with this checkout.
`--write-docs` replaces the table between the markers in docs/benchmarks.md with this run's.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson
from corpus import built_dist
from servers import free_port, stop

from docs import header, replace_block

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out" / "runtime"  # the code of other revisions (--before)
BASE_URL = "http://127.0.0.1"

LOAD_PROBE = """
import gc, sys, time
from pathlib import Path
def rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096 / 1e6
t = time.perf_counter()
import runtime.app
imports_s = time.perf_counter() - t
mcp_at_start = "mcp" in sys.modules
from runtime.builds.dist import Dist, load_search_index
import orjson
gc.collect(); imported = rss()
t = time.perf_counter()
import mcp.server.mcpserver, mcp_types  # what loading /mcp adds, unless imported at start
mcp_s, mcp_mb = time.perf_counter() - t, rss() - imported
gc.collect(); imported = rss()
root = Path(sys.argv[1])
try:
    from runtime.builds.dist import trim_heap
except ImportError:  # older code
    def trim_heap(): pass
t = time.perf_counter(); dist = Dist.load(root); load = time.perf_counter() - t
gc.collect(); trim_heap(); loaded = rss()
del dist; gc.collect(); trim_heap()
manifest = orjson.loads((root / "_manifest.json").read_bytes())  # parsed before: the index alone is measured
base = rss()
t = time.perf_counter(); index = load_search_index(root, manifest); search = time.perf_counter() - t
gc.collect()
print(orjson.dumps({"imports": imported, "imports_s": imports_s, "mcp": mcp_mb, "mcp_s": mcp_s,
                    "mcp_at_start": mcp_at_start,
                    "loaded": loaded - imported, "load_s": load,
                    "search": rss() - base, "search_s": search}).decode())
"""


def dist_for(size: int) -> Path:
    """The build of `size` synthetic entries (bench/corpus.py: made once, in bench/out/dists/)."""
    return built_dist(size, log=lambda text: print(text, file=sys.stderr))


def baseline_recorded(state: str, source: str) -> bool:
    """Whether the webhook store in `state` holds the baseline of the build `source` (read with sqlite3, so
    that any revision's runtime can be measured)."""
    try:
        with sqlite3.connect(f"file:{Path(state) / 'webhooks.sqlite3'}?mode=ro", uri=True) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'source'").fetchone()
    except sqlite3.Error:
        return False
    return row is not None and row[0] == source


def source_of(ref: str) -> Path:
    """The code of a git revision, extracted once."""
    commit = subprocess.run(["git", "rev-parse", "--short", ref], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    src = OUT / f"src-{commit}"
    if not (src / "runtime").exists():
        src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit, "petgen", "runtime"], cwd=REPO, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return src


def rss_of(pids: list[int]) -> list[float]:
    sizes = []
    for pid in pids:
        try:
            sizes.append(int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6)
        except (OSError, IndexError):
            pass
    return sizes


def group(pid: int) -> list[int]:
    """The processes of a server's process group (it was started in a session of its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pid:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def touch_surfaces(http: httpx.Client, slug: str) -> None:
    """One request to each surface, so that everything it loads on first use is loaded."""
    assert http.get("/api/names", params={"limit": 7, "offset": 3, "mood": "verspielt"}).status_code == 200
    assert http.get("/api/search", params={"q": "kuschel maus"}).status_code == 200
    assert http.post("/ask", json={"query": "Kosename für meinen Freund"}).status_code == 200
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = http.post("/mcp", headers=headers, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    assert init.status_code == 200, init.text[:200]
    session = {"mcp-session-id": init.headers["mcp-session-id"]} if "mcp-session-id" in init.headers else {}
    http.post("/mcp", headers={**headers, **session}, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = http.post("/mcp", headers={**headers, **session}, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_name", "arguments": {"slug": slug}}})
    assert call.status_code == 200, call.text[:200]


def start(dist: Path, server: str, src: Path | None, state: str, slug: str) -> tuple[subprocess.Popen[bytes], float, int]:
    """Start `petgen serve`; return it, the seconds to its first 200 and its port."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src)} if src else dict(os.environ)
    command = [sys.executable, "-m", "petgen", "serve", "--server", server, "--workers", "1", "--dist", str(dist),
               "--content", str(Path(state) / "none"), "--base-url", BASE_URL, "--state-dir", state,
               "--host", "127.0.0.1", "--port", str(port), "--no-access-log", "--log-level", "warning"]
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=state)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        while True:
            try:
                if http.get(f"/api/names/{slug}").status_code == 200:
                    return proc, time.perf_counter() - started, port
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.perf_counter() - started > 300:
                stop(proc)
                raise SystemExit(f"{server} did not start on {dist}")
            time.sleep(0.02)


def measure(dist: Path, server: str, src: Path | None) -> dict[str, float]:
    """A first start (fresh state directory: the webhook baseline is derived before serving), then a
    restart on the same state, whose memory is measured."""
    manifest = orjson.loads((dist / "_manifest.json").read_bytes())
    items = orjson.loads((dist / manifest["data"]).read_bytes())["items"]
    slug = items[len(items) // 2]["slug"]
    with tempfile.TemporaryDirectory() as state:
        started = time.perf_counter()
        proc, first_start, _ = start(dist, server, src, state, slug)
        while not baseline_recorded(state, manifest["sourceHash"]):  # derived after the first answer, or before
            if proc.poll() is not None or time.perf_counter() - started > 300:
                stop(proc)
                raise SystemExit(f"{server} recorded no webhook baseline of {dist}")
            time.sleep(0.05)
        baseline = time.perf_counter() - started
        stop(proc)
        proc, first, port = start(dist, server, src, state, slug)
        try:
            at_first = rss_of(group(proc.pid))
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                touch_surfaces(http, slug)
            time.sleep(1)
            after = rss_of(group(proc.pid))
        finally:
            stop(proc)
    return {"first_start": first_start, "baseline": baseline, "first": first, "rss_first": max(at_first), "rss": max(after),
            "rss_all": sum(after)}


def load_breakdown(dist: Path, src: Path | None) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)} if src else dict(os.environ)
    out = subprocess.run([sys.executable, "-c", LOAD_PROBE, str(dist)], env=env, capture_output=True, text=True,
                         check=True, cwd=src or REPO).stdout  # `-c` puts the working directory first on sys.path
    return orjson.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,10000,50000")
    parser.add_argument("--servers", default="uvicorn,granian")
    parser.add_argument("--before", metavar="REF", help="also measure this git revision (e.g. main)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    servers = args.servers.split(",")
    codes: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.before:
        codes.insert(0, (f"before ({args.before})", source_of(args.before)))
    for _, src in codes:  # as installed: bytecode compiled (PYTHONDONTWRITEBYTECODE would recompile at every start)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", "petgen", "runtime"], cwd=src or REPO,
                       check=True, stdout=subprocess.DEVNULL)
    rows = []
    for size in sizes:
        dist = dist_for(size)
        for code, src in codes:
            parts = load_breakdown(dist, src)
            for server in servers:
                m = measure(dist, server, src)
                rows.append((size, code, server, m, parts))
                print(f"{size:>6} {code:<18} {server:<8} first 200 {m['first_start']:6.2f} s (first start; "
                      f"baseline after {m['baseline']:.2f} s), "
                      f"{m['first']:6.2f} s (restart); RSS {m['rss_first']:6.0f} MB "
                      f"at first 200, {m['rss']:6.0f} MB after every surface ({m['rss_all']:.0f} MB all processes); "
                      f"search index {parts['search']:.0f} MB", flush=True)
    table = render(rows)
    print(table)
    if args.write_docs:
        replace_block("runtime_memory.py", table)


def render(rows: list) -> str:  # type: ignore[type-arg]
    lines = [header(),
             ("| entries | code | server | first 200: first start | webhook baseline | restart | RSS at first 200 "
              "| RSS after every surface | all processes "
              "| imports at start | MCP SDK | `Dist.load` | of which search index |"),
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    # imports: seconds of `import runtime.app` in a fresh interpreter; MCP SDK: imported with it, or what
    # importing it adds later; Dist.load: what it holds, search index included; search index:
    # `load_search_index` alone.
    for size, code, server, m, parts in rows:
        mcp = "imported at start" if parts["mcp_at_start"] else f"after the first answer: {parts['mcp_s']:.2f} s"
        lines.append(f"| {size:,} | {code} | {server} | **{m['first_start']:.2f} s** | {m['baseline']:.2f} s | "
                     f"**{m['first']:.2f} s** | "
                     f"{m['rss_first']:.0f} MB | "
                     f"**{m['rss']:.0f} MB** | {m['rss_all']:.0f} MB | {parts['imports_s']:.2f} s | "
                     f"{mcp} | "
                     f"{parts['loaded']:.0f} MB ({parts['load_s']:.2f} s) | "
                     f"{parts['search']:.0f} MB ({parts['search_s']:.2f} s) |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

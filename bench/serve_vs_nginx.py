"""Requests/s for `GET /api/names/{slug}` from the runtime vs nginx serving the same dist file, and for
`GET /api/search` from the runtime (before and after a change, with --before).

    python bench/serve_vs_nginx.py [--duration 10] [--connections 32] [--slug baerchen] [--before REF]
                                   [--write-docs]

One run, one machine, loopback only: builds the bundled content into a temporary dist, then
measures in turn nginx (Debian's, `worker_processes auto`, serving the hashed file for the clean
URL with the same Cache-Control/CORS headers) and the runtime as `petgen serve` under uvicorn and
under granian, each with one and with two workers. wrk (1 thread) drives each for --duration seconds after a warm-up; the
runtime's rate limiter is off (`--rate-limit 0`), all its other headers are on. `--before REF` also
measures the runtime of a git revision (see bench/runtime_memory.py), right before this checkout's
for each server; `--write-docs` writes that comparison into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

import orjson
from runtime_memory import source_of
from servers import free_port, run_server, stop

from docs import header, replace_block
from petgen.build.pipeline import build

REPO = Path(__file__).resolve().parent.parent

NGINX_CONF = """{user}worker_processes auto;
daemon off;
pid {root}/nginx.pid;
error_log {root}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  types {{ application/json json; }}
  server {{
    listen 127.0.0.1:{port};
    location = {route} {{
      alias {file};
      default_type "application/json; charset=utf-8";
      add_header Cache-Control "public, max-age=60, must-revalidate";
      add_header Access-Control-Allow-Origin "*";
      add_header X-Content-Type-Options "nosniff";
    }}
  }}
}}
"""






def wrk(url: str, duration: int, connections: int) -> float:
    subprocess.run(["wrk", "-t1", f"-c{connections}", "-d2s", url], capture_output=True, check=True)  # warm-up
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{duration}s", url], capture_output=True, text=True,
                         check=True).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{url}: {errors.group(1)} error responses\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]






def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--slug", default="baerchen")
    parser.add_argument("--query", default="maus", help="also measure GET /api/search?q=QUERY on every runtime")
    parser.add_argument("--rounds", type=int, default=1, help="measure every server this many times, in turn; "
                        "report medians")
    parser.add_argument("--before", metavar="REF", help="also measure this git revision's runtime (e.g. main)")
    parser.add_argument("--write-docs", action="store_true", help="write the before/after table into docs/benchmarks.md")
    args = parser.parse_args()
    for tool in ("wrk", "nginx"):
        if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
            sys.exit(f"{tool} not found: apt-get install {tool}")
    route = f"/api/names/{args.slug}"
    results: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        dist = root / "dist"
        build(REPO / "content", dist, base_url="http://127.0.0.1")
        manifest = orjson.loads((dist / "_manifest.json").read_bytes())
        file = dist / manifest["routes"][route]["file"]

        port = free_port()
        user = "user root;\n" if os.geteuid() == 0 else ""  # workers must be able to read the temp dir
        (root / "nginx.conf").write_text(NGINX_CONF.format(user=user, root=root, port=port, route=route, file=file))
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        proc = run_server([nginx, "-c", str(root / "nginx.conf"), "-e", str(root / "nginx-error.log")], port)
        try:
            results.append(("nginx (auto workers)", wrk(f"http://127.0.0.1:{port}{route}", args.duration,
                                                         args.connections)))
        finally:
            stop(proc)

        # Exactly as docs/operations.md tells an operator to run it, with no access log and no rate limit,
        # like nginx here (`access_log off`): the same work on both sides.
        serve = [sys.executable, "-m", "petgen", "serve", "--content", str(root / "none"),
                 "--base-url", "http://127.0.0.1", "--state-dir", str(root / "state"), "--no-access-log",
                 "--rate-limit", "0", "--log-level", "warning"]
        codes = [("", None, dist)]
        if args.before:  # that revision's runtime serves what that revision's build writes (the format may differ)
            src = source_of(args.before)
            subprocess.run([sys.executable, "-m", "petgen", "build", "--content", str(REPO / "content"), "--out",
                            str(root / "dist-before"), "--base-url", "http://127.0.0.1", "--no-cache"],
                           env={**os.environ, "PYTHONPATH": str(src)}, cwd=tmp, check=True, capture_output=True)
            codes = [(f" [{args.before}]", src, root / "dist-before"), (" [this]", None, dist)]
        servers = [(f"petgen serve --server {server} --workers {workers}{label}",
                    [*serve, "--dist", str(built), "--server", server, "--workers", str(workers)], src)
                   for server, workers in (("uvicorn", 1), ("granian", 1), ("uvicorn", 2), ("granian", 2))
                   for label, src, built in codes]
        search = f"/api/search?q={quote(args.query)}"
        measured: dict[str, list[float]] = {name: [] for name, _, _ in servers}
        searched: dict[str, list[float]] = {name: [] for name, _, _ in servers}
        for _ in range(args.rounds):
            for name, command, src in servers:
                port = free_port()
                env = {"PYTHONPATH": str(src)} if src else None
                proc = run_server([*command, "--host", "127.0.0.1", "--port", str(port)], port, env, cwd=tmp)
                try:
                    measured[name].append(wrk(f"http://127.0.0.1:{port}{route}", args.duration, args.connections))
                    searched[name].append(wrk(f"http://127.0.0.1:{port}{search}", args.duration, args.connections))
                finally:
                    stop(proc)
        results += [(name, statistics.median(rps)) for name, rps in measured.items()]
        searches = {name: statistics.median(rps) for name, rps in searched.items()}

    nginx_rps = results[0][1]
    print(f"GET {route}, wrk -t1 -c{args.connections} -d{args.duration}s on loopback, {os.cpu_count()} cores, "
          f"median of {args.rounds} round(s) for the runtime")
    print(f"{'server':<56} {'req/s':>10} {'% of nginx':>11} {'search req/s':>13}")
    for name, rps in results:
        print(f"{name:<56} {rps:>10.0f} {rps / nginx_rps * 100:>10.0f}% {searches.get(name, float('nan')):>13.0f}")
    if args.write_docs:
        write_docs(results, searches, args)


def write_docs(results: list[tuple[str, float]], searches: dict[str, float], args: argparse.Namespace) -> None:
    lines = [header(tools=("nginx", "wrk")),
             (f"GET /api/names/{args.slug} and (runtime only) GET /api/search?q={args.query}, wrk -t1 "
              f"-c{args.connections} -d{args.duration}s; the runtime's figures are medians of {args.rounds} rounds, "
              "each round measuring every server in turn."), "",
             f"| server | /api/names/{args.slug} req/s | % of nginx | /api/search req/s |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {rps:,.0f} | {rps / results[0][1] * 100:.0f} % | "
              + (f"{searches[name]:,.0f}" if name in searches else "–") + " |" for name, rps in results]
    replace_block("serve_vs_nginx.py", "\n".join(lines))


if __name__ == "__main__":
    main()

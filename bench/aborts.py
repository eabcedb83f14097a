"""Aborted uploads against everyone else: `/api/status` latency while clients abort their uploads.

    python3 bench/aborts.py [--aborts 200] [--batch 50] [--pause 0.25] [--server uvicorn]

Serves the bundled content with `petgen serve` (its stderr goes to a file, as to a journal). One
client polls `/api/status` over a keep-alive connection; meanwhile the aborts go out in concurrent
batches: the headers of a 10,000-byte JSON body to `/ask` or `/mcp` (in turn), 500 bytes of it,
then a close. Counted are the polls from the first abort until the server's log stops growing
(it has handled the last abort). Prints their p50/p99/max and number, and the server's log lines
by level. Target: p99 under 50 ms.
"""

from __future__ import annotations

import argparse
import collections
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from servers import free_port, stop, wait_for

from docs import recorded
from petgen.build.pipeline import build

REPO = Path(__file__).resolve().parent.parent
TARGET_P99_MS = 50
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def abort_upload(port: int, path: str) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n".encode()
                     + b'{"query": "' + b"x" * 489)


def poll(base: str, done: threading.Event, polls: list[tuple[float, float]]) -> None:
    """Request /api/status until `done`; record (start, seconds) of each request."""
    with httpx.Client(base_url=base) as client:
        while not done.is_set():
            start = time.perf_counter()
            client.get("/api/status").raise_for_status()
            polls.append((start, time.perf_counter() - start))


def settled(log: Path, quiet: float = 1.0, limit: float = 120.0) -> float:
    """Wait until the server's log has not grown for `quiet` seconds; return when it last grew."""
    size, changed = log.stat().st_size, time.perf_counter()
    while time.perf_counter() - changed < quiet and time.perf_counter() - changed < limit:
        time.sleep(0.05)
        if log.stat().st_size != size:
            size, changed = log.stat().st_size, time.perf_counter()
    return changed


def percentile(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=1000, method="inclusive")[round(p * 10) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aborts", type=int, default=200)
    parser.add_argument("--batch", type=int, default=50, help="aborts sent at once")
    parser.add_argument("--pause", type=float, default=0.25, help="seconds between batches")
    parser.add_argument("--server", choices=["uvicorn", "granian"], default="uvicorn")
    parser.add_argument("--write-docs", action="store_true",
                        help="put what this run prints into docs/benchmarks.md (bench/docs.py)")
    args = parser.parse_args()
    with recorded("aborts.py", args.write_docs):
        run(args)


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        build(REPO / "content", root / "dist", base_url=base)
        log = root / "stderr.txt"
        with log.open("w") as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "petgen", "serve", "--dist", str(root / "dist"),
                                     "--content", str(root / "none"), "--port", str(port), "--rate-limit", "0",
                                     # no access log: the log is watched for what the aborts cause
                                     "--no-access-log", "--server", args.server], cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr,
                                    start_new_session=True)
        try:
            wait_for(port)
            for _ in range(20):  # warm-up
                httpx.get(base + "/api/status").raise_for_status()
            polls: list[tuple[float, float]] = []
            done = threading.Event()
            poller = threading.Thread(target=poll, args=(base, done, polls), daemon=True)
            poller.start()
            started = time.perf_counter()
            paths = ["/ask", "/mcp"]
            with ThreadPoolExecutor(max_workers=args.batch) as pool:
                for first in range(0, args.aborts, args.batch):
                    batch = range(first, min(first + args.batch, args.aborts))
                    list(pool.map(lambda i: abort_upload(port, paths[i % 2]), batch))
                    time.sleep(args.pause)
            finished = settled(log)  # the server has logged the last abort
            done.set()
            poller.join()
        finally:
            stop(proc)
        lines = log.read_text().splitlines()

    levels = collections.Counter(next((lv for lv in LEVELS if f" {lv} " in f" {line} "), "other") for line in lines)
    latencies = [seconds for start, seconds in polls if start <= finished]  # while the server handled aborts
    p50, p99 = percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000
    print(f"{args.aborts} aborted uploads (/ask and /mcp in turn, {args.batch} at once, {args.pause:g} s apart) "
          f"to petgen serve --server {args.server}, handled in {finished - started:.2f} s")
    print(f"/api/status meanwhile: {len(latencies)} requests, p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
          f"max {max(latencies) * 1000:.1f} ms (target p99 < {TARGET_P99_MS} ms: "
          f"{'met' if p99 < TARGET_P99_MS else 'NOT met'})")
    print(f"server log: {len(lines)} lines ({', '.join(f'{k} {v}' for k, v in sorted(levels.items()))})")


if __name__ == "__main__":
    main()

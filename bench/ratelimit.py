"""What the rate limiter costs: requests/s on `GET /api/names/{slug}` with it off and on, and memory per key.

    python bench/ratelimit.py [--duration 8] [--rounds 3] [--connections 32] [--keys 100000]

One command, loopback only. Builds the bundled knowledge base (plus one registered bench bot) into a
temporary dist, starts a redis-server of its own, then alternates, round after round, the runtime
under uvicorn (one worker) with:

- the limiter off (`PETGEN_RATE_LIMIT=0`), the baseline;
- the limiter on, counting in process memory (a budget wrk never exhausts, so every request is
  counted and allowed);
- the limiter on, counting in Redis (`PETGEN_REDIS_URL`);
- the limiter on, in memory, every request signed by a registered bot (Web Bot Auth verified per
  request; one signature reused, without a nonce, as a bot may until it expires).

wrk (1 thread) drives each for --duration seconds after a 2 s warm-up; the medians over the rounds are
printed with their ratio to "off". The runtime's log is kept, to count how often Redis missed its deadline.
Then, in this process: the memory the in-process counter grows by for --keys distinct client IPs
(tracemalloc, and the process's RSS), and Redis' `used_memory` growth for the same keys counted there.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import redis
from servers import free_port, stop, wait_for

from docs import recorded
from petgen.build.pipeline import build
from petgen.cli.bots import add_bot, generate_key_pair
from runtime.clients.ratelimit import RateLimitMiddleware
from runtime.clients.sharedcounter import SharedWindowCounter
from runtime.clients.sharedstore import SharedStore
from runtime.health import Health

REPO = Path(__file__).resolve().parent.parent
ROUTE = "/api/names/baerchen"
HUGE = "1000000000"  # a budget wrk cannot exhaust: every request is counted and allowed


def cpu_seconds(group: int) -> float:
    """User + system CPU time the processes of a process group (a server and its workers) have used so far."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == group:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def wrk(url: str, duration: int, connections: int, headers: dict[str, str], pid: int) -> tuple[float, float]:
    """(requests/s, the server's CPU microseconds per request) over one measured wrk run."""
    flags = [arg for name, value in headers.items() for arg in ("-H", f"{name}: {value}")]
    subprocess.run(["wrk", "-t1", f"-c{connections}", "-d2s", *flags, url], capture_output=True, check=True)
    cpu = cpu_seconds(pid)
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{duration}s", *flags, url], capture_output=True,
                         text=True, check=True).stdout
    cpu = cpu_seconds(pid) - cpu
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{url}: {errors.group(1)} error responses\n{out}")
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), cpu / requests * 1e6  # type: ignore[union-attr]


def signed_headers(private_jwk: Path, port: int) -> dict[str, str]:
    """A Web Bot Auth signature for the benchmark's host, valid for the maximum 300 s, without a nonce."""
    import base64
    import json

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms

    jwk = json.loads(private_jwk.read_text())
    key = Ed25519PrivateKey.from_private_bytes(base64.urlsafe_b64decode(jwk["d"] + "="))

    class Message:
        method, url, headers = "GET", f"http://127.0.0.1:{port}{ROUTE}", {"Signature-Agent": 'sig1="https://b.example"'}

    now = dt.datetime.now(dt.UTC)
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519,
                               key_resolver=MappingKeyResolver(private_keys={jwk["kid"]: key}, public_keys={}))
    signer.sign(Message, key_id=jwk["kid"], label="sig1", created=now, expires=now + dt.timedelta(seconds=300),
                tag="web-bot-auth", covered_component_ids=("@authority", '"signature-agent";key="sig1"'))
    return dict(Message.headers)


SERVERS = {  # the options after `python -m <server> --host … --port …`
    "uvicorn": ["--factory", "--no-access-log", "--log-level", "warning", "runtime.app:create_app"],
    "granian": ["--interface", "asgi", "--factory", "--no-ws", "--log-level", "warning", "runtime.app:create_app"],
}


def serve(server: str, dist: Path, port: int, log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The runtime under `server` (one worker) on `port`, its output appended to `log`."""
    command = [sys.executable, "-m", server, "--host", "127.0.0.1", "--port", str(port), *SERVERS[server]]
    with log.open("ab") as out:
        # The access log off in every configuration: what differs between them is the limiter alone.
        proc = subprocess.Popen(command, env={**os.environ, "PETGEN_DIST": str(dist), "PETGEN_ACCESS_LOG": "0", **env},
                                stdout=out, stderr=out, start_new_session=True)
    wait_for(port)
    return proc


def throughput(args: argparse.Namespace, server: str, dist: Path, redis_url: str, private_jwk: Path,
               log: Path) -> None:
    configs = {
        "limiter off": {"PETGEN_RATE_LIMIT": "0"},
        "on, memory": {"PETGEN_RATE_LIMIT": HUGE},
        "on, Redis": {"PETGEN_RATE_LIMIT": HUGE, "PETGEN_REDIS_URL": redis_url},
        "on, memory, signed bot": {"PETGEN_RATE_LIMIT": HUGE},
    }
    rates: dict[str, list[float]] = {name: [] for name in configs}
    costs: dict[str, list[float]] = {name: [] for name in configs}
    misses = log.read_text(errors="replace").count("failed (") if log.exists() else 0
    for round_ in range(args.rounds):
        for name, env in configs.items():
            port = free_port()
            headers = signed_headers(private_jwk, port) if "signed" in name else {}
            proc = serve(server, dist, port, log, env)
            try:
                rate, cost = wrk(f"http://127.0.0.1:{port}{ROUTE}", args.duration, args.connections, headers, proc.pid)
            finally:
                stop(proc)
            rates[name].append(rate)
            costs[name].append(cost)
            print(f"  {server} round {round_ + 1}: {name}: {rate:,.0f} req/s, {cost:.1f} µs CPU per request",
                  flush=True)
    base_rate, base_cost = statistics.median(rates["limiter off"]), statistics.median(costs["limiter off"])
    print(f"\nGET {ROUTE}, {server} (1 worker), wrk -t1 -c{args.connections} -d{args.duration}s, "
          f"median of {args.rounds} alternating rounds")
    print(f"{'configuration':<24} {'req/s':>8} {'vs off':>7} {'CPU µs/req':>11} {'vs off':>7}")
    for name in configs:
        rate, cost = statistics.median(rates[name]), statistics.median(costs[name])
        print(f"{name:<24} {rate:>8,.0f} {rate / base_rate:>6.2f}x {cost:>11.1f} {base_cost / cost:>6.2f}x")
    misses = log.read_text(errors="replace").count("failed (") - misses
    print(f"Redis missed its deadline (the runtime fell back to memory) {misses} time(s)\n", flush=True)


def memory_in_process(keys: int) -> None:
    """The in-process counter's growth for `keys` distinct client IPs, through the middleware's evaluate."""
    limiter = RateLimitMiddleware(lambda *a: None, limit=60, max_keys=keys)
    scopes = [{"type": "http", "client": (f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}", 1), "headers": []}
              for i in range(keys)]

    async def count() -> None:
        for scope in scopes:
            await limiter.evaluate(scope)

    gc.collect()
    rss_before = rss()
    asyncio.run(count())
    gc.collect()
    rss_grown = rss() - rss_before
    assert len(limiter.store.counts) == keys
    limiter.store.counts.clear()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    asyncio.run(count())
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    print(f"In-process counter, {keys:,} distinct client IPs: process RSS +{rss_grown / 2**20:.1f} MB; "
          f"{grown / 2**20:.1f} MB traced by tracemalloc ({grown / keys:.0f} B per key)")


def memory_in_redis(redis_url: str, keys: int) -> None:
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    before = client.info("memory")["used_memory"]

    async def count() -> None:
        store = SharedStore(redis_url, health=Health(), timeout=5)
        counter = SharedWindowCounter(store, RateLimitMiddleware(lambda *a: None, limit=60).store)
        for start in range(0, keys, 50):
            await asyncio.gather(*(counter.hit(f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}", 60)
                                   for i in range(start, min(start + 50, keys))))
        assert store.available
        await store.close()

    started = time.perf_counter()
    asyncio.run(count())
    seconds = time.perf_counter() - started
    grown = client.info("memory")["used_memory"] - before
    print(f"Redis counter, {keys:,} distinct client IPs: used_memory +{grown / 2**20:.1f} MB "
          f"({grown / keys:.0f} B per key; each expires two windows after its last request); {keys / seconds:,.0f} "
          "hits/s from one asyncio process, 50 in flight")
    client.close()


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--servers", nargs="+", choices=list(SERVERS), default=list(SERVERS))
    parser.add_argument("--write-docs", action="store_true",
                        help="put what this run prints into docs/benchmarks.md (bench/docs.py)")
    args = parser.parse_args()
    with recorded("ratelimit.py", args.write_docs, tools=('wrk', 'redis-server')):
        run(args)


def run(args: argparse.Namespace) -> None:
    for tool in ("wrk", "redis-server"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install {tool}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(REPO / "content", root / "content")
        private, public, _ = generate_key_pair(root / "bench")
        add_bot(root / "content", "BenchBot", public, "https://bench.example", "Benchmarks", quota=1_000_000)
        build(root / "content", root / "dist", base_url="http://127.0.0.1")
        redis_port = free_port()
        redis_proc = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                                       "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for(redis_port)
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        try:
            for server in args.servers:
                throughput(args, server, root / "dist", redis_url, private, root / "runtime.log")
            print("(\"vs off\" of the CPU column: requests per CPU-second of the server relative to off, which the "
                  "machine's other load disturbs less than requests/s)")
            memory_in_process(args.keys)
            memory_in_redis(redis_url, args.keys)
        finally:
            stop(redis_proc)


if __name__ == "__main__":
    main()

"""Webhook events derived and delivered per second when every entry of a 10,000-entry dist changes.

    python bench/webhooks.py [--entries 10000] [--subscribers 1 4] [--redis]

One run, one machine, loopback only. Writes the synthetic corpus (petgen/content/synthetic.py), builds it,
then builds it again with the `meaning` of every entry edited, so the second build differs from the
first in every entry: N `entry.updated` events.

- Derivation: in this process, on a fresh store (SQLite in a temporary state directory, and with
  `--redis` also the shared Redis store at PETGEN_REDIS_URL or a redis-server started here): the
  baseline of the first build, then the timed derivation of the second (reading the entries from the
  loaded dist, planning, and the one transaction that writes snapshot, events and outbox).
- Delivery: the runtime in a child process (`uvicorn --factory runtime.app:create_app`, SQLite store,
  rate limit off) with S subscriptions to a minimal HTTP/1.1 receiver in this process; it loads the
  first build (the baseline), then gets SIGHUP after the second build is swapped in. Timed from the
  signal to the last delivery received: reload, derivation and S × N signed deliveries.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from servers import free_port, wait_for

from docs import recorded
from petgen.build.pipeline import build
from petgen.content.synthetic import write_corpus
from runtime.builds.dist import Dist
from runtime.webhooks.derive import dist_items, plan_events
from runtime.webhooks.destinations import Policy
from runtime.webhooks.model import Subscription
from runtime.webhooks.operator import add
from runtime.webhooks.sqlite_store import SQLiteStore
from runtime.webhooks.store import SQLITE_FILE, Store

REPO = Path(__file__).resolve().parent.parent


class Receiver:
    """A minimal keep-alive HTTP/1.1 endpoint that answers 204 and counts events, so it is never the bottleneck."""

    def __init__(self) -> None:
        self.port = free_port()
        self.ids: set[str] = set()
        self.count = 0
        self.first = self.last = 0.0
        self.ready = threading.Event()
        threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True).start()
        self.ready.wait(10)

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._connection, "127.0.0.1", self.port)
        self.ready.set()
        async with server:
            await server.serve_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                await reader.readexactly(int(length.group(1)) if length else 0)
                event = re.search(rb"(?i)\r\nx-petname-event-id: *(\S+)", head)
                self.ids.add(event.group(1).decode() if event else "")
                self.count += 1
                self.last = time.perf_counter()
                self.first = self.first or self.last
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def changed_copy(content: Path, target: Path) -> Path:
    """The same corpus with the meaning of every entry edited."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(content, target)
    for path in (target / "names").glob("*.md"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(" ist ein synthetischer Kosename ", " ist ein geänderter Kosename ", 1),
                        encoding="utf-8")
    return target


def derive_rate(store: Store, before: Dist, after: Dist) -> tuple[int, float, float]:
    """(events, seconds for the timed derivation, seconds of it spent reading the dist's entries)."""
    store.derive(before.source_hash, lambda previous, baseline: plan_events(
        previous, dist_items(before), base_url="", now=time.time(), baseline=True), time.time())
    started = time.perf_counter()
    items = dist_items(after)
    reading = time.perf_counter() - started
    events = store.derive(after.source_hash, lambda previous, baseline: plan_events(
        previous, items, base_url="", now=time.time(), baseline=baseline), time.time())
    return len(events), time.perf_counter() - started, reading


def redis_for_bench(root: Path) -> tuple[str, subprocess.Popen[bytes] | None]:
    if os.environ.get("PETGEN_REDIS_URL"):
        return os.environ["PETGEN_REDIS_URL"], None
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("--redis needs redis-server (apt-get install redis-server) or PETGEN_REDIS_URL")
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                "yes", "--appendfsync", "everysec", "--dir", str(root)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return f"redis://127.0.0.1:{port}/15", process


def deliver_rate(before: Path, after: Path, dist: Path, subscribers: int, events: int,
                 root: Path) -> tuple[int, float, float]:
    """(deliveries, seconds from SIGHUP to the last, seconds from SIGHUP to the first) with `subscribers`."""
    state = root / f"state-{subscribers}"
    shutil.rmtree(state, ignore_errors=True)
    receiver = Receiver()
    store = SQLiteStore(state / SQLITE_FILE)
    for n in range(subscribers):
        add(store, f"http://127.0.0.1:{receiver.port}/hook/{n}", ("entry.updated",), "", Policy(True), time.time())
    port = free_port()
    shutil.rmtree(dist, ignore_errors=True)
    shutil.copytree(before, dist, symlinks=True)
    env = {**os.environ, "PETGEN_DIST": str(dist), "PETGEN_STATE_DIR": str(state), "PETGEN_RATE_LIMIT": "0",
           "PETGEN_DIST_POLL": "0", "PETGEN_WEBHOOK_ALLOW_LOOPBACK": "1"}
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "runtime.app:create_app", "--host",
                                "127.0.0.1", "--port", str(port), "--log-level", "warning"], env=env, cwd=REPO)
    try:
        wait_for(port, timeout=300)  # loads the first build and records the baseline
        shutil.rmtree(dist)
        shutil.copytree(after, dist, symlinks=True)
        expected = subscribers * events
        signalled = time.perf_counter()
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 3600
        while receiver.count < expected:
            time.sleep(0.05)
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit(f"only {receiver.count} of {expected} deliveries arrived")
        assert len(receiver.ids) == events, "every event, and each once per subscriber"
        return receiver.count, receiver.last - signalled, receiver.first - signalled
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--subscribers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--redis", action="store_true", help="also derive on the shared Redis store")
    parser.add_argument("--write-docs", action="store_true",
                        help="put what this run prints into docs/benchmarks.md (bench/docs.py)")
    args = parser.parse_args()
    with recorded("webhooks.py", args.write_docs, tools=('redis-server',)):
        run(args)


def run(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="petgen-bench-webhooks-"))
    try:
        base = f"http://127.0.0.1:{free_port()}"
        content = write_corpus(root / "content", args.entries, taxonomy_from=REPO / "content")
        build(content, root / "before", base_url=base, cache_dir=root / "cache")
        build(changed_copy(content, root / "content-after"), root / "after", base_url=base, cache_dir=root / "cache")
        before, after = Dist.load(root / "before"), Dist.load(root / "after")
        print(f"{args.entries:,} entries, every one changed (its meaning): {args.entries:,} entry.updated events")

        stores: list[tuple[str, Store]] = [("SQLite", SQLiteStore(root / "derive" / SQLITE_FILE))]
        redis_process = None
        if args.redis:
            from runtime.webhooks.redis_store import RedisStore

            url, redis_process = redis_for_bench(root)
            redis_store = RedisStore(url)
            redis_store.redis.flushdb()
            stores.append(("Redis", redis_store))
        for name, store in stores:
            store.add_subscription(Subscription("wh_benchbenchbench", "https://hooks.bench.example/in",
                                                ("entry.updated",), "", "operator", time.time(), "whsec_AAAA"),
                                   limit=None)
            events, seconds, reading = derive_rate(store, before, after)
            print(f"derive on {name}: {events:,} events (and {events:,} deliveries queued) in {seconds:.2f} s → "
                  f"{events / seconds:,.0f} events/s (reading the entries from the loaded dist: {reading:.2f} s)")
            store.close()
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait()

        for subscribers in args.subscribers:
            count, last, first = deliver_rate(root / "before", root / "after", root / "dist", subscribers, args.entries,
                                              root)
            print(f"deliver to {subscribers} subscriber{'s' if subscribers > 1 else ''}: {count:,} signed POSTs, "
                  f"the first {first:.2f} s and the last {last:.2f} s after SIGHUP → {count / last:,.0f} "
                  f"deliveries/s including reload and derivation, {count / (last - first):,.0f}/s once flowing")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The self-hosted profile for real: `redis-server`, two runtime replicas (uvicorn subprocesses, configured by
PETGEN_* variables as docs/deploy.md shows) and Debian's nginx with deploy/nginx.conf, all on loopback.

`.ci/run` installs `nginx-light`; a machine without nginx fails these tests with the command to run. nginx
runs as the current user with a prefix directory of the test's own (pid, logs, temp files), in the
foreground; every process started here is stopped here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest

from tests.conftest import REPO
from tests.redis_server import RedisServer, free_port

NGINX_TEMPLATE = REPO / "deploy" / "nginx.conf"
STARTUP = 20  # seconds a process may take to answer; usually well under one


def render_nginx_conf(prefix: Path, listen: str, replicas: list[int]) -> str:
    """deploy/nginx.conf with its placeholders filled, as docs/deploy.md tells an operator to."""
    servers = "\n        ".join(f"server 127.0.0.1:{port} max_fails=0;" for port in replicas)
    return (NGINX_TEMPLATE.read_text(encoding="utf-8").replace("@PREFIX@", str(prefix))
            .replace("@LISTEN@", listen).replace("@REPLICAS@", servers))


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code < 500
    except httpx.HTTPError:
        return False


def _listens(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def _wait_until(process: subprocess.Popen[bytes], ready: Callable[[], bool], what: str, log: Path) -> None:
    """Until `ready()`; a process that exits or never gets ready is killed and its log shown."""
    deadline = time.monotonic() + STARTUP
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait(timeout=15)
            raise RuntimeError(f"{what} did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.02)


@dataclass
class Replica:
    """One runtime process as docs/deploy.md runs it: `petgen serve --server granian`, every setting from the
    environment."""

    name: str
    port: int
    env: dict[str, str]
    workdir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Replica:
        log = self.workdir / f"{self.name}.log"
        with log.open("ab") as out:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(
                [sys.executable, "-m", "petgen", "serve", "--server", "granian"],
                cwd=REPO, env={**self.env, "PETGEN_PORT": str(self.port)}, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)  # its group: the server and its worker
        _wait_until(self.process, lambda: _answers(self.url + "/api/status"), f"replica {self.name}", log)
        return self

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        """SIGTERM: the server finishes what is in flight, then exits. SIGKILL: gone at once."""
        _stop(self.process, sig)
        self.process = None


@dataclass
class Nginx:
    prefix: Path
    port: int
    replicas: list[int]
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def access_log(self) -> Path:
        return self.prefix / "access.log"

    def start(self) -> Nginx:
        binary = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)
        if binary is None:
            pytest.fail("nginx is not installed: apt-get install -y nginx-light (.ci/run does)")
        for temp in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.prefix / "temp" / temp).mkdir(parents=True, exist_ok=True)
        conf = self.prefix / "nginx.conf"
        conf.write_text(render_nginx_conf(self.prefix, f"127.0.0.1:{self.port}", self.replicas), encoding="utf-8")
        log = self.prefix / "stderr.log"
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [binary, "-p", str(self.prefix), "-c", str(conf), "-e", str(self.prefix / "error.log")],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        # listening is enough: its upstreams may be anything (a test's stand-in answers one request only)
        _wait_until(self.process, lambda: _listens(self.port), "nginx", log)
        return self

    def stop(self) -> None:
        _stop(self.process, signal.SIGQUIT)  # graceful: workers finish their requests
        self.process = None

    def requests(self) -> list[tuple[str, str]]:
        """Per logged request: its request line, and the replica addresses nginx tried, in order."""
        lines = self.access_log.read_text().splitlines() if self.access_log.exists() else []
        return [(line.split('"')[1], line.split("upstream=", 1)[1].split(" upstream_status=")[0]) for line in lines]


@dataclass
class Stack:
    redis: RedisServer
    replicas: list[Replica]
    nginx: Nginx

    @property
    def url(self) -> str:
        return self.nginx.url


def replica_env(dist: Path, redis_url: str, state_dir: Path, **extra: str) -> dict[str, str]:
    """The settings a replica behind nginx needs (docs/deploy.md's table)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETGEN_")}
    base_url = orjson.loads((dist / "_manifest.json").read_bytes())["base_url"]
    return {**env, "PETGEN_DIST": str(dist), "PETGEN_REDIS_URL": redis_url, "PETGEN_STATE_DIR": str(state_dir),
            "PETGEN_BASE_URL": base_url, "PETGEN_CONTENT": str(state_dir / "no-content"),  # serve dist as built
            "PETGEN_HOST": "127.0.0.1", "PETGEN_TRUSTED_PROXIES": "127.0.0.1/32", "PETGEN_LOG_LEVEL": "warning",
            # the tests count exactly: give Redis time rather than fall back to a per-process count
            "PETGEN_REDIS_TIMEOUT_MS": "2000", **extra}


@contextlib.contextmanager
def self_hosted(dist: Path, workdir: Path, *, replicas: list[int] | None = None, **extra: str) -> Iterator[Stack]:
    """redis-server, two replicas sharing it, nginx in front; yields the running stack and stops all of it.
    `replicas` puts other upstreams (ports) in the nginx config instead of starting runtime processes."""
    redis = RedisServer(workdir / "redis")
    started: list[Replica] = []
    nginx: Nginx | None = None
    try:
        redis.start()
        if replicas is None:
            for name in ("a", "b"):
                state = workdir / f"state-{name}"
                state.mkdir(parents=True, exist_ok=True)
                replica = Replica(name, free_port(), replica_env(dist, redis.url, state, **extra), workdir)
                started.append(replica.start())
            replicas = [r.port for r in started]
        (workdir / "nginx").mkdir(parents=True, exist_ok=True)
        nginx = Nginx(workdir / "nginx", free_port(), replicas).start()
        yield Stack(redis, started, nginx)
    finally:
        if nginx is not None:
            nginx.stop()
        for replica in started:
            replica.stop()
        redis.stop()


def _stop(process: subprocess.Popen[bytes] | None, sig: signal.Signals) -> None:
    """Signal a process that still runs and wait for it; kill it if it takes over 15 s."""
    if process is None or process.poll() is not None:
        return
    group = os.getpgid(process.pid) == process.pid  # a replica leads its group: signal its workers too
    os.killpg(process.pid, sig) if group else process.send_signal(sig)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL) if group else process.kill()
        process.wait(timeout=15)

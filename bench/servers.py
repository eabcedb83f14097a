"""Starting and stopping servers for the benchmarks: loopback only, every process stopped again."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"nothing listening on {port}")


def run_server(command: list[str], port: int, env: dict[str, str] | None = None,
               cwd: str | None = None) -> subprocess.Popen[bytes]:
    """Start a server in its own process group and wait until it listens (`python -m` puts the working
    directory first on sys.path: pass `cwd` to run the code PYTHONPATH names)."""
    proc = subprocess.Popen(command, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, cwd=cwd)
    wait_for(port)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server started by run_server, with everything it started."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

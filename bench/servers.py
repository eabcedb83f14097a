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


def group_cpu(proc: subprocess.Popen[bytes]) -> float:
    """CPU seconds (user and system) used so far by the live processes of a server started by run_server (its
    process group: the server and the workers it started), from /proc; 0 where /proc is not there."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == proc.pid:  # pgrp
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick

"""`petgen serve` as a real process for the tests that need the server as an operator starts it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.conftest import REPO
from tests.runtime.test_server import free_port


@contextlib.contextmanager
def petgen_serve(dist: Path, workdir: Path, *args: str, host: str = "127.0.0.1",
                 base_url: str | None = "http://127.0.0.1",
                 env: dict[str, str] | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """`petgen serve` for `dist` (built for `base_url`; no content beside it) in its own process group, its
    stderr in a file in `workdir`; yields its base URL once /api/status answers, the process and the log
    file, and stops the whole group (SIGTERM, then SIGKILL after 20 s)."""
    port = free_port()
    log = workdir / f"serve-{port}.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "petgen", "serve", "--dist", str(dist), "--content", str(workdir / "none"),
             "--host", host, "--port", str(port), *(("--base-url", base_url) if base_url else ()),
             "--state-dir", str(workdir / "state"), *args],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True, env={**os.environ, **(env or {})})
    base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/status", timeout=1).status_code == 200:
                    break
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield base, process, log
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

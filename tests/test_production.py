"""`petgen serve` as an operator runs it: several workers, metrics apart from the public port, JSON logs,
and a SIGTERM that lets requests in flight finish. Real processes, real sockets."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import orjson
import pytest

from petgen.build.pipeline import build
from tests.conftest import REPO, write_site
from tests.runtime.test_server import free_port
from tests.serving import petgen_serve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("production")
    build(write_site(root / "content"), root / "dist", base_url="http://127.0.0.1")
    return root / "dist"


def scrape(port: int) -> dict[str, float]:
    """The metrics as {series: value}."""
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


@pytest.mark.parametrize("server", ["uvicorn", "granian"])
def test_workers_metrics_and_json_logs(site: Path, tmp_path: Path, server: str) -> None:
    metrics_port = free_port()
    with petgen_serve(site, tmp_path, "--server", server, "--workers", "2", "--metrics-port", str(metrics_port),
                      "--log-format", "json", "--rate-limit", "1000") as (base, _, log):
        before = scrape(metrics_port)
        entries = httpx.get(f"{base}/api/status").json()["names"]
        ids = []
        for _ in range(12):  # new connections: whichever worker accepts one answers it
            response = httpx.get(f"{base}/api/names/apfel")
            assert response.status_code == 200
            ids.append(response.headers["x-request-id"])
        assert httpx.get(f"{base}/api/names/gibtsnicht").status_code == 404
        assert httpx.get(f"{base}/metrics").status_code == 404  # not on the public port
        after = scrape(metrics_port)
        deadline = time.monotonic() + 5  # a worker lowers its in-flight gauge once the response is sent
        while after["petgen_http_requests_in_flight"] != 0 and time.monotonic() < deadline:
            time.sleep(0.05)
            after = scrape(metrics_port)
        time.sleep(0.5)  # the last access lines
        lines = log.read_bytes().splitlines()
    served = 'petgen_http_request_duration_seconds_count{status="200",surface="name"}'
    assert after[served] - before.get(served, 0) == 12  # counted in whichever worker answered
    assert after['petgen_http_request_duration_seconds_count{status="404",surface="name"}'] == 1
    assert after["petgen_dist_entries"] == entries and after["petgen_http_requests_in_flight"] == 0
    records = [orjson.loads(line) for line in lines]  # every line is one JSON object
    access = [r["access"] for r in records if r["logger"] == "petgen.access"]
    assert {a["request_id"] for a in access if a["path"] == "/api/names/apfel"} == set(ids)
    loaded = [r for r in records if r["logger"] == "petgen.runtime" and r["message"].startswith("loaded ")]
    assert len(loaded) == 2, "two workers, each with the dist loaded"  # which one answers is the kernel's choice


def test_a_metrics_port_in_use_is_a_clear_error(site: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "petgen", "serve", "--dist", str(site), "--content",
                                 str(tmp_path / "none"), "--base-url", "http://127.0.0.1", "--port", str(free_port()),
                                 "--metrics-port", str(port), "--state-dir", str(tmp_path)],
                                cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1 and f"cannot listen for metrics on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_dev_refuses_workers(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "petgen", "dev", "--workers", "2"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)},
                            check=False)
    assert result.returncode == 2 and "petgen dev runs one process" in result.stderr


@pytest.mark.parametrize("server", ["uvicorn", "granian"])
def test_sigterm_lets_a_request_in_flight_finish_and_its_stream_end(site: Path, tmp_path: Path, server: str) -> None:
    """An /ask whose body is half sent when SIGTERM comes: the server stops taking connections, the
    request is answered in full (an SSE stream with its closing event), then the server exits."""
    body = orjson.dumps({"query": "Apfel", "prefer": {"streaming": True}})
    with petgen_serve(site, tmp_path, "--server", server, "--workers", "1", "--graceful-timeout", "20") as (
            base, process, log):
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Accept: text/event-stream\r\nConnection: close\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:10])
            time.sleep(0.3)
            os.killpg(process.pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # until the listener is closed
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                except OSError:
                    break
                time.sleep(0.1)
            else:
                pytest.fail("still accepting connections 10 s after SIGTERM")
            conn.sendall(body[10:])
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        # uvicorn ends by re-raising the signal once it has shut down cleanly (exit status -15), granian with 0.
        assert process.wait(timeout=20) in (0, -signal.SIGTERM), log.read_text()
        assert "Traceback" not in log.read_text() and "ERROR" not in log.read_text()
    head, _, stream = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head.lower()
    assert b"event: start" in stream and b"event: result" in stream and b"event: complete" in stream
    # Ended as HTTP says a stream ends (the last chunk), not cut off: the client knows it got everything.
    assert stream.endswith(b"0\r\n\r\n") if b"chunked" in head.lower() else stream.endswith(b"\n\n"), stream[-200:]


def test_a_failing_check_shows_in_the_metrics(site: Path, tmp_path: Path) -> None:
    """Redis named but not there: requests are still answered (each process counts alone), /api/status says
    degraded, and the metrics say which check fails."""
    metrics_port = free_port()
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        dead = unused.getsockname()[1]
    with petgen_serve(site, tmp_path, "--metrics-port", str(metrics_port), "--redis-url",
                      f"redis://127.0.0.1:{dead}/0") as (base, _, _log):
        assert httpx.get(f"{base}/api/names/apfel").status_code == 200
        deadline = time.monotonic() + 10
        while scrape(metrics_port).get('petgen_check_failing{check="limits"}') != 1:
            assert time.monotonic() < deadline, scrape(metrics_port)
            httpx.get(f"{base}/api/names/apfel")
            time.sleep(0.2)
        assert httpx.get(f"{base}/api/status").json()["status"] == "degraded"


@pytest.mark.parametrize("server", ["uvicorn", "granian"])
def test_a_websocket_upgrade_is_answered_as_the_http_request_it_is(site: Path, tmp_path: Path, server: str) -> None:
    """No endpoint speaks WebSocket: the server ignores Upgrade (RFC 9110 allows it) and the runtime answers
    with its own status and envelope instead of a bare 403."""
    upgrade = {"connection": "Upgrade", "upgrade": "websocket", "sec-websocket-version": "13",
               "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ=="}
    with petgen_serve(site, tmp_path, "--server", server) as (base, _, _log):
        mcp = httpx.get(f"{base}/mcp", headers=upgrade)
        name = httpx.get(f"{base}/api/names/apfel", headers=upgrade)
    assert mcp.status_code == 405 and mcp.headers["content-type"].startswith("application/json")
    assert mcp.json()["error"]["data"]["code"] == "method_not_allowed"  # a JSON-RPC error, as on /mcp always
    assert name.status_code == 200 and name.json()["slug"] == "apfel"


def test_an_ipv6_listener_builds_its_urls_with_brackets(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET6) as probe:
        try:
            probe.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback on this machine")
    content = write_site(tmp_path / "content")
    dist = tmp_path / "dist"
    with petgen_serve(dist, tmp_path, "--content", str(content), host="::1", base_url=None) as (base, _, _log):
        page = httpx.get(f"{base}/api/names?limit=1").json()
    assert base.startswith("http://[::1]:") and page["nextUrl"].startswith(f"{base}/api/names?")

"""Slow, idle and too many clients, against a real uvicorn server with raw sockets."""

from __future__ import annotations

import contextlib
import resource
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import orjson
import pytest

from petgen.build.pipeline import build
from runtime.settings import Settings
from tests.conftest import REPO, write_site
from tests.runtime.test_server import running_server
from tests.serving import petgen_serve

TRICKLE = 0.25  # seconds between bytes
PATIENCE = 8.0  # seconds a test waits for the server to act on a 1-second timeout before it gives up


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("connections")
    build(write_site(root / "content"), root / "dist", base_url="http://127.0.0.1")
    return root / "dist"


@pytest.fixture(scope="module")
def uvicorn_strict(site: Path) -> Iterator[str]:
    """uvicorn (in a thread) with one-second timeouts."""
    with running_server(site, header_timeout=1, body_timeout=1, keepalive_timeout=1) as base:
        yield base


@pytest.fixture(scope="module")
def granian_strict(site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`petgen serve --server granian` (a process with a worker process) with one-second timeouts."""
    with petgen_serve(site, tmp_path_factory.mktemp("granian"), "--server", "granian", "--header-timeout", "1",
                      "--body-timeout", "1", "--rate-limit", "0") as (base, _, _log):
        yield base


@pytest.fixture(params=["uvicorn", "granian"])
def strict(request: pytest.FixtureRequest) -> str:
    """Each server `petgen serve` offers, with one-second timeouts."""
    return request.getfixturevalue(f"{request.param}_strict")  # type: ignore[no-any-return]


@contextlib.contextmanager
def connect(base: str) -> Iterator[socket.socket]:
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port)) as sock:
        sock.settimeout(PATIENCE)
        yield sock


def trickle(sock: socket.socket, data: bytes) -> bytes:
    """Send `data` a byte every TRICKLE seconds, reading whatever the server sends, until it closes the
    connection; return what it sent. Running out of data first fails the test."""
    received = b""
    for byte in data:
        with contextlib.suppress(OSError):  # the server may have closed already; the read below tells
            sock.sendall(bytes([byte]))
        if select.select([sock], [], [], TRICKLE)[0]:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return received
            if not chunk:
                return received
            received += chunk
    pytest.fail(f"the connection stayed open for {len(data) * TRICKLE:g} s; the server sent {received!r}")


def read_to_end(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection; a socket timeout fails the test."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def envelope(response: bytes) -> dict[str, object]:
    """The error envelope; on /mcp, the JSON-RPC error's `data`, which carries the envelope's code."""
    _, _, body = response.partition(b"\r\n\r\n")
    error = orjson.loads(body)["error"]
    return error["data"] if isinstance(error["code"], int) else error  # type: ignore[no-any-return]


def test_trickled_headers_get_408_and_the_connection_closed(uvicorn_strict: str) -> None:
    with connect(uvicorn_strict) as sock:
        response = trickle(sock, b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: " + b"s" * 40)
    assert response.startswith(b"HTTP/1.1 408 ")
    assert b"\r\nconnection: close\r\n" in response.lower()
    assert envelope(response)["code"] == "request_timeout"


def test_granian_closes_trickled_headers(granian_strict: str) -> None:
    """granian hangs up without an answer."""
    with connect(granian_strict) as sock:
        assert trickle(sock, b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: " + b"s" * 40) == b""


def test_a_connection_that_sends_nothing_is_closed(strict: str) -> None:
    with connect(strict) as sock:
        assert read_to_end(sock) == b""


@pytest.mark.parametrize("path", ["/ask", "/mcp"])
def test_a_trickled_body_gets_408_and_the_connection_closed(strict: str, path: str) -> None:
    with connect(strict) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Accept: application/json\r\nContent-Length: 100\r\n\r\n".encode())
        response = trickle(sock, b'{"query": "' + b"x" * 80 + b'"}')
    assert response.startswith(b"HTTP/1.1 408 ")
    assert envelope(response)["code"] == "request_timeout"


def test_a_trickled_body_the_app_did_not_read_ends_in_a_close(strict: str) -> None:
    """Answered at once (405), then the rest of the body trickles: the connection is closed all the same."""
    with connect(strict) as sock:
        sock.sendall(b"POST /api/names HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n")
        response = trickle(sock, b"x" * 60)
    assert response.startswith(b"HTTP/1.1 405 ")


def test_an_idle_keep_alive_connection_is_closed(strict: str) -> None:
    with connect(strict) as sock:
        sock.settimeout(4)  # more than the server's keep-alive timeout of 1 s, less than uvicorn's default of 5 s
        sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        response = read_to_end(sock)  # the answer, then the close
    assert response.startswith(b"HTTP/1.1 200 ") and response.count(b"HTTP/1.1") == 1


def test_a_keep_alive_connection_serves_a_second_request(strict: str) -> None:
    """The header deadline starts again with each request's first byte."""
    with httpx.Client(base_url=strict) as client:
        assert client.get("/api/status").status_code == 200
        time.sleep(0.5)
        assert client.get("/api/status").status_code == 200


def test_connections_over_the_cap_get_a_503_envelope(site: Path) -> None:
    with running_server(site, max_connections=2, header_timeout=30) as base, \
            connect(base), connect(base):  # two connections that hold their place
        deadline = time.monotonic() + PATIENCE
        while (response := httpx.get(base + "/api/status")).status_code != 503 and time.monotonic() < deadline:
            time.sleep(0.05)  # the server may not have accepted both yet
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "service_unavailable"
        assert response.headers["retry-after"] == "1"


def test_connections_under_the_cap_are_served(site: Path) -> None:
    with running_server(site, max_connections=3, header_timeout=30) as base, connect(base), \
            httpx.Client(base_url=base) as client:
        assert [client.get("/api/status").status_code for _ in range(3)] == [200, 200, 200]


def test_timeouts_the_cap_and_the_log_level_from_the_environment() -> None:
    settings = Settings.from_env({"PETGEN_HEADER_TIMEOUT": "2.5", "PETGEN_BODY_TIMEOUT": "3",
                                  "PETGEN_KEEPALIVE_TIMEOUT": "4", "PETGEN_MAX_CONNECTIONS": "50"})
    assert (settings.header_timeout, settings.body_timeout, settings.keepalive_timeout,
            settings.max_connections) == (2.5, 3.0, 4.0, 50)
    with pytest.raises(ValueError, match="PETGEN_BODY_TIMEOUT must be more than 0 seconds"):
        Settings.from_env({"PETGEN_BODY_TIMEOUT": "0"})
    with pytest.raises(ValueError, match="PETGEN_HEADER_TIMEOUT must be a number of seconds, not 'soon'"):
        Settings.from_env({"PETGEN_HEADER_TIMEOUT": "soon"})
    assert Settings.from_env({"PETGEN_LOG_LEVEL": "WARNING"}).log_level == "warning"
    with pytest.raises(ValueError, match="PETGEN_LOG_LEVEL must be one of debug, info, warning, error, not 'loud'"):
        Settings.from_env({"PETGEN_LOG_LEVEL": "loud"})


def test_an_endless_header_gets_431_and_the_connection_closed(uvicorn_strict: str) -> None:
    """Sent at full speed, not trickled: the head is capped in size as well as in time."""
    with connect(uvicorn_strict) as sock:
        sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Endless: ")
        response = b""
        for _ in range(128):  # 2 MB at most
            sock.sendall(b"a" * 16384)
            if select.select([sock], [], [], 0.01)[0]:
                response = read_to_end(sock)
                break
    assert response.startswith(b"HTTP/1.1 431 ")
    assert envelope(response)["code"] == "headers_too_large"


def test_a_100_kb_header_sent_at_once_gets_431_but_a_big_body_does_not(uvicorn_strict: str) -> None:
    """The first packet counts too (it holds the whole head), and a body in the same packet does not."""
    with connect(uvicorn_strict) as sock:
        sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"a" * 100_000 + b"\r\n\r\n")
        response = read_to_end(sock)
    assert response.startswith(b"HTTP/1.1 431 ")
    body = b'{"query": "' + b"x" * 300 + b'", "pad": "' + b"p" * 60_000 + b'"}'
    with connect(uvicorn_strict) as sock:
        sock.sendall(b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        response = read_to_end(sock)
    assert response.startswith(b"HTTP/1.1 200 ")


def test_bytes_that_are_no_http_request_get_a_400_envelope(uvicorn_strict: str) -> None:
    with connect(uvicorn_strict) as sock:
        sock.sendall(b"\x16\x03\x01 this is not HTTP\r\n\r\n")
        response = read_to_end(sock)
    assert response.startswith(b"HTTP/1.1 400 ")
    assert envelope(response)["code"] == "bad_request"


def test_the_open_file_limit_is_raised_for_the_connection_cap() -> None:
    """A soft limit of 256 open files would meet a flood before the cap of 1000 connections does."""
    code = ("import resource\n"
            "from runtime.http.connections import ensure_open_files\n"
            "from runtime.settings import Settings\n"
            "hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
            "ensure_open_files(Settings(max_connections=1000))\n"
            "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert int(result.stdout) == (1100 if hard == resource.RLIM_INFINITY else min(1100, hard))

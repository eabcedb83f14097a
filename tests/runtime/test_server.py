"""Against a real uvicorn server on a free loopback port, with a real HTTP client."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from petgen.build.pipeline import build
from petgen.cli.main import uvicorn_options
from runtime.app import create_app
from runtime.settings import Settings
from tests.conftest import REPO, write_site


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(dist: Path, port: int | None = None, lifespan: str = "on", **settings: object) -> Iterator[str]:
    """A real uvicorn server for `dist` on a free loopback port, in a thread; yields its base URL."""
    port = port or free_port()
    config = Settings(dist=dist, **{"rate_limit": 1000, **settings})  # type: ignore[arg-type]
    app = create_app(config)
    options = {**uvicorn_options("127.0.0.1", port, config), "log_level": "warning"}
    server = uvicorn.Server(uvicorn.Config(app, lifespan=lifespan, **options))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("server")
    port = free_port()
    build(write_site(root / "content"), root / "dist", base_url=f"http://127.0.0.1:{port}")
    with running_server(root / "dist", port) as base:
        yield base


def test_real_server_serves_follows_and_caches(server: str) -> None:
    with httpx.Client(base_url=server) as client:
        page = client.get("/api/names", params={"limit": 4})
        assert page.status_code == 200
        assert page.headers["x-ratelimit-limit"] == "1000"
        next_url = page.json()["nextUrl"]
        assert next_url == f"{server}/api/names?limit=4&offset=4"
        rest = client.get(next_url).json()  # the absolute URL works against this server
        assert [i["slug"] for i in rest["items"]] == ["schnucki", "zuckerstueck"]

        name = client.get("/api/names/Ölprinz", follow_redirects=True)
        assert name.status_code == 200 and name.json()["url"] == f"{server}/names/oelprinz/"
        assert client.get(name.json()["url"]).status_code == 200  # the human page at `url`

        etag = name.headers["etag"]
        assert client.get("/api/names/oelprinz", headers={"If-None-Match": etag}).status_code == 304
        head = client.head("/api/names/oelprinz")
        assert head.status_code == 200 and head.content == b""
        assert client.get("/api/names/nope").json()["error"]["code"] == "not_found"


def test_forwarded_for_does_not_reset_the_budget(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Behind no trusted proxy, X-Forwarded-For must not choose the rate-limit key (as served by `petgen serve`)."""
    root = tmp_path_factory.mktemp("xff")
    build(write_site(root / "content"), root / "dist", base_url="http://127.0.0.1")
    with running_server(root / "dist", rate_limit=2) as base, httpx.Client(base_url=base) as client:
        assert [client.get("/api/status").status_code for _ in range(2)] == [200, 200]
        spoofed = client.get("/api/status", headers={"X-Forwarded-For": "1.2.3.4"})
        assert spoofed.status_code == 429


def test_chunked_body_over_the_limit_is_413(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("chunked")
    build(write_site(root / "content"), root / "dist", base_url="http://127.0.0.1")

    def chunks() -> Iterator[bytes]:
        for _ in range(70):
            yield b"x" * 1024

    with running_server(root / "dist", max_body=64 * 1024) as base:
        for path in ("/ask", "/mcp"):
            response = httpx.post(base + path, content=chunks(), headers={"content-type": "application/json"})
            assert response.status_code == 413, (path, response.text)
            error = response.json()["error"]
            assert (error["data"]["code"] if path == "/mcp" else error["code"]) == "payload_too_large"  # MCP: JSON-RPC


@pytest.mark.parametrize("lifespan", ["on", "off"])
def test_a_server_without_the_lifespan_is_named_in_the_log(lifespan: str, dist: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """Without lifespan events (uvicorn --lifespan off) nothing watches for new builds, delivers webhooks or
    runs /mcp's session manager: the runtime still answers, and says so once in its log."""
    with caplog.at_level(logging.WARNING, logger="petgen.runtime"), running_server(dist, lifespan=lifespan) as base:
        for _ in range(2):
            assert httpx.get(f"{base}/api/names", timeout=10).status_code == 200
    warned = [r for r in caplog.records if "sent no lifespan events" in r.getMessage()]
    assert len(warned) == (1 if lifespan == "off" else 0), [r.getMessage() for r in caplog.records]


def test_the_bare_factory_names_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    """`uvicorn --factory runtime.app:create_app` with an invalid PETGEN_* value printed a 46-line traceback."""
    env = {**os.environ, "PETGEN_DIST": str(tmp_path / "dist"), "PETGEN_RATE_LIMIT": "abc"}
    done = subprocess.run([sys.executable, "-m", "uvicorn", "--factory", "runtime.app:create_app", "--port",
                           str(free_port())], env=env, cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "PETGEN_RATE_LIMIT must be a whole number, not 'abc'" in done.stderr.strip().splitlines()[-1]

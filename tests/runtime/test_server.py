"""Against a real uvicorn server on a free loopback port, with a real HTTP client."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from petgen.build import build
from runtime.app import create_app
from runtime.settings import Settings
from tests.conftest import write_site


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(dist: Path, port: int | None = None, **settings: object) -> Iterator[str]:
    """A real uvicorn server for `dist` on a free loopback port, in a thread; yields its base URL."""
    port = port or free_port()
    app = create_app(Settings(dist=dist, **{"rate_limit": 1000, **settings}))  # type: ignore[arg-type]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
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

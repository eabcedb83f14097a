"""The self-hosted profile (docs/deploy.md): nginx with deploy/nginx.conf in front of two runtime replicas that
share one redis-server, all real processes on loopback (tests/selfhosted.py starts and stops them).

A client's own address is one of 127.0.0.2 … 127.0.0.9 (all loopback on Linux), so nginx sees a peer that is
not the trusted proxy 127.0.0.1 and the tests can tell clients apart.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from petgen.build.pipeline import build
from tests.conftest import write_site
from tests.selfhosted import Stack, self_hosted

pytestmark = pytest.mark.slow

PUBLIC = "https://kosenamen.example"  # the base URL the dist is built for: the Host a public client sends
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
               "host": "kosenamen.example"}


def client(stack: Stack, address: str, **kwargs: Any) -> httpx.Client:
    """A client whose connections come from `address`."""
    return httpx.Client(base_url=stack.url, transport=httpx.HTTPTransport(local_address=address), timeout=10,
                        **kwargs)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("selfhosted-dist")
    build(write_site(root / "content"), root / "dist", base_url=PUBLIC)
    return root / "dist"


@pytest.fixture(scope="module")
def stack(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with self_hosted(dist, tmp_path_factory.mktemp("selfhosted")) as running:
        yield running


def served_by(stack: Stack, path: str) -> list[str]:
    """The replica (or replicas, after a failover) that served each logged request for `path`."""
    return [upstream for request, upstream in stack.nginx.requests() if request.split(" ")[1] == path]


def test_the_per_ip_budget_holds_across_both_replicas(stack: Stack) -> None:
    with client(stack, "127.0.0.2") as alice, client(stack, "127.0.0.3") as bob:
        remaining = []
        for _ in range(60):
            response = alice.get("/api/names/schnucki")
            assert response.status_code == 200
            remaining.append(int(response.headers["x-ratelimit-remaining"]))
        assert remaining == list(range(59, -1, -1))  # one count in Redis, whichever replica answered
        over = alice.get("/api/names/schnucki")
        assert over.status_code == 429 and over.json()["error"]["code"] == "rate_limited"
        assert over.json()["error"]["docs"].startswith(PUBLIC)
        # another client keeps its own budget: the key is the client's address, not nginx's
        assert bob.get("/api/names/schnucki").status_code == 200
        # and a client cannot borrow one: nginx appends the real peer to whatever X-Forwarded-For it sent
        spoofed = bob.get("/api/names/schnucki", headers={"x-forwarded-for": "127.0.0.2"})
        assert spoofed.status_code == 200 and spoofed.headers["x-ratelimit-remaining"] == "58"
    assert {r.port for r in stack.replicas} == {int(u.rsplit(":", 1)[1]) for u in served_by(stack, "/api/names/schnucki")}


def test_mcp_works_through_the_proxy_and_across_replicas(stack: Stack) -> None:
    def rpc(mcp: httpx.Client, message: dict[str, Any]) -> dict[str, Any]:
        response = mcp.post("/mcp", content=orjson.dumps({"jsonrpc": "2.0", "id": 1, **message}), headers=MCP_HEADERS)
        assert response.status_code == 200, response.text
        return response.json()

    with client(stack, "127.0.0.4") as mcp:
        initialized = rpc(mcp, {"method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
        assert initialized["result"]["serverInfo"]["name"]
        for _ in range(4):
            called = rpc(mcp, {"method": "tools/call", "params": {"name": "get_name", "arguments": {"slug": "apfel"}}})
            assert called["result"]["structuredContent"]["url"] == f"{PUBLIC}/names/apfel/"
        # the Host check still holds behind nginx: a page that rebinds its own name to this server is refused
        rebound = mcp.post("/mcp", content=b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}',
                           headers={**MCP_HEADERS, "host": "evil.example"})
        assert rebound.status_code == 421 and rebound.json()["error"]["data"]["code"] == "misdirected_request"
    replicas = served_by(stack, "/mcp")[:5]
    assert len(set(replicas)) == 2  # initialize on one replica, tools/call on both: nothing to share


def test_one_request_id_from_nginx_to_the_runtime_and_back(stack: Stack) -> None:
    """nginx names each request ($request_id) in its log and tells the runtime, which echoes it; a client's
    own id does not get through."""
    with client(stack, "127.0.0.7") as c:
        response = c.get("/api/names/apfel", headers={"x-request-id": "chosen-by-client"})
    request_id = response.headers["x-request-id"]
    assert response.status_code == 200 and len(request_id) == 32 and int(request_id, 16) >= 0
    deadline = time.monotonic() + 5
    while f"id={request_id}" not in stack.nginx.access_log.read_text():
        assert time.monotonic() < deadline, "nginx did not log the id"
        time.sleep(0.05)


def test_server_sent_events_pass_through(stack: Stack) -> None:
    with client(stack, "127.0.0.5") as asker, asker.stream(
            "POST", "/ask", json={"query": "Apfel"}, headers={"prefer": "streaming=true"}) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        events = [block.split("\n", 1)[0] for block in stream.read().decode().strip().split("\n\n")]
    assert events[0] == "event: start" and events[-1] == "event: complete"


@pytest.fixture
def held_stream() -> Iterator[tuple[int, threading.Event]]:
    """An upstream that answers /ask with one SSE event, then holds the stream open until released: a stand-in
    for a runtime that is still working, to see whether nginx passes on what it has got."""
    release = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with listener:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += connection.recv(65536)
                head, _, body = request.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += connection.recv(65536)

                def chunk(data: bytes) -> bytes:
                    return b"%x\r\n%s\r\n" % (len(data), data)

                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                   b"transfer-encoding: chunked\r\n\r\n" + chunk(b"event: start\ndata: {}\n\n"))
                release.wait(timeout=60)
                connection.sendall(chunk(b"event: complete\ndata: {}\n\n") + b"0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], release
    finally:
        release.set()
        listener.close()
        thread.join(timeout=10)


def test_an_event_reaches_the_client_before_the_stream_ends(
        dist: Path, tmp_path: Path, held_stream: tuple[int, threading.Event]) -> None:
    """The stand-in sends no X-Accel-Buffering header, so this is the config on its own. Held back, the first
    event would wait for the rest, which waits for this test: the read times out and the test fails. (nginx 1.22
    passes this small event on even with buffering on, as tried; `proxy_buffering off` makes it a rule.)"""
    port, release = held_stream
    with self_hosted(dist, tmp_path, replicas=[port]) as running, client(running, "127.0.0.6") as asker, \
            asker.stream("POST", "/ask", json={"query": "Apfel"}, headers={"prefer": "streaming=true"}) as stream:
        lines = stream.iter_lines()
        first = next(lines)
        assert first == "event: start" and not release.is_set()  # the stream is still open upstream
        release.set()
        assert "event: complete" in list(lines)


def poll(stack: Stack, address: str, until: threading.Event, statuses: list[int], path: str = "/api/names/apfel",
         on_response: Callable[[], None] | None = None) -> None:
    with client(stack, address) as poller:
        while not until.is_set():
            statuses.append(poller.get(path).status_code)
            if on_response is not None:
                on_response()


def test_a_killed_replica_loses_no_get(dist: Path, tmp_path: Path) -> None:
    """SIGKILL one replica under load from four clients: nginx sends every GET that fails on it, in flight or
    new, to the other one; the access log shows the retries."""
    with self_hosted(dist, tmp_path, PETGEN_RATE_LIMIT="0") as running:
        done, statuses = threading.Event(), [[], [], [], []]  # type: ignore[var-annotated]
        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(poll, running, f"127.0.0.{7 + i % 2}", done, statuses[i]) for i in range(4)]
            wait_for(lambda: sum(map(len, statuses)) >= 100, futures)
            running.replicas[0].stop(signal.SIGKILL)
            after_kill = sum(map(len, statuses))
            wait_for(lambda: sum(map(len, statuses)) >= after_kill + 200, futures)
            done.set()
        for future in futures:
            future.result()
        assert all(status == 200 for each in statuses for status in each)
        dead = running.replicas[0].url.removeprefix("http://")
        assert any(upstream.startswith(dead + ", ") for upstream in served_by(running, "/api/names/apfel"))


def test_a_rolling_restart_drops_nothing(dist: Path, tmp_path: Path) -> None:
    """Stop replica A (SIGTERM), start it again, then B, while a client polls: every GET is answered, and
    polls ran while each replica was down."""
    with self_hosted(dist, tmp_path, PETGEN_RATE_LIMIT="0") as running:
        done, statuses = threading.Event(), []  # type: list[int]
        phase = {"name": "up"}
        during: dict[str, int] = {}

        def count() -> None:
            during[phase["name"]] = during.get(phase["name"], 0) + 1

        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(poll, running, "127.0.0.9", done, statuses, on_response=count)
            for replica in running.replicas:
                phase["name"] = f"{replica.name} down"
                replica.stop()
                wait_for(lambda r=replica: during.get(f"{r.name} down", 0) >= 50, [future])
                replica.start()
                phase["name"] = f"{replica.name} back"
                wait_for(lambda r=replica: during.get(f"{r.name} back", 0) >= 50, [future])
            done.set()
            future.result()
        assert statuses and all(status == 200 for status in statuses)
        assert {"a down", "a back", "b down", "b back"} <= set(during)


def wait_for(condition: Callable[[], bool], futures: list[Future[None]]) -> None:
    """Until `condition()` holds; a poller that failed raises here instead of leaving the test waiting."""
    deadline = time.monotonic() + 60
    while not condition():
        for future in futures:
            if future.done():
                future.result()
                raise AssertionError("a poller stopped early")
        assert time.monotonic() < deadline, "the pollers made no progress"
        time.sleep(0.01)

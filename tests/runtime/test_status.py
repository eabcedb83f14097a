"""`GET /api/status`: ok, degraded (a check fails, each named in `checks`), down (no dist: 503, same body)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from petgen.contract.schemas import schema_for
from runtime.app import Runtime
from tests.conftest import BASE_URL, entry_text

STATUS = Draft202012Validator(schema_for("Status"))


def _status(client: TestClient) -> tuple[int, dict[str, object]]:
    response = client.get("/api/status")
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert list(STATUS.iter_errors(body)) == [], body
    return response.status_code, body


def test_ok_has_the_contract_fields(client: TestClient) -> None:
    code, body = _status(client)
    assert code == 200 and body["status"] == "ok"
    assert isinstance(body["names"], int) and isinstance(body["categories"], int)
    assert body["version"] == "1.0.0" and body["timestamp"].endswith("Z")
    assert body["license"] == "CC BY 4.0"
    assert body["facets"]["gender"] == {"sie": 1, "ihn": 1, "alle": 4}  # the facets counted, live as in the build


def test_degraded_while_the_content_is_newer_than_the_build(content: Path, dist: Path,
                                                            make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist, rate_limit=0, content=content)
    assert _status(client)[1]["checks"] == {"content": {"status": "ok"}}
    edited = content / "names" / "apfel.md"
    edited.write_text(entry_text("Apfel", "natur", "kuschelig").replace("Zuneigung", "Liebe"), encoding="utf-8")
    earlier = time.time() - 60  # the build is older than the edit
    os.utime(dist / "_manifest.json", (earlier, earlier))
    client.app.runtime.health.forget_probes()  # probes run at most every 10 s; do not wait in a test
    code, body = _status(client)
    assert code == 200 and body["status"] == "degraded"
    assert body["checks"]["content"]["status"] == "fail" and "newer than the served build" in \
        body["checks"]["content"]["detail"]
    build(content, dist, base_url=BASE_URL)  # the fix: a new build, loaded
    assert client.app.runtime.reload()
    assert _status(client)[1]["status"] == "ok"


def test_degraded_when_a_reload_fails_and_the_previous_build_keeps_serving(
        dist: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(dist, rate_limit=0)
    manifest = (dist / "_manifest.json").read_bytes()
    (dist / "_manifest.json").write_text("{broken", encoding="utf-8")
    assert client.app.runtime.reload() is False
    code, body = _status(client)
    assert code == 200 and body["status"] == "degraded" and "reloading failed" in body["checks"]["dist"]["detail"]
    assert client.get("/api/names/apfel").status_code == 200  # still serving
    (dist / "_manifest.json").write_bytes(manifest)
    assert client.app.runtime.reload() and _status(client)[1]["status"] == "ok"


def test_down_without_a_dist_and_up_once_one_appears(dist: Path, tmp_path: Path,
                                                    make_client: Callable[..., TestClient]) -> None:
    later = tmp_path / "later"
    with make_client(later, rate_limit=0) as client:  # nothing built there yet
        code, body = _status(client)
        assert code == 503 and body["status"] == "down" and body["names"] == 0
        assert body["checks"]["dist"]["status"] == "fail"
        other = client.get("/api/names/apfel")
        assert other.status_code == 503 and other.json()["error"]["code"] == "service_unavailable"
        assert other.headers["retry-after"] == "5"
        assert client.post("/ask", json={"query": "Schatz"}).status_code == 503

        shutil.copytree(dist, later)
        client.app.runtime._next_attempt = 0.0  # retried at most every 5 s; do not wait in a test
        assert client.get("/api/names/apfel").status_code == 200
        code, body = _status(client)
        assert code == 200 and body["status"] == "ok" and body["names"] == 6
        # The MCP server started with the dist, inside the server's lifespan.
        mcp = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Accept": "application/json, text/event-stream"})
        assert mcp.status_code == 200 and mcp.json()["result"]["tools"]


def test_down_is_retried_at_most_every_few_seconds(tmp_path: Path) -> None:
    from runtime.settings import Settings

    runtime = Runtime(Settings(dist=tmp_path / "none"))
    assert runtime.up() is None and runtime._next_attempt > time.monotonic() + Runtime.RETRY_DOWN - 1


def test_a_build_that_changes_nothing_clears_degraded(content: Path, tmp_path: Path,
                                                       make_client: Callable[..., TestClient]) -> None:
    """A file touched but not changed (or an error fixed back to what was built) rebuilds with nothing to
    write: the manifest kept its old time, and /api/status stayed degraded for good."""
    dist, cache = tmp_path / "out" / "dist", tmp_path / "cache"
    build(content, dist, base_url=BASE_URL, cache_dir=cache)
    client = make_client(dist, rate_limit=0, content=content)
    later = (dist / "_manifest.json").stat().st_mtime + 0.5
    os.utime(content / "names" / "apfel.md", (later, later))  # newer than the build, the same bytes
    client.app.runtime.health.forget_probes()
    assert _status(client)[1]["status"] == "degraded"
    time.sleep(max(0.0, later - time.time()) + 0.05)
    result = build(content, dist, base_url=BASE_URL, cache_dir=cache)
    assert result.changed is not None  # incremental, with nothing to write
    client.app.runtime.reload()
    client.app.runtime.health.forget_probes()
    assert _status(client)[1]["status"] == "ok"

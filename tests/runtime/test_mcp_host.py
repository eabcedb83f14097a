"""/mcp behind a CDN: the proxy (Netlify's) sends the runtime origin's Host, which the Host check must allow
when the dist was built for that origin, and only then."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from tests.conftest import BASE_URL

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
ORIGIN_HOST = "runtime.kosenamen.example:8443"


@pytest.mark.parametrize(("runtime_origin", "host", "status"), [
    (f"https://{ORIGIN_HOST}", ORIGIN_HOST, 200),  # proxied by the CDN
    (f"https://{ORIGIN_HOST}", "testserver", 200),  # the public host, as before
    (f"https://{ORIGIN_HOST}", "evil.example", 421),  # DNS rebinding is still refused
    (None, ORIGIN_HOST, 421),  # a dist built for no runtime origin knows no such host
])
def test_the_runtime_origin_is_an_allowed_host(content: Path, tmp_path: Path, make_client: Callable[..., TestClient],
                                               runtime_origin: str | None, host: str, status: int) -> None:
    build(content, tmp_path / "dist", base_url=BASE_URL, runtime_origin=runtime_origin)
    with make_client(tmp_path / "dist", rate_limit=0) as client:
        response = client.post("/mcp", json=INITIALIZE, headers={**HEADERS, "host": host})
    assert response.status_code == status, response.text
    if status == 200:
        assert response.json()["result"]["serverInfo"]["name"]
    else:
        assert response.json()["error"]["data"]["code"] == "misdirected_request"

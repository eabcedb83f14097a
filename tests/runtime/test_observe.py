"""Request ids, the access log and the log formats, against a real server and its real log output."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import httpx
import orjson
import pytest

from runtime.http.logs import FORMAT, JsonFormatter, OneLineFormatter
from runtime.http.observe import VALID_ID, shown_target
from runtime.settings import Settings, parse_networks
from tests.runtime.test_server import running_server

GENERATED = re.compile(r"[0-9a-f]{12}-[0-9a-f]+")


def test_a_request_id_is_made_for_every_response_and_differs(dist: Path) -> None:
    with running_server(dist) as base, httpx.Client(base_url=base) as client:
        responses = [client.get(path) for path in ("/api/names/apfel", "/api/names?limit=1", "/api/nope",
                                                   "/names/apfel/")]
        responses.append(client.post("/ask", json={"query": "Apfel"}))
    ids = [r.headers["x-request-id"] for r in responses]
    assert [r.status_code for r in responses] == [200, 200, 404, 200, 200]
    assert all(GENERATED.fullmatch(i) for i in ids) and len(set(ids)) == len(ids)
    assert "X-Request-Id" in responses[0].headers["access-control-expose-headers"]


def test_a_clients_own_request_id_is_not_believed(dist: Path) -> None:
    """Only a trusted proxy may name the id (else any client could write ids into the operator's logs)."""
    with running_server(dist) as base:
        echoed = httpx.get(f"{base}/api/names/apfel", headers={"x-request-id": "chosen-by-client"})
    assert echoed.headers["x-request-id"] != "chosen-by-client"
    assert GENERATED.fullmatch(echoed.headers["x-request-id"])


def test_a_trusted_proxys_request_id_is_kept_if_it_is_a_safe_token(dist: Path) -> None:
    with running_server(dist, trusted_proxies=parse_networks("127.0.0.1/32"), rate_limit=4) as base:
        kept = httpx.get(f"{base}/api/names/apfel", headers={"x-request-id": "7f3a9c:edge/42"})
        too_long = httpx.get(f"{base}/api/names/apfel", headers={"x-request-id": "a" * 129})
        spaced = httpx.get(f"{base}/api/names/apfel", headers={"x-request-id": "a b"})
        with httpx.Client() as client:  # a 429 carries the id too
            limited = [client.get(f"{base}/api/names/apfel", headers={"x-request-id": f"r{i}"}) for i in range(3)]
    assert kept.headers["x-request-id"] == "7f3a9c:edge/42"
    assert GENERATED.fullmatch(too_long.headers["x-request-id"])
    assert GENERATED.fullmatch(spaced.headers["x-request-id"])
    assert [(r.status_code, r.headers["x-request-id"]) for r in limited] == [(200, "r0"), (429, "r1"), (429, "r2")]


def test_every_request_gets_one_access_line_with_its_fields(dist: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="petgen.access")
    with running_server(dist) as base, httpx.Client(base_url=base) as client:
        ok = client.get("/api/names?category=klassiker&limit=2")
        missing = client.get("/api/names/gibtsnicht")
        asked = client.post("/ask", json={"query": "Apfel"})
    lines = [r for r in caplog.records if r.name == "petgen.access"]
    assert [(r.access["method"], r.access["path"], r.access["status"]) for r in lines] == [  # type: ignore[attr-defined]
        ("GET", "/api/names?category=klassiker&limit=2", 200), ("GET", "/api/names/gibtsnicht", 404),
        ("POST", "/ask", 200)]
    for record, response in zip(lines, (ok, missing, asked)):
        fields = record.access  # type: ignore[attr-defined]
        assert fields["request_id"] == response.headers["x-request-id"]
        assert fields["rate_key"] == "127.0.0.1" and fields["duration_ms"] > 0
        assert record.getMessage().startswith(f"{fields['method']} {fields['path']} {fields['status']} ")
        assert record.getMessage().endswith(f" key=127.0.0.1 id={fields['request_id']}")


def test_no_access_log_when_turned_off(dist: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="petgen.access")
    with running_server(dist, access_log=False) as base:
        assert httpx.get(f"{base}/api/names/apfel").status_code == 200
    assert not [r for r in caplog.records if r.name == "petgen.access"]


def test_a_logged_target_is_one_line_and_bounded() -> None:
    """A client controls the path: what reaches the log cannot break a line or forge another one."""
    scope = {"path": "/x", "raw_path": b"/a\nFAKE 200\r\x1b[31m\xff", "query_string": b"q=" + b"z" * 5000}
    shown = shown_target(scope)
    assert "\n" not in shown and "\r" not in shown and "\x1b" not in shown
    assert shown.startswith("/a\\x0aFAKE\\x20200\\x0d\\x1b[31m\\xff?q=zz") and len(shown) <= 1024 * 4


def test_the_json_format_is_one_object_per_line_with_the_access_fields() -> None:
    record = logging.LogRecord("petgen.access", logging.INFO, __file__, 1, "GET %s", ("/x\n",), None)
    record.access = {"method": "GET", "path": "/x", "status": 200}
    line = JsonFormatter().format(record)
    assert "\n" not in line
    parsed = orjson.loads(line)
    assert parsed["level"] == "INFO" and parsed["logger"] == "petgen.access" and parsed["message"] == "GET /x\n"
    assert parsed["access"]["status"] == 200 and parsed["time"].endswith("+00:00")
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failed = logging.LogRecord("petgen.runtime", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    assert "ValueError: boom" in orjson.loads(JsonFormatter().format(failed))["error"]
    assert "\n" not in OneLineFormatter(FORMAT).format(failed)


def test_request_ids_are_safe_tokens() -> None:
    assert VALID_ID.fullmatch(b"0af7651916cd43dd8448eb211c80319c")
    assert not VALID_ID.fullmatch(b"a\x00b") and not VALID_ID.fullmatch(b"")


def test_settings_survive_the_trip_to_a_worker_process() -> None:
    """`petgen serve --workers N` hands its settings down as environment variables: every field must come back."""
    settings = Settings(dist=Path("d"), content=Path("c"), state_dir=Path("s"), rate_limit=7,
                        trusted_proxies=parse_networks("10.0.0.0/8, ::1"), max_body=1234,
                        allowed_origins=("https://app.example",), allowed_hosts=("api.example:8443",),
                        redis_url="redis://127.0.0.1:1/0", header_timeout=1.5, body_timeout=2.5,
                        keepalive_timeout=3.5, max_connections=9, log_level="debug", log_format="json",
                        access_log=False, metrics_port=9464, graceful_timeout=4.5, redis_timeout=0.02, dist_poll=0.5,
                        webhook_retry_scale=0.001, webhook_allow_loopback=True,
                        netlify_signing_secret="s" * 40)
    assert Settings.from_env(settings.to_env()) == settings
    assert Settings.from_env(Settings().to_env()) == Settings()

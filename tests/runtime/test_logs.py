"""Logging: aborted uploads are no errors, the root logger is ours, one plain line per event."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from petgen.build.pipeline import build
from tests.conftest import REPO, write_site
from tests.runtime.test_server import running_server
from tests.serving import petgen_serve


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    build(write_site(root / "content"), root / "dist", base_url="http://127.0.0.1")
    return root / "dist"


def abort_upload(base: str, path: str) -> None:
    """Send the headers of a 10,000-byte JSON body and 500 bytes of it, then hang up."""
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port)) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
                     f"Accept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n".encode()
                     + b'{"query": "' + b"x" * 489)


def wait_for_record(caplog: pytest.LogCaptureFixture, text: str, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not any(text in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.parametrize("path", ["/ask", "/mcp"])
def test_an_aborted_upload_logs_one_info_line_and_no_error(site: Path, path: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with running_server(site) as base:
        abort_upload(base, path)
        wait_for_record(caplog, f"POST {path}")
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    mine = [r for r in caplog.records if r.name == "petgen.runtime" and not r.getMessage().startswith("loaded ")]
    assert len(mine) == 1 and mine[0].levelname == "INFO"
    assert mine[0].getMessage().startswith(f"client left during the upload: POST {path} after ")


def python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, check=False)


def test_importing_and_creating_the_app_leave_the_root_logger_alone(site: Path) -> None:
    """The MCP SDK puts rich's handler on a bare root logger when its server is created."""
    result = python(
        "import logging; root = logging.getLogger(); import runtime.app\n"
        "imported = [type(h).__name__ for h in root.handlers]\n"
        "from runtime.settings import Settings\n"
        f"from pathlib import Path; runtime.app.create_app(Settings(dist=Path({str(site)!r})))\n"
        "print(imported, [type(h).__name__ for h in root.handlers], logging.getLevelName(root.level))")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]", "[]", "WARNING"]


def test_the_bare_factory_logs_one_plain_line_per_event(site: Path) -> None:
    """`create_app()` under an ASGI server that configured nothing: plain lines, a traceback folded into its line."""
    result = python(
        "import logging, runtime.app; runtime.app.create_app()\n"
        "print([type(h).__name__ for h in logging.getLogger().handlers])\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n    logging.getLogger('petgen.runtime').exception('boom')\n",
        env={"PETGEN_DIST": str(site)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['StreamHandler']"
    loaded, line = result.stderr.splitlines()
    assert " INFO petgen.runtime: loaded " in loaded
    assert " ERROR petgen.runtime: boom | Traceback (most recent call last): | " in line
    assert line.endswith("ZeroDivisionError: division by zero")


@pytest.fixture
def served(site: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`petgen serve` in a subprocess, its stderr in a file."""
    with petgen_serve(site, tmp_path) as (base, _, log):
        yield base, log


def test_petgen_serve_logs_an_aborted_upload_as_one_plain_info_line(served: tuple[str, Path]) -> None:
    base, log = served
    abort_upload(base, "/ask")
    deadline = time.monotonic() + 10
    while "POST /ask" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [line for line in log.read_text().splitlines() if "POST /ask" in line and "petgen.access" not in line]
    assert len(lines) == 1 and " INFO petgen.runtime: client left during the upload: POST /ask " in lines[0]
    assert "ERROR" not in log.read_text() and "Traceback" not in log.read_text()


def test_petgen_serve_does_not_log_every_mcp_request(served: tuple[str, Path]) -> None:
    """The SDK logged each /mcp request at INFO ("Terminating session: None") and each tool error with the
    client's arguments in it: one line per request, which the runtime does not write for any other endpoint."""
    base, log = served
    call = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_name", ' \
           b'"arguments": {"slug": "no-such-slug"}}}'
    answer = httpx.post(base + "/mcp", content=call, headers={"content-type": "application/json"})
    assert answer.json()["result"]["isError"] is True
    abort_upload(base, "/ask")  # a line that is logged, after the call's
    deadline = time.monotonic() + 10
    while "POST /ask" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    text = log.read_text()
    assert "POST /ask" in text and "no-such-slug" not in text and "Terminating session" not in text

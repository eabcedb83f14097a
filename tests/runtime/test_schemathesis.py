"""schemathesis against the running runtime and our own OpenAPI document, every check, valid and
invalid inputs: zero failures, and nothing logged at error level.

Driven through schemathesis' own command line (not its pytest plugin, which newer pytest releases
break), with a bounded number of examples per operation and a fixed seed, so a CI run is
reproducible. A failure is a bug in the code or the document, never a check to loosen.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from petgen.build.pipeline import build
from tests.conftest import REPO
from tests.runtime.test_server import free_port, running_server
from tests.runtime.webhooks.support import issue_token

SEED = "20261122"
EXAMPLES = "40"


def schemathesis_command() -> list[str]:
    beside = Path(sys.executable).parent / "schemathesis"
    found = str(beside) if beside.exists() else shutil.which("schemathesis")
    if found is None:
        pytest.fail("the schemathesis command is not installed (pip install -e '.[test]')")
    return [found]


def test_api_conforms_to_its_document(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    build(REPO / "content", tmp_path / "dist", base_url=f"http://127.0.0.1:{port}")
    token = issue_token(tmp_path / "state")  # /webhooks needs one; schemathesis also checks it is enforced
    # The limiter on (a budget the run cannot exhaust): its headers and the bot signature headers are checked too.
    with running_server(tmp_path / "dist", port, rate_limit=1_000_000, state_dir=tmp_path / "state") as base:
        result = subprocess.run(
            [*schemathesis_command(), "run", f"{base}/openapi.json", "--checks", "all", "--mode", "all",
             "--max-examples", EXAMPLES, "--seed", SEED, "--header", f"Authorization: Bearer {token}",
             "--workers", "1", "--no-color"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False,
        )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "No issues found" in result.stdout
    assert "Tested: 13" in result.stdout  # all thirteen operations ran: the contract's eight and /webhooks


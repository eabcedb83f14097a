"""The README keeps its promises to a newcomer: the title, then the two commands, CI runs the second."""

from __future__ import annotations

import re

from tests.conftest import REPO


def _commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Kosenamen API\n\n```sh\n"), "the commands come first, under the title"
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()


def test_the_two_commands_use_a_virtual_environment() -> None:
    serve, test = _commands()
    for command in (serve, test):
        assert "python3 -m venv .venv && .venv/bin/pip install" in command  # stock Debian refuses pip outside a venv
        assert " pip install" not in command.replace(".venv/bin/pip install", "")
    assert serve.startswith("python3 -m venv .venv && ")
    for service in ("redis-server", "nginx-light", "chromium", "npm ci --prefix deploy"):  # what the tests start for real
        assert service in test
    assert serve.endswith("petgen serve") and test.endswith("-m pytest")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert _commands()[1] in ci.splitlines()


def test_the_readme_names_the_port_and_never_points_outside_the_repository() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_paragraph = readme.split("```", 2)[2].strip().split("\n\n")[0]
    assert "127.0.0.1:8000" in first_paragraph
    assert not re.search(r"\.\./shared", readme)


def test_docs_list_every_error_code() -> None:
    from petgen.contract.errors import ERROR_CODES

    api = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    for error in ERROR_CODES:
        assert f"| {error.status} | `{error.code}` |" in api, error.code

"""The folders show the design: which stage may import which (docs/architecture.md). Checked on the source,
function-level imports included, so a shortcut across the layers fails here rather than in a review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

# package -> the packages (or modules) it may import from this project; a name allows everything below it
ALLOWED: dict[str, tuple[str, ...]] = {
    "petgen.content": ("petgen.content", "petgen.search.index", "petgen.build.cache", "petgen.build.dist",
                       "petgen.build.files",
                       "petgen.build.forked"),  # the cache it parses through, the pool it parses in
    "petgen.contract": ("petgen.contract", "petgen.content"),
    "petgen.search": ("petgen.search", "petgen.content.text"),
    "petgen.emit": ("petgen.emit", "petgen.content", "petgen.contract", "petgen.search", "petgen.__init__",
                    "petgen.build.dist", "petgen.build.distpack", "petgen.build.cache", "petgen.build.files",
                    "petgen.build.incremental", "petgen.build.forked"),  # the writers, the pool they write in
    "petgen.build": ("petgen.build", "petgen.content", "petgen.contract", "petgen.search", "petgen.emit",
                     "petgen.__init__"),
    "petgen.cli": ("petgen", "runtime"),  # the commands start the runtime and the webhook tools
    "runtime": ("runtime", "petgen.content", "petgen.contract", "petgen.search", "petgen.build.dist",
                "petgen.build.distpack"),  # the dist's format: what the build writes for the runtime
}
MAX_LINES = 700  # small enough to read in one sitting


def modules() -> list[Path]:
    return sorted(p for top in ("petgen", "runtime") for p in (REPO / top).rglob("*.py"))


def dotted(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts)


def imported(path: Path) -> set[str]:
    """The project modules `path` imports, as dotted names (`from petgen import __version__` is petgen.__init__)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in ("petgen", "runtime"):
                found.update(f"{node.module}.{alias.name}" if alias.name != "__version__" else f"{node.module}.__init__"
                             for alias in node.names)
            else:
                found.add(node.module)
    return {name for name in found if name.split(".")[0] in ("petgen", "runtime")}


def rule_for(module: str) -> tuple[str, tuple[str, ...]] | None:
    for package in sorted(ALLOWED, key=len, reverse=True):
        if module == package or module.startswith(package + "."):
            return package, ALLOWED[package]
    return None


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_imports_only_what_its_stage_may(path: Path) -> None:
    module = dotted(path)
    rule = rule_for(module)
    if rule is None:  # petgen/__init__.py, petgen/__main__.py
        assert module in ("petgen.__init__", "petgen.__main__", "runtime.__init__"), f"{module} is in no stage"
        return
    package, allowed = rule
    wrong = sorted(name for name in imported(path)
                   if not any(name == a or name.startswith(a + ".") for a in allowed))
    assert wrong == [], f"{module} ({package}) imports {wrong}; it may import {allowed}"


def test_the_rules_catch_a_shortcut(tmp_path: Path) -> None:
    """The check itself: a build-side module that imports the runtime is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from runtime.mcp.server import build_mcp\n    from petgen import __version__\n")
    assert imported(bad) == {"runtime.mcp.server", "petgen.__init__"}
    _, allowed = rule_for("petgen.emit.discovery")  # type: ignore[misc]
    assert not any("runtime.mcp.server".startswith(a) for a in allowed)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_is_small_enough_to_read_in_one_sitting(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(REPO)} has {lines} lines; split it by what its parts do"

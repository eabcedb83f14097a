"""The benchmark scripts are not run by the tests (they measure, for minutes), but they must stay valid
Python: a syntax error in one is found here, not by the next person who runs `python bench/all.py`."""

from __future__ import annotations

import py_compile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize("script", sorted((REPO / "bench").glob("*.py")), ids=lambda p: p.name)
def test_every_benchmark_compiles(script: Path, tmp_path: Path) -> None:
    py_compile.compile(str(script), cfile=str(tmp_path / "out.pyc"), doraise=True)


def test_every_benchmark_that_writes_docs_has_its_block() -> None:
    """`--write-docs` replaces the block between a script's markers: each must be in docs/benchmarks.md once."""
    docs = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    all_py = (REPO / "bench" / "all.py").read_text(encoding="utf-8")
    scripts = [p.name for p in (REPO / "bench").glob("*.py") if "--write-docs" in p.read_text(encoding="utf-8")
               and p.name not in ("all.py", "docs.py")]
    assert scripts
    for name in scripts:
        assert docs.count(f"<!-- {name}: begin -->") == 1 and docs.count(f"<!-- {name}: end -->") == 1, name
        assert f'"{name}"' in all_py, f"bench/all.py does not run {name}"


def test_every_stage_the_build_breakdown_times_is_in_the_build() -> None:
    """bench/build_stages.py times a build by wrapping its functions by name: each must still be where it looks."""
    import sys

    sys.path.insert(0, str(REPO / "bench"))
    try:
        import build_stages
    finally:
        sys.path.remove(str(REPO / "bench"))
    targets = [target for _, found in build_stages.STAGES for target in found]
    assert len(targets) >= 15
    for target in targets:
        owner, attribute = build_stages.resolve(target)
        assert callable(getattr(owner, attribute)), target
    with pytest.raises(SystemExit, match="not found"):
        build_stages.resolve("petgen.content.kb:no_such_stage")

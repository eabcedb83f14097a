"""deploy/constraints.txt, the deployments' exact versions (deploy/lock.py writes it), cannot drift silently from
pyproject.toml: every runtime dependency is pinned within its range, and so is everything they need."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO

CONSTRAINTS = REPO / "deploy" / "constraints.txt"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")


def pins() -> dict[str, Version]:
    """Canonical name → pinned version; every line that is not a comment must be one exact `name==version`."""
    found: dict[str, Version] = {}
    for line in CONSTRAINTS.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"not an exact pin: {line!r}"
        name = canonicalize_name(match[1])
        assert name not in found, f"{name} is pinned twice"
        found[name] = Version(match[2])
    return found


def runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(spec) for spec in project["dependencies"]]


def test_every_runtime_dependency_is_pinned_within_its_range() -> None:
    pinned = pins()
    requirements = runtime_requirements()
    assert len(requirements) >= 15
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement} is not pinned in deploy/constraints.txt: run `python3 deploy/lock.py`"
        assert requirement.specifier.contains(pinned[name], prereleases=True), \
            f"{name}=={pinned[name]} is outside {requirement}: run `python3 deploy/lock.py`"


def needed() -> set[str]:
    """Canonical names of what the runtime dependencies need, transitively: walked from pyproject.toml through the
    installed distributions' metadata, with the extras asked for and the markers of this Linux and Python."""
    environment = default_environment()
    reached: set[str] = set()
    walked: set[tuple[str, frozenset[str]]] = set()
    todo = [(requirement, "") for requirement in runtime_requirements()]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({**environment, "extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        reached.add(name)
        if (name, frozenset(requirement.extras)) in walked:
            continue
        walked.add((name, frozenset(requirement.extras)))
        try:
            needs = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:  # not installed here: nothing to walk
            continue
        todo += [(Requirement(spec), extra) for spec in needs for extra in ("", *requirement.extras)]
    return reached


def test_everything_the_runtime_dependencies_need_is_pinned() -> None:
    reached = needed()
    assert len(reached) >= 30  # uvicorn[standard], mcp, jsonschema … bring in many
    assert reached - set(pins()) == set(), "not pinned: run `python3 deploy/lock.py`"


def test_nothing_is_pinned_that_no_runtime_dependency_needs() -> None:
    """A pin left over from an old resolution (a dependency since dropped) means the file was not regenerated."""
    assert set(pins()) - needed() == set(), "pinned but not needed: run `python3 deploy/lock.py`"


def test_the_file_was_made_for_the_deployments_python_and_is_used() -> None:
    netlify = tomllib.loads((REPO / "netlify.toml").read_text())["build"]
    header = CONSTRAINTS.read_text()
    assert f"(Python {netlify['environment']['PYTHON_VERSION']}, Linux)" in header
    assert netlify["command"].startswith("pip install -c deploy/constraints.txt . && ")
    assert "pip install -c deploy/constraints.txt" in (REPO / "docs" / "deploy.md").read_text()


@pytest.mark.parametrize("line", ["starlette>=1.0", "starlette==1.0 ; python_version<'3.12'", "starlette == 1.0",
                                  "-e .", "starlette @ https://example.org/s.whl"])
def test_a_line_that_is_not_an_exact_pin_is_refused(line: str) -> None:
    assert PIN.match(line) is None

"""YAML that would hurt the build (alias bombs, deep nesting, odd values) is a content error with path:line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from petgen.content.model import parse_yaml
from petgen.content.problems import Problems
from tests.conftest import REPO, entry_text

# "Billion laughs": under a kilobyte whose aliases expand to 9**9 (387 million) strings.
BOMB = "lol0: &a0 [" + ", ".join(['"lol"'] * 9) + "]\n" + "".join(
    f"lol{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
ANCHORS = "YAML anchors and aliases (&x, *x) are not allowed in content\n" \
          "    hint: write the value out in full; quote text that starts with & or *"
MEMORY = 1 << 30  # bytes: the old loader ran out of memory on BOMB; with this limit it fails, not the machine


def problems(text: str) -> list[str]:
    found = Problems()
    data, _ = parse_yaml(text, "x.yml", found)
    assert data is None if found.errors else True
    return [p.format() for p in found.items]


def limited_petgen(*args: str) -> list[str]:
    """The command line of `petgen ARGS` in a child process limited to MEMORY, so that a loader that
    expands the bomb fails the test instead of exhausting the machine."""
    limited = (f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY})); "
               "from petgen.cli.main import cli; cli(sys.argv[1:], prog_name='petgen')")
    return [sys.executable, "-c", limited, *args]


def petgen_check(content: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(limited_petgen("check", "--no-cache", "--content", str(content)),
                          capture_output=True, text=True, timeout=120, cwd=REPO, check=False)


def test_the_bomb_is_small() -> None:
    assert len(BOMB.encode()) < 1024


def test_an_alias_bomb_in_front_matter_is_one_error_with_its_line(content: Path) -> None:
    path = content / "names" / "hasi.md"
    path.write_text(entry_text("Hasi").replace("---\n", "---\n" + BOMB, 1), encoding="utf-8")
    result = petgen_check(content)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr == f"{path}:2: {ANCHORS}\nError: content has 1 error; nothing was written.\n"


def test_an_alias_bomb_in_site_yml_is_one_error_with_its_line(content: Path) -> None:
    site = content / "site.yml"
    lines = site.read_text(encoding="utf-8").count("\n")
    site.write_text(site.read_text(encoding="utf-8") + BOMB, encoding="utf-8")
    result = petgen_check(content)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"{site}:{lines + 1}: {ANCHORS}\n")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("text", "line"), [
    ("a: 1\nb: &x 2\n", 2),  # an anchor alone is refused as well: content never needs one
    ("a: 1\n\nb: *x\n", 3),  # an alias, defined or not
    ("a: [1, 2]\nb: {c: &y d}\n", 2),
])
def test_anchors_and_aliases_are_refused(text: str, line: int) -> None:
    assert problems(text) == [f"x.yml:{line}: {ANCHORS}"]


def test_ampersands_and_asterisks_in_text_are_fine() -> None:
    found = Problems()
    data, _ = parse_yaml("a: Hänsel & Gretel\nb: '*sehr* süß'\nc: \"&amp;\"\n", "x.yml", found)
    assert data == {"a": "Hänsel & Gretel", "b": "*sehr* süß", "c": "&amp;"} and found.items == []


@pytest.mark.parametrize("text", [
    "a: " + "[" * 900 + "]" * 900,  # within libyaml's limit, beyond Python's recursion limit
    "a: " + "{b: " * 300 + "c" + "}" * 300,
    "- " * 500 + "x\n",
])
def test_deep_nesting_is_an_error_not_a_recursion_error(text: str) -> None:
    assert problems(text) == [("x.yml:1: YAML nested more than 8 levels deep\n"
                               "    hint: content needs only a few levels, e.g. faq: a list of question/answer pairs")]


def test_values_their_tag_cannot_read_are_errors_with_their_line() -> None:
    hint = "\n    hint: quote it to make it text"
    assert problems("a: 1\nb: !!timestamp nope\n") == [f"x.yml:2: the value 'nope' cannot be read as !!timestamp{hint}"]
    assert problems("a: " + "7" * 5000) == [f"x.yml:1: the number '{'7' * 40}…' is too large{hint}"]
    assert problems("a: 0x" + "f" * 30) == [f"x.yml:1: the number '0x{'f' * 30}' is too large{hint}"]
    assert problems("a: 42\nb: true\nc: 1.5\nd: ~\n") == []

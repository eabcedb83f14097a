"""The CLI: help everywhere, exact `Error: …` output and exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from petgen.cli.main import cli
from tests.conftest import REPO, entry_text


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize("command", [[], ["build"], ["check"], ["serve"], ["dev"], ["new"], ["stats"]])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_everywhere(runner: CliRunner, command: list[str], flag: str) -> None:
    result = runner.invoke(cli, [*command, flag])
    assert result.exit_code == 0
    assert result.output.startswith("Usage: ")


def test_check_ok(runner: CliRunner, content: Path) -> None:
    result = runner.invoke(cli, ["check", "--strict", "--content", str(content)])
    assert result.exit_code == 0, result.output
    assert result.output == "OK: 6 names, 15 categories, 10 moods.\n"


def test_check_lists_problems_then_errors(runner: CliRunner, content: Path) -> None:
    (content / "names" / "hasi.md").write_text(entry_text("Hasi").replace("categories:", "catgories:"))
    result = runner.invoke(cli, ["check", "--content", str(content)])
    assert result.exit_code == 1
    assert result.output == (
        f"{content}/names/hasi.md:1: missing required field 'categories'\n"
        f"{content}/names/hasi.md:7: unknown key 'catgories'\n    hint: did you mean 'categories'?\n"
        "Error: content has 2 errors; nothing was written.\n")


def test_build_summary_and_missing_content(runner: CliRunner, content: Path, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["build", "--content", str(content), "--out", str(tmp_path / "d")])
    assert result.exit_code == 0
    assert result.output.startswith("Built 6 names, 15 categories, 10 moods → ")
    missing = runner.invoke(cli, ["build", "--content", str(tmp_path / "nope"), "--out", str(tmp_path / "d")])
    assert missing.exit_code == 1
    assert missing.output.endswith("Error: content has 1 error; nothing was written.\n")


def test_new_scaffolds_an_entry_to_fill_in(runner: CliRunner, content: Path) -> None:
    result = runner.invoke(cli, ["new", "Süße Maus", "--content", str(content)])
    assert result.exit_code == 0
    path = content / "names" / "suesse-maus.md"
    assert result.output == f"Created {path}\n"
    assert "title: Süße Maus\n" in path.read_text(encoding="utf-8")
    again = runner.invoke(cli, ["new", "Süße Maus", "--content", str(content)])
    assert again.exit_code == 1 and again.output == f"Error: {path} already exists.\n"
    empty = runner.invoke(cli, ["new", "!!!", "--content", str(content)])
    assert empty.output == "Error: '!!!' has no letters or digits to make a slug from.\n"
    long = runner.invoke(cli, ["new", "a" * 300, "--content", str(content)])  # was an OSError traceback
    assert long.exit_code == 1
    assert long.output == f"Error: cannot create {content / 'names' / ('a' * 56)}….md: File name too long.\n"


def test_a_scaffold_fails_check_and_build_until_filled_in(runner: CliRunner, content: Path, tmp_path: Path) -> None:
    """Placeholders are errors by default, not only with --strict: a half-written entry is never published."""
    path = content / "names" / "suesse-maus.md"
    assert runner.invoke(cli, ["new", "Süße Maus", "--content", str(content)]).exit_code == 0
    for _ in range(2):  # the second run takes the entry's problems from the build cache
        check = runner.invoke(cli, ["check", "--content", str(content)])
        assert check.exit_code == 1
        assert f"{path}:3: placeholder text 'TODO' in pronunciation\n    hint: replace the TODO text with the " \
               "entry's real content (petgen new writes placeholders to fill in)\n" in check.output
        assert f"{path}:22: placeholder text 'TODO' in faq\n" in check.output  # the answer's own line
        assert check.output.endswith("Error: content has 16 errors; nothing was written.\n")
    out = tmp_path / "site"
    build = runner.invoke(cli, ["build", "--content", str(content), "--out", str(out)])
    assert build.exit_code == 1 and f"{path}:5: placeholder text 'TODO' in meaning\n" in build.output
    assert not out.exists() and not list(tmp_path.glob(".site-*"))  # nothing written, not even a temp dir
    path.write_text(entry_text("Süße Maus"), encoding="utf-8")  # filled in
    assert runner.invoke(cli, ["check", "--content", str(content)]).exit_code == 0
    assert runner.invoke(cli, ["build", "--content", str(content), "--out", str(out)]).exit_code == 0
    assert (out / "names" / "suesse-maus" / "index.html").exists()


def test_serve_rejects_bad_options(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["serve", "--port", "70000"])
    assert result.exit_code == 2 and "70000 is not in the range" in result.output
    result = runner.invoke(cli, ["serve", "--content", str(tmp_path / "none"), "--dist", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path}/none is not built and there is no content directory "
                             f"{tmp_path}/none; pass --content DIR\n")


def test_serve_rejects_bad_limits(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["serve", "--header-timeout", "0"])
    assert result.exit_code == 2
    assert "Invalid value for '--header-timeout': 0.0 is not in the range x>0." in result.output
    result = runner.invoke(cli, ["dev", "--log-level", "loud"], env={"PETGEN_BODY_TIMEOUT": "1"})
    assert result.exit_code == 2 and "Invalid value for '--log-level': 'loud' is not one of" in result.output
    result = runner.invoke(cli, ["serve"], env={"PETGEN_MAX_CONNECTIONS": "-1"})
    assert result.exit_code == 2 and "-1 is not in the range x>=0" in result.output


def test_stats_table(runner: CliRunner, content: Path) -> None:
    result = runner.invoke(cli, ["stats", "--content", str(content), "--oldest", "2"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "6 entries, 15 categories, 10 moods"
    assert any(line.split()[:2] == ["tiere", "🐾"] and line.split()[-3:] == ["1", "below", "minimum"]
               for line in lines)
    assert any(line.split() == ["examples", "6/6", "4", "4", "4"] for line in lines)
    assert "2026-11-01           aeffchen" in lines and "2026-11-01           apfel" in lines
    assert any(line.split() == ["gender", "alle", "Für", "alle", "4"] for line in lines)  # facet counts
    assert any(line.split() == ["region", "berlin", "Berlin", "1"] for line in lines)
    assert any(line.split()[:2] == ["fuer-sie", "👩"] and line.split()[-3:] == ["1", "below", "minimum"]
               for line in lines)  # an alias category, counted by its facet (Apfel: gender sie)
    assert ["neutral", "🤝", "Für", "alle", "4", "below", "minimum"] in [line.split() for line in lines]
    # every fixture entry shares its template's sentences: their phrases top the list, counted per entry
    phrases = lines.index("most repeated phrases (X = the entry's name)  entries")
    assert lines[phrases + 2].split()[-1] == "6"
    assert lines[-1] == "(at most 12 entries per phrase; `petgen check --strict` enforces it)"


def test_stats_columns_count_display_width() -> None:
    from petgen.content.stats import table, width

    assert [width(t) for t in ("🐾", "🏔️", "ä", "a\u0301", "Für")] == [2, 2, 1, 1, 3]
    lines = table(["title", "n"], [["🏔️ Berge", 1], ["Süßes", 22]]).splitlines()
    assert [width(line) for line in lines] == [width(lines[0])] * 4


@pytest.mark.parametrize("command", ["build", "serve", "dev"])
def test_base_url_must_be_an_http_url(runner: CliRunner, content: Path, tmp_path: Path, command: str) -> None:
    """site.yml's base_url had to be http(s), but --base-url took anything: `javascript:alert(1)` became the
    start of every `url` and link of a build."""
    # (serve and dev also get a bad --rate-limit, checked after --base-url, so that they stop even if it passed)
    out = ["--out" if command == "build" else "--dist", str(tmp_path / "d")]
    rest = out if command == "build" else [*out, "--rate-limit", "-1"]
    result = runner.invoke(cli, [command, "--content", str(content), "--base-url", "javascript:alert(1)", *rest])
    assert result.exit_code == 2 and "Invalid value for '--base-url': 'javascript:alert(1)' is not an http(s) URL" \
        in result.output
    assert not (tmp_path / "d").exists()


def test_build_as_a_process_reports_and_exits_with_its_status(content: Path, tmp_path: Path) -> None:
    """`petgen build` run as a command ends its process without the usual teardown (`main`): its report is still
    printed in full and its exit status kept, 0 for a build, 1 for content with errors."""
    command = [sys.executable, "-m", "petgen", "build", "--content", str(content), "--out", str(tmp_path / "dist"),
               "--cache-dir", str(tmp_path / "cache")]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Built ") and done.stdout.endswith("\n")
    assert (tmp_path / "dist" / "_manifest.json").is_file()
    broken = next((content / "names").glob("*.md"))
    broken.write_text("---\ntitle: [unclosed\n---\n", encoding="utf-8")
    failed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert failed.returncode == 1
    assert f"{broken.name}:" in failed.stderr

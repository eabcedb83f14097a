"""A running server picks up a rebuilt dist without a restart (what `petgen dev` does on change)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from petgen.build.pipeline import build
from petgen.cli.main import _ensure_built
from tests.conftest import entry_text


def test_runtime_reload(content: Path, tmp_path: Path, make_client) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "dist"
    build(content, out, base_url="http://testserver")
    client = make_client(out)
    assert client.get("/api/names/hasi").status_code == 404
    (content / "names" / "hasi.md").write_text(entry_text("Hasi", "tiere"), encoding="utf-8")
    build(content, out, base_url="http://testserver")
    client.app.runtime.reload()  # … until the runtime reloads, as `petgen dev` does after each rebuild
    assert client.get("/api/names/hasi").json()["title"] == "Hasi"
    assert client.get("/api/search", params={"q": "hasi"}).json()["items"][0]["slug"] == "hasi"
    assert client.get("/api/status").json()["names"] == 7


def test_serve_rebuilds_when_stale_or_for_another_base_url(content: Path, tmp_path: Path) -> None:
    out = tmp_path / "dist"
    _ensure_built(content, out, "http://127.0.0.1:8000")
    manifest = (out / "_manifest.json").read_text()
    assert '"base_url": "http://127.0.0.1:8000"' in manifest
    stamp = (out / "_manifest.json").stat().st_mtime_ns
    _ensure_built(content, out, "http://127.0.0.1:8000")  # fresh and same URL: no rebuild
    assert (out / "_manifest.json").stat().st_mtime_ns == stamp
    _ensure_built(content, out, "http://127.0.0.1:9000")  # another URL: rebuilt so links work there
    assert '"base_url": "http://127.0.0.1:9000"' in (out / "_manifest.json").read_text()


def test_build_shows_progress_only_on_a_terminal(content: Path, tmp_path: Path) -> None:
    from petgen.cli.main import cli

    result = CliRunner().invoke(cli, ["build", "--content", str(content), "--out", str(tmp_path / "d")])
    assert result.exit_code == 0 and "Building" not in result.output


def test_a_loaded_search_index_stays_with_its_build(content: Path, tmp_path: Path) -> None:
    """The search index is mapped from the build the manifest was read from: a later build swapped in (and the
    old one deleted) changes nothing for the loaded one, and the next load sees the new build's index only."""
    from runtime.builds.dist import Dist

    out = tmp_path / "dist"
    build(content, out, base_url="http://testserver")
    old = Dist.load(out)
    (content / "names" / "hasi.md").write_text(entry_text("Hasi", "tiere"), encoding="utf-8")
    build(content, out, base_url="http://testserver")  # swapped in; the old tree is removed
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".dist")] == []
    assert old.search.search("hasi") == [] and len(old.search.docs) == len(old.items) == 6
    new = Dist.load(out)
    assert new.search.search("hasi")[0].slug == "hasi" and len(new.search.docs) == len(new.items) == 7
    assert old.search.search("hasi") == []  # still the old build's, after the new one was loaded

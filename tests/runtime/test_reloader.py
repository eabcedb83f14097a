"""A running server picks up a new build by itself: a changed dist/_manifest.json (SIGHUP: test_durability)."""

from __future__ import annotations

from pathlib import Path

import httpx

from petgen.build.pipeline import build
from runtime.builds.reloader import manifest_stamp
from tests.conftest import BASE_URL, entry_text
from tests.runtime.test_server import running_server
from tests.runtime.webhooks.support import wait_for


def test_a_new_build_is_served_without_a_restart_or_a_signal(content: Path, dist: Path, tmp_path: Path) -> None:
    with running_server(dist, dist_poll=0.05) as base:
        assert httpx.get(f"{base}/api/names/hasi").status_code == 404
        (content / "names" / "hasi.md").write_text(entry_text("Hasi", "tiere"), encoding="utf-8")
        build(content, dist, base_url=BASE_URL)
        wait_for(lambda: httpx.get(f"{base}/api/names/hasi").status_code == 200, "the new build to be served")
        assert httpx.get(f"{base}/api/status").json()["names"] == 7


def test_a_new_build_has_a_new_stamp(content: Path, dist: Path) -> None:
    before = manifest_stamp(dist)
    build(content, dist, base_url=BASE_URL)  # the same content, swapped in anew
    assert before is not None and manifest_stamp(dist) not in (None, before)
    assert manifest_stamp(dist / "nothing") is None

"""`petgen dev` survives every bad edit: it prints the problem, keeps serving the last good build, and
picks up the fix. Against the real command in a child process, on a free loopback port."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from tests.conftest import REPO
from tests.petgen.test_yaml_safety import BOMB, limited_petgen
from tests.runtime.test_server import free_port

DEADLINE = 60.0  # seconds to wait for each step; a correct run takes about one


class DevServer:
    """A running `petgen dev`: its base URL and everything it printed so far."""

    def __init__(self, base: str, log: Path) -> None:
        self.base = base
        self.log = log
        self.seen = 0  # how much of the log earlier steps have consumed

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, condition: Callable[[], object], what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not condition():
            assert time.monotonic() < deadline, f"gave up waiting for {what}; petgen dev printed:\n{self.output()}"
            time.sleep(0.05)

    def wait_for_output(self, text: str) -> str:
        """Wait until `text` appears in what dev prints after the previous step; return that part."""
        self.wait_for(lambda: text in self.output()[self.seen:], repr(text))
        new = self.output()[self.seen:]
        self.seen += new.index(text) + len(text)
        return new

    def answers(self) -> bool:
        try:
            return self.get("/api/status").status_code == 200
        except httpx.TransportError:
            return False

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.base + path, timeout=10)

    def meaning(self, slug: str) -> str | None:
        response = self.get(f"/api/names/{slug}")
        return response.json()["meaning"] if response.status_code == 200 else None


@contextlib.contextmanager
def petgen_dev(content: Path, tmp_path: Path) -> Iterator[DevServer]:
    port = free_port()
    log = tmp_path / "dev.log"
    command = limited_petgen("dev", "--content", str(content), "--dist", str(tmp_path / "out" / "dist"),
                             "--state-dir", str(tmp_path / "state"), "--port", str(port), "--rate-limit", "0")
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, cwd=REPO)
    server = DevServer(f"http://127.0.0.1:{port}", log)
    try:
        server.wait_for(server.answers, "the server to answer")
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_dev_survives_every_bad_edit_and_picks_up_the_fix(content: Path, tmp_path: Path) -> None:
    apfel = content / "names" / "apfel.md"
    good = apfel.read_text(encoding="utf-8")
    with petgen_dev(content, tmp_path) as dev:
        old_meaning = dev.meaning("apfel")
        assert old_meaning is not None and old_meaning.startswith("Ein verspielter Kosename für Apfel")

        # Broken YAML: the problem with its line, and the last good build is still served.
        apfel.write_text(good.replace("variants: [Apfellein]", "variants: [Apfellein"), encoding="utf-8")
        printed = dev.wait_for_output("Still serving the previous build.")
        assert f"{apfel}:7: YAML syntax error: did not find expected ',' or ']'" in printed
        assert dev.meaning("apfel") == old_meaning

        # An alias bomb: one line, at once; it used to exhaust memory (and end dev's watcher).
        apfel.write_text(good.replace("---\n", "---\n" + BOMB, 1), encoding="utf-8")
        printed = dev.wait_for_output("Still serving the previous build.")
        assert f"{apfel}:2: YAML anchors and aliases (&x, *x) are not allowed in content" in printed
        assert dev.meaning("apfel") == old_meaning

        # A fresh scaffold from `petgen new`: its placeholders keep it from being published.
        apfel.write_text(good, encoding="utf-8")
        subprocess.run(limited_petgen("new", "Hasi", "--content", str(content)), check=True, cwd=REPO,
                       capture_output=True)
        printed = dev.wait_for_output("Still serving the previous build.")
        assert f"{content}/names/hasi.md:3: placeholder text 'TODO' in pronunciation" in printed
        assert dev.get("/api/names/hasi").status_code == 404

        # A failure that is no content error (the output directory cannot be created): one line, and
        # the watcher lives on.
        # (out/ is replaced before the edit that starts the rebuild: a rebuild already running writes into out/,
        # and rmtree then failed with "Directory not empty" on a loaded machine.)
        shutil.rmtree(tmp_path / "out")
        (tmp_path / "out").write_text("not a directory")
        (content / "names" / "hasi.md").unlink()
        printed = dev.wait_for_output("watching for the next change.")
        assert "Error: the rebuild failed (FileExistsError: " in printed and "Traceback" not in printed
        # The runtime reads files from out/ when they are asked for (docs/operations.md#static-files): with
        # out/ gone, one it had not read yet is a 503 envelope, not a traceback and not another build's.
        gone = dev.get("/api/categories")
        assert gone.status_code == 503 and gone.json()["error"]["code"] == "service_unavailable"

        # The fix is picked up.
        (tmp_path / "out").unlink()
        apfel.write_text(good.replace("Ein verspielter Kosename", "Ein frischer Kosename"), encoding="utf-8")
        dev.wait_for_output("Built 6 names")
        assert dev.meaning("apfel") == old_meaning.replace("Ein verspielter", "Ein frischer")
        assert "Traceback" not in dev.output()

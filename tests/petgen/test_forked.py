"""The forked child of an incremental build (petgen/build/forked.py): its result, its failures, stopping it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from petgen.build.forked import ChildFailed, Forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _wait_done(child: Forked[object]) -> None:
    deadline = time.monotonic() + 10
    while not child.done():
        assert time.monotonic() < deadline, "the child never sent its result"
        time.sleep(0.01)


def test_the_result_comes_back_pickled_and_large() -> None:
    payload = {"routes": {f"/api/names/{i}": str(i) * 10 for i in range(20_000)}, "pid": None}
    child = Forked(lambda: {**payload, "pid": os.getpid()})
    found = child.result()
    assert found["routes"] == payload["routes"]  # several MB: more than a pipe holds at once
    assert found["pid"] == child.pid != os.getpid()
    assert child.done()


def test_done_tells_whether_the_result_is_on_its_way() -> None:
    gate_read, gate_write = os.pipe()

    def wait_for_gate() -> int:
        os.read(gate_read, 1)
        return 42

    child = Forked(wait_for_gate)
    try:
        time.sleep(0.05)
        assert not child.done()
        os.write(gate_write, b"x")
        _wait_done(child)
        assert child.result() == 42
    finally:
        os.close(gate_read)
        os.close(gate_write)


def test_an_exception_in_the_child_is_raised_with_its_traceback() -> None:
    def fails() -> None:
        raise ValueError("kaputt im Kind")

    child = Forked(fails)
    with pytest.raises(ValueError, match="kaputt im Kind") as caught:
        child.result()
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "In the build's child process" in notes and "in fails" in notes


def test_an_exception_that_cannot_be_pickled_arrives_as_its_text() -> None:
    class Unpicklable(Exception):
        def __reduce__(self):  # type: ignore[no-untyped-def]
            raise TypeError("not today")

    def fails() -> None:
        raise Unpicklable("mit Schloss")

    with pytest.raises(ChildFailed, match="mit Schloss"):
        Forked(fails).result()


def test_a_child_killed_before_its_result_is_a_clear_error() -> None:
    child = Forked(lambda: time.sleep(30))
    os.kill(child.pid, signal.SIGKILL)
    with pytest.raises(ChildFailed, match="ended without a result"):
        child.result()


def test_stop_ends_a_running_child_and_waits_for_it() -> None:
    child = Forked(lambda: time.sleep(30))
    started = time.monotonic()
    child.stop()
    assert time.monotonic() - started < 10
    with pytest.raises(ChildProcessError):  # reaped: no zombie left
        os.waitpid(child.pid, os.WNOHANG)
    child.stop()  # twice is harmless


def test_the_child_writes_nothing_of_this_process_buffers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "log"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("once")  # buffered in this process when the child is forked: a normal exit would flush it too
        child = Forked(lambda: "ok")
        assert child.result() == "ok"
        time.sleep(0.2)
    assert path.read_text(encoding="utf-8") == "once"


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rpartition(")")[2].split()[0] == "Z"  # a zombie: ended, not yet reaped
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_pool_workers_end_when_the_build_process_is_killed() -> None:
    """A build killed by SIGKILL (the OOM killer) left its pool's workers blocked for ever, sending results."""
    script = textwrap.dedent("""
        import os, signal, sys, time
        from petgen.build.forked import worker_pool

        def _pid_after(seconds):
            time.sleep(seconds)
            return os.getpid()

        pool = worker_pool(2)
        pids = set()
        while len(pids) < 2:  # each worker's pid, from tasks that keep the first busy while the second starts one
            pids |= {future.result() for future in [pool.submit(_pid_after, 0.05) for _ in range(4)]}
        print(*pids, flush=True)
        for _ in range(4):  # results larger than a pipe holds: a worker blocks sending one, which no one reads
            pool.submit(bytes, 1 << 24)
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20)
    assert run.returncode == -signal.SIGKILL, run.stderr
    workers = [int(pid) for pid in run.stdout.split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 10
    while not all(map(_gone, workers)):
        assert time.monotonic() < deadline, f"workers {workers} outlived the build process"
        time.sleep(0.05)

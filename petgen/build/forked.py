"""The build's other processes: one function run in a forked child, its result pickled back through a pipe (the child
of an incremental build: petgen/build/pipeline.py, `Edit`), and the pools of workers of a full build (`worker_pool`).

Not `concurrent.futures.ProcessPoolExecutor`: importing it (with multiprocessing and logging) took ≈35 ms of a
one-edit rebuild's 1 s, and its two threads in the build process (one feeding the pool, one collecting results)
took turns with the build for the interpreter lock while the child ran. A fork and a pipe are all one task needs.

The child sends one message: a byte saying how it ended, the length of the rest, and the rest (the pickled result,
or the exception it raised, with its traceback as a note). It exits as soon as that is written, without running
the build process's exit handlers. The build process reads the message without waiting for the child to exit
(unmapping its memory takes a while); a daemon thread reaps it.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.context import BaseContext

T = TypeVar("T")
HEADER = struct.Struct("<?Q")  # ended well, length of what follows
CHUNK = 1 << 20  # bytes read at a time
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that forked it ends


class ChildFailed(RuntimeError):
    """The child ended without a result: killed, or its result or exception could not be pickled."""


class Forked(Generic[T]):
    """`function()` running in a child forked when this is made (where the system can fork: `possible`)."""

    def __init__(self, function: Callable[[], T]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read)
            _run(function, write)
        os.close(write)
        self.pid, self._pipe = pid, read

    @staticmethod
    def possible() -> bool:
        """Whether this system can fork, and has a second core to run the child on."""
        return hasattr(os, "fork") and (os.cpu_count() or 1) >= 2

    def done(self) -> bool:
        """Whether the child has begun to send its result (or has ended): `result` will not wait for its work."""
        if self._pipe < 0:
            return True
        readable, _, _ = select.select([self._pipe], [], [], 0)
        return bool(readable)

    def result(self) -> T:
        """The child's result, once it has sent it; its exception is raised here."""
        if self._pipe < 0:
            raise ChildFailed("the child's result was read already")
        try:
            header = _read(self._pipe, HEADER.size)
            if len(header) < HEADER.size:
                raise ChildFailed(f"the build's child process (pid {self.pid}) ended without a result")
            ok, size = HEADER.unpack(header)
            body = _read(self._pipe, size)
        finally:
            self._close()
        if len(body) < size:
            raise ChildFailed(f"the build's child process (pid {self.pid}) ended while sending its result")
        value = pickle.loads(body)
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        """End the child if its result was not read (its work is not wanted), and wait until it has ended: it writes
        no more once this returns."""
        if self._pipe < 0:
            return
        os.close(self._pipe)
        self._pipe = -1
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:  # pragma: no cover - reaped only here, so it is at least a zombie
            pass
        os.waitpid(self.pid, 0)

    def _close(self) -> None:
        """After the result is read: the child exits by itself, reaped by a thread (not waited for here)."""
        os.close(self._pipe)
        self._pipe = -1
        threading.Thread(target=_reap, args=(self.pid,), daemon=True).start()


def _run(function: Callable[[], T], pipe: int) -> None:
    """In the child: run `function`, send how it ended, exit."""
    code = 0
    try:
        try:
            ok, body = True, pickle.dumps(function(), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - every way it ends is sent to the build process
            ok, body = False, _pickled_exception(exc)
        _write(pipe, HEADER.pack(ok, len(body)))
        _write(pipe, body)
    except BaseException:  # noqa: BLE001 - nothing may escape into the copy of the build process's stack
        code = 1
    finally:
        _exit(code)


def _pickled_exception(exc: BaseException) -> bytes:
    """`exc` with the child's traceback as a note, pickled (if it cannot be, a `ChildFailed` with its text)."""
    text = "".join(traceback.format_exception(exc)).rstrip()
    exc.add_note("In the build's child process:\n" + text)
    try:
        return pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - e.g. an exception holding a lock or an open file
        return pickle.dumps(ChildFailed(text), protocol=pickle.HIGHEST_PROTOCOL)


def _exit(code: int) -> None:
    """End the child at once: not the build process's exit handlers, nor its buffered output written twice."""
    os._exit(code)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read(fd: int, size: int) -> bytes:
    """Up to `size` bytes (fewer only if the pipe ends first)."""
    parts, left = [], size
    while left:
        part = os.read(fd, min(left, CHUNK))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def worker_pool(workers: int, context: BaseContext | None = None) -> ProcessPoolExecutor:
    """A pool of `workers` processes (from `context`: the default, or a fork context) that end with the build process,
    even when it is killed: a build killed by SIGKILL (the kernel's OOM killer, a CI timeout) left its workers behind
    for ever, each blocked on the results pipe that the other held open, and holding the output pipes of whatever had
    started the build, which then waited for them. Every pool's workers are forked by the thread that submits its
    first task, the build's, which outlives the pool."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=context, initializer=_end_with, initargs=(os.getpid(),))


def _end_with(parent: int) -> None:
    """In a pool's worker: be killed when the build process ends (Linux; elsewhere nothing changes), or end now if it
    has ended before this could be asked for."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return
    if prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0 and os.getppid() != parent:
        os._exit(1)

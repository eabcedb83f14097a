"""Writing a benchmark's figures into docs/benchmarks.md: the only way figures get there.

Every figure in docs/benchmarks.md sits between a pair of markers owned by one script,
`<!-- NAME: begin -->` … `<!-- NAME: end -->`, and is replaced whole by that script's `--write-docs`
run: the command line, the date, the machine and the versions of everything measured, then what the
run printed (`recorded`) or the table it built (`replace_block`). Text outside the markers explains
what is measured and carries no figures. `python bench/all.py` runs every script this way.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "benchmarks.md"
PACKAGES = ("uvicorn", "granian", "starlette", "numpy", "orjson", "redis", "mcp")
TOOLS = {"hugo": ["hugo", "version"], "nginx": ["nginx", "-v"], "wrk": ["wrk", "--version"],
         "redis-server": ["redis-server", "--version"]}


def machine() -> str:
    """The machine and the versions a figure depends on, on one line."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    packages = []
    for name in PACKAGES:
        with contextlib.suppress(PackageNotFoundError):
            packages.append(f"{name} {version(name)}")
    return (f"{os.cpu_count()} cores ({cpu}){memory}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, " + ", ".join(packages))


def tool_versions(*tools: str) -> str:
    """`hugo v0.111.3, nginx 1.22.1`: the external tools a benchmark compares with, as installed."""
    found = []
    for tool in tools:
        if shutil.which(TOOLS[tool][0]) is None:
            continue
        done = subprocess.run(TOOLS[tool], capture_output=True, text=True, check=False)
        text = (done.stdout or done.stderr).strip().splitlines()
        found.append(text[0].split(" BuildDate")[0].split(" Copyright")[0].split(" sha=")[0] if text else tool)
    return "; ".join(found)


def header(argv: list[str] | None = None, tools: tuple[str, ...] = ()) -> str:
    command = "python " + " ".join(["bench/" + Path((argv or sys.argv)[0]).name, *(argv or sys.argv)[1:]])
    extra = tool_versions(*tools)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"Run of {datetime.date.today().isoformat()}: `{command}`  \n"
            f"Machine: {machine()}; load average at the end of the run {load} (other jobs share it: compare rows "
            "within a run, not across runs)" + (f"  \nCompared with: {extra}" if extra else "") + "\n")


def replace_block(name: str, body: str, docs: Path = DOCS) -> None:
    """Put `body` between the markers of `name` in docs/benchmarks.md (which must be there once)."""
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    text = docs.read_text(encoding="utf-8")
    if text.count(begin) != 1 or text.count(end) != 1:
        raise SystemExit(f"{docs.relative_to(REPO)} needs exactly one '{begin}' … '{end}' pair")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    docs.write_text(f"{head}{begin}\n{body.rstrip()}\n{end}{tail}", encoding="utf-8")
    print(f"wrote the figures into {docs.relative_to(REPO)} ({name})")


class _Tee(io.TextIOBase):
    def __init__(self, stream: io.TextIOBase) -> None:
        self.stream, self.buffer_ = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.stream.write(text)
        self.buffer_.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


@contextlib.contextmanager
def recorded(name: str, write: bool, tools: tuple[str, ...] = ()) -> Iterator[None]:
    """Run the block; with `write`, put everything it printed, verbatim, into the docs under `name`."""
    if not write:
        yield
        return
    tee = _Tee(sys.stdout)  # type: ignore[arg-type]
    with contextlib.redirect_stdout(tee):  # type: ignore[type-var]
        yield
    replace_block(name, header(tools=tools) + "\n```text\n" + tee.buffer_.getvalue().strip("\n") + "\n```\n")

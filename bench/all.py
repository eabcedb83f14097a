"""Every benchmark, one after another, each writing its figures into docs/benchmarks.md.

    python bench/all.py            # everything (an hour or more on 2 cores, most of it the 50,000-entry runs)
    python bench/all.py --only search_speed.py runtime_memory.py
    python bench/all.py --list     # the commands, without running them

Needs the tools the scripts compare with (`apt-get install -y hugo nginx-light wrk redis-server`) and
the bench extras (`pip install -e ".[bench]"`). Run it on a machine that does nothing else: the
scripts alternate the contenders within a run, so ratios hold on a busy machine, but absolute
figures do not.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The command of every figure in docs/benchmarks.md (each script's --write-docs owns its block there).
COMMANDS: list[list[str]] = [
    ["build_vs_hugo.py", "--count", "10000,50000", "--rounds", "2", "--write-docs"],
    ["build_stages.py", "--count", "10000", "--rounds", "3", "--write-docs"],
    ["runtime_memory.py", "--before", "main", "--write-docs"],
    ["serve_vs_nginx.py", "--duration", "5", "--rounds", "3", "--write-docs"],
    ["search_quality.py", "--write-docs"],
    ["search_speed.py", "--reps", "50", "--write-docs"],
    ["not_found.py", "--counts", "10000,50000", "--reps", "3", "--write-docs"],
    ["aborts.py", "--write-docs"],
    ["ratelimit.py", "--write-docs"],
    ["webhooks.py", "--redis", "--write-docs"],
    ["page_weight.py", "--write-docs"],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="SCRIPT", help="run only these scripts")
    parser.add_argument("--list", action="store_true", help="print the commands and stop")
    args = parser.parse_args()
    commands = [c for c in COMMANDS if not args.only or c[0] in args.only]
    unknown = set(args.only or ()) - {c[0] for c in COMMANDS}
    if unknown:
        sys.exit(f"no such benchmark: {', '.join(sorted(unknown))}; the scripts are "
                 + ", ".join(c[0] for c in COMMANDS))
    for command in commands:
        print("python bench/" + " ".join(command), flush=True)
        if not args.list:
            subprocess.run([sys.executable, str(HERE / command[0]), *command[1:]], check=True, cwd=HERE.parent)


if __name__ == "__main__":
    main()

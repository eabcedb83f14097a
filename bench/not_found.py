"""What a 404's "did you mean" costs: `closest` (petgen/content/model.py) against difflib comparing every slug.

    python bench/not_found.py [--counts 10000,50000] [--reps 3] [--write-docs]

An unknown slug's 404 (`/api/names/{slug}`, `/names/{slug}/`, MCP's `get_name`) names the closest slug: the
one difflib's `get_close_matches(word, sorted(slugs), n=1, cutoff=0.6)` returns. The runtime computes it on the
event loop, so its cost is a pause for every other request on that worker. The words asked for are 300 a client
could send: typos of real slugs (a letter dropped, doubled, swapped or changed; a number changed), slugs of other
titles, random letters of 1–40 characters. Both contenders answer every word (the answers are compared: a
difference ends the run) over the synthetic corpus's slugs (`petgen.content.synthetic`), alternating, `--reps`
times; the table shows the median and the slowest per word, and the ratio of the medians of the whole runs.
"""

from __future__ import annotations

import argparse
import difflib
import random
import statistics
import string
import time

from docs import header, replace_block
from petgen.content.nearest import closest
from petgen.content.synthetic import synthetic_title
from petgen.content.text import slugify

WORDS = 300


def reference(word: str, slugs: set[str]) -> str | None:
    matches = difflib.get_close_matches(word, sorted(slugs), n=1, cutoff=0.6)
    return matches[0] if matches else None


def words_for(slugs: list[str], rng: random.Random) -> list[str]:
    def typo(slug: str) -> str:
        i = rng.randrange(len(slug))
        letter = rng.choice(string.ascii_lowercase)
        return rng.choice([slug[:i] + slug[i + 1:], slug[:i] + slug[i] + slug[i:], slug[:i] + letter + slug[i + 1:],
                           slug[:i] + slug[i + 1:i + 2] + slug[i:i + 1] + slug[i + 2:], slug.rstrip("0123456789")
                           + str(rng.randrange(10**6))])
    words = [typo(rng.choice(slugs)) for _ in range(WORDS // 2)]
    words += [slugify(synthetic_title(10**7 + i, rng)) for i in range(WORDS // 4)]
    words += ["".join(rng.choices(string.ascii_lowercase + "-", k=rng.randint(1, 40)))
              for _ in range(WORDS - len(words))]
    return words


def timed(find, words: list[str], slugs: set[str]) -> tuple[list[float], list[str | None]]:
    seconds, answers = [], []
    for word in words:
        started = time.perf_counter()
        answers.append(find(word, slugs))
        seconds.append(time.perf_counter() - started)
    return seconds, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="10000,50000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    closest("warm", {"up"})  # imports rapidfuzz (on a server's first 404): not a word's time
    rows = ["| slugs | contender | median per word | slowest word | × difflib (medians) |",
            "|---:|---|---:|---:|---:|"]
    for count in (int(c) for c in args.counts.split(",")):
        rng = random.Random(count)
        ordered = [slugify(synthetic_title(i, rng)) for i in range(count)]
        slugs, words = set(ordered), words_for(ordered, rng)
        runs: dict[str, list[float]] = {"difflib, every slug": [], "`closest`": []}
        for _ in range(args.reps):
            before, expected = timed(reference, words, slugs)
            after, answers = timed(closest, words, slugs)
            if answers != expected:
                wrong = next(w for w, a, e in zip(words, answers, expected) if a != e)
                raise SystemExit(f"closest({wrong!r}) differs from difflib's answer")
            runs["difflib, every slug"] += before
            runs["`closest`"] += after
        base = statistics.median(runs["difflib, every slug"])
        for name, seconds in runs.items():
            median = statistics.median(seconds)
            rows.append(f"| {count:,} | {name} | {1e3 * median:.2f} ms | {1e3 * max(seconds):.1f} ms | "
                        f"{median / base:.3f} |")
        print("\n".join(rows[-2:]), flush=True)
    table = (f"{WORDS} words per size, {args.reps} alternating runs; both gave the same answer for every word.\n\n"
             + "\n".join(rows))
    print(table)
    if args.write_docs:
        replace_block("not_found.py", header() + "\n" + table)


if __name__ == "__main__":
    main()

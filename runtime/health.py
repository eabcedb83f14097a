"""The runtime's checks behind `GET /api/status`: `ok`, `degraded` (a check fails) or `down` (no dist).

A check is a name with a failure detail, set by whatever notices the problem (a reload that failed,
a store that is unreachable) and cleared when it recovers. Checks that cost I/O (is the dist older
than the content?) are evaluated at most every `interval` seconds, never per request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from petgen.build.dist import is_stale

Probe = Callable[[], str | None]  # a failure detail, or None when all is well
Report = Callable[[], dict[str, str] | None]  # a whole check ({"status", "detail"?}), or None: not shown


class Health:
    def __init__(self, *, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.failing: dict[str, str] = {}
        self.probes: dict[str, Probe] = {}
        self.reports: dict[str, Report] = {}
        self.interval = interval
        self.clock = clock
        self._probed: dict[str, tuple[float, str | None]] = {}
        self._reported: dict[str, tuple[float, dict[str, str] | None]] = {}
        self.on_change: list[Callable[[str, bool], None]] = []  # (check, failing) when a set check flips (metrics)

    def fail(self, check: str, detail: str) -> None:
        flipped = check not in self.failing
        self.failing[check] = detail
        if flipped:
            for listener in self.on_change:
                listener(check, True)

    def recover(self, check: str) -> None:
        if self.failing.pop(check, None) is not None:
            for listener in self.on_change:
                listener(check, False)

    def add_probe(self, check: str, probe: Probe) -> None:
        self.probes[check] = probe

    def add_report(self, check: str, report: Report) -> None:
        """A check that reports details when ok too (the webhook backlog), or leaves itself out (None)."""
        self.reports[check] = report

    def checks(self) -> dict[str, dict[str, str]]:
        """Every known check: `{"status": "ok"}` or `{"status": "fail", "detail": …}`."""
        now = self.clock()
        result: dict[str, dict[str, str]] = {}
        for name, probe in self.probes.items():
            at, detail = self._probed.get(name, (float("-inf"), None))
            if now - at >= self.interval:
                detail = probe()
                self._probed[name] = (now, detail)
            result[name] = {"status": "fail", "detail": detail} if detail else {"status": "ok"}
        for name, report in self.reports.items():
            at, check = self._reported.get(name, (float("-inf"), None))
            if now - at >= self.interval:
                check = report()
                self._reported[name] = (now, check)
            if check is not None:
                result[name] = check
        for name, detail in self.failing.items():
            result[name] = {"status": "fail", "detail": detail}
        return dict(sorted(result.items()))

    def forget_probes(self) -> None:
        """Probe again on the next status request (after a reload)."""
        self._probed.clear()
        self._reported.clear()


def content_probe(content_dir: Path, dist_dir: Path) -> Probe:
    """Fails while the content directory has files newer than the loaded build."""

    def probe() -> str | None:
        if not content_dir.is_dir():
            return None
        if is_stale(content_dir, dist_dir):
            return f"{content_dir} has changes newer than the served build; run `petgen build` (or fix the errors " \
                   "`petgen check` lists)"
        return None

    return probe

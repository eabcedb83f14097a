"""When a failed delivery is tried again: the Standard Webhooks schedule, with jitter, optionally scaled down.

Eight attempts in all: at once, then ≈5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure
(about 27.6 hours from the first attempt to the last). Each delay is stretched or shrunk by up to
`JITTER` at random, so that deliveries that failed together (a subscriber that was down) do not all
come back in the same second. `scale` multiplies every delay: `PETGEN_WEBHOOK_RETRY_SCALE=0.001` turns
the whole schedule into about 100 seconds, for tests and staging.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

DELAYS = (5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0)  # seconds after the 1st, 2nd, … failure
JITTER = 0.1  # ± this fraction of each delay


@dataclass(frozen=True)
class Schedule:
    scale: float = 1.0
    delays: tuple[float, ...] = DELAYS
    jitter: float = JITTER
    random: Callable[[], float] = field(default=random.random, compare=False)

    @property
    def attempts(self) -> int:
        """How many attempts a delivery gets before it is marked failed."""
        return len(self.delays) + 1

    def next_attempt(self, failed_attempts: int, now: float) -> float | None:
        """When to try again after `failed_attempts` failures (counting the one just made); None: give up."""
        if failed_attempts > len(self.delays):
            return None
        base = self.delays[failed_attempts - 1] * self.scale
        return now + base * (1 + self.jitter * (2 * self.random() - 1))

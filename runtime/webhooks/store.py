"""The webhook state store: what both implementations promise (SQLite by default, Redis when shared).

Everything durable lives here: onboarding tokens (their hashes), subscriptions with their secrets, the
snapshot of the last dist seen, the events and the outbox of (event, subscription) deliveries.

Two promises carry the guarantees:

- `derive` reads the snapshot, lets the caller plan the events, and writes the new snapshot records,
  the events and one pending delivery per interested subscription in one transaction: after a crash
  at any moment either all of it is there or none of it (and the next load derives it again, with the
  same ids).
- `claim` leases a subscription to one worker until `now + lease`; only the lease holder's `record`
  counts, and a worker that dies simply lets the lease run out. So one worker at a time delivers to a
  subscription, in event order, and a delivery that was in flight when its worker died is sent again:
  at least once, with the same event id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from runtime.webhooks.derive import Plan, Record
from runtime.webhooks.model import Attempt, Claim, DeliveryView, Due, Event, Stats, Subscription, Token

LEASE = 15.0  # seconds: the 10 s attempt timeout plus room for the bookkeeping around it
SQLITE_FILE = "webhooks.sqlite3"

Planner = Callable[[Mapping[str, Record], bool], Plan]  # (previous snapshot, is baseline) -> plan


class StoreUnavailable(Exception):
    """The store could not be reached or failed; the message says which and why."""


class Conflict(Exception):
    """The subscription cannot be made: the same URL is already subscribed, or the owner has too many."""


class NotFound(Exception):
    """No such event (or subscription) in the store."""


class Store(Protocol):
    def add_token(self, token: Token) -> None: ...

    def find_token(self, hash: str) -> Token | None: ...

    def tokens(self) -> list[Token]:
        """Every onboarding token, oldest first."""

    def revoke_token(self, id: str) -> bool:
        """Forget the token (its subscriptions stay); False if there was none."""

    def add_subscription(self, subscription: Subscription, *, limit: int | None) -> None:
        """Raise Conflict if the owner has an active subscription of this URL or `limit` subscriptions."""

    def subscription(self, id: str) -> Subscription | None: ...

    def subscriptions(self, owner: str | None = None) -> list[Subscription]: ...

    def save_subscription(self, subscription: Subscription) -> None: ...

    def remove_subscription(self, id: str) -> bool:
        """Delete it and cancel its pending deliveries; False if there was none."""

    def seen(self) -> tuple[str | None, int]:
        """The source hash of the last dist derived from (None before the baseline) and the generation: how
        many derivations the store has recorded. A store that lost writes has gone back to a lower one."""

    def seen_source(self) -> str | None: ...

    def derive(self, source: str, planner: Planner, now: float) -> list[Event]:
        """In one transaction: plan from the snapshot, write it, queue the new events; return them."""

    def claim(self, owner: str, now: float, *, lease: float = LEASE, batch: int = 50) -> Claim | None:
        """Lease a subscription with due deliveries to `owner`; its due deliveries in event order."""

    def record(self, claim: Claim, due: Due, attempt: Attempt, next_at: float | None, now: float, *,
               lease: float = LEASE) -> bool:
        """Record an attempt (delivered, retry at `next_at`, or failed when None) and renew the lease.
        False if the lease was lost (the attempt then does not count; another worker will send again)."""

    def release(self, claim: Claim) -> None: ...

    def deliveries(self, *, failed_only: bool = False, limit: int = 50) -> list[DeliveryView]: ...

    def requeue(self, event_id: str, subscription_id: str | None, now: float) -> int:
        """Make the event's deliveries pending again with a fresh schedule; NotFound for an unknown event."""

    def add_sent(self, event: Event, subscription_id: str, attempt: Attempt, now: float) -> None:
        """Record a delivery made outside the outbox (the operator's test event)."""

    def stats(self, now: float) -> Stats: ...

    def prune(self, before: float) -> int:
        """Forget finished deliveries and events older than `before`; how many deliveries went."""

    def close(self) -> None: ...


def open_store(state_dir: Path, redis_url: str | None) -> Store:
    """The shared Redis store when a Redis URL is set, else SQLite in the state directory."""
    if redis_url:
        from runtime.webhooks.redis_store import RedisStore

        return RedisStore(redis_url)
    from runtime.webhooks.sqlite_store import SQLiteStore

    return SQLiteStore(state_dir / SQLITE_FILE)

"""Both stores keep the same promises: one transaction per derivation, leases, the outbox's states."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.webhooks.derive import Draft, Plan, Record
from runtime.webhooks.model import Attempt, Event, Subscription, Token, new_secret
from runtime.webhooks.redis_store import RedisStore
from runtime.webhooks.sqlite_store import SQLiteStore
from runtime.webhooks.store import Conflict, NotFound, Store

NOW = 1_800_000_000.0


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made: Store = SQLiteStore(tmp_path / "state" / "webhooks.sqlite3") if request.param == "sqlite" else \
        RedisStore(request.getfixturevalue("redis_url"))
    yield made
    made.close()


def subscribe(store: Store, name: str, events: tuple[str, ...] = ("entry.updated", "entry.published"),
              owner: str = "tok_a") -> Subscription:
    subscription = Subscription(id=f"wh_{owner[-1] + name:a<16}", url=f"https://{name}.example/hook", events=events,
                                description="", owner=owner, created=NOW, secret=new_secret())
    store.add_subscription(subscription, limit=5)
    return subscription


def plan(*events: tuple[str, str], records: dict[str, Record] | None = None) -> Plan:
    return Plan(records or {}, [Draft(event_id, kind, f'{{"id": "{event_id}"}}'.encode()) for event_id, kind in events])


def derive(store: Store, source: str, *events: tuple[str, str]) -> list[str]:
    return [e.id for e in store.derive(source, lambda previous, baseline: plan(*events), NOW)]


def test_the_first_derivation_is_the_baseline_and_a_seen_source_is_skipped(store: Store) -> None:
    seen: list[tuple[dict[str, Record], bool]] = []

    def planner(previous: dict[str, Record], baseline: bool) -> Plan:
        seen.append((dict(previous), baseline))
        return Plan({"e:apfel": Record("d1", 1, {"meaning": "h1"}, "Apfel")}, [])

    assert store.seen() == (None, 0)
    assert store.derive("build-1", planner, NOW) == []
    assert store.seen() == ("build-1", 1) and seen == [({}, True)]
    assert store.derive("build-1", planner, NOW) == []  # the same build again (another replica): not planned
    assert store.seen() == ("build-1", 1)
    store.derive("build-2", planner, NOW)
    assert seen[1] == ({"e:apfel": Record("d1", 1, {"meaning": "h1"}, "Apfel")}, False)
    assert store.seen() == ("build-2", 2)  # one more generation per derivation: a store that loses writes goes back


def test_events_are_queued_for_the_subscriptions_that_want_them(store: Store) -> None:
    updates = subscribe(store, "updates", ("entry.updated",))
    everything = subscribe(store, "everything", ("entry.updated", "entry.published", "category.updated"))
    derive(store, "build-1")
    assert derive(store, "build-2", ("evt_a", "entry.updated"), ("evt_b", "category.updated")) == ["evt_a", "evt_b"]
    assert derive(store, "build-3", ("evt_a", "entry.updated")) == []  # an id is queued once
    pending = {(d.subscription, d.event_id) for d in store.deliveries() if d.status == "pending"}
    assert pending == {(updates.id, "evt_a"), (everything.id, "evt_a"), (everything.id, "evt_b")}


def test_one_worker_at_a_time_per_subscription_and_a_dead_worker_lets_go(store: Store) -> None:
    subscription = subscribe(store, "one")
    derive(store, "build-1")
    derive(store, "build-2", ("evt_1", "entry.updated"), ("evt_2", "entry.published"), ("evt_3", "entry.updated"))
    first = store.claim("worker-a", NOW, lease=15)
    assert first is not None and first.subscription.id == subscription.id
    assert [d.event.id for d in first.deliveries] == ["evt_1", "evt_2", "evt_3"]  # in event order
    assert store.claim("worker-b", NOW + 1, lease=15) is None  # leased to worker-a
    assert store.record(first, first.deliveries[0], Attempt(True, 200), None, NOW + 2, lease=15)
    # worker-a dies here; its lease (renewed at NOW + 2) runs out at NOW + 17
    assert store.claim("worker-b", NOW + 16, lease=15) is None
    second = store.claim("worker-b", NOW + 18, lease=15)
    assert second is not None and [d.event.id for d in second.deliveries] == ["evt_2", "evt_3"]
    assert not store.record(first, first.deliveries[1], Attempt(True, 200), None, NOW + 19)  # too late: ignored
    assert store.record(second, second.deliveries[0], Attempt(True, 200), None, NOW + 19)
    store.release(second)
    third = store.claim("worker-c", NOW + 20)
    assert third is not None and [d.event.id for d in third.deliveries] == ["evt_3"]


def test_a_failed_attempt_is_retried_then_marked_failed_and_can_be_requeued(store: Store) -> None:
    subscribe(store, "flaky")
    derive(store, "build-1")
    derive(store, "build-2", ("evt_1", "entry.updated"))
    claim = store.claim("w", NOW)
    assert claim is not None
    assert store.record(claim, claim.deliveries[0], Attempt(False, 500), NOW + 5, NOW)
    store.release(claim)
    assert store.claim("w", NOW + 4) is None  # not due yet
    claim = store.claim("w", NOW + 5)
    assert claim is not None and claim.deliveries[0].attempts == 1
    assert store.record(claim, claim.deliveries[0], Attempt(False, None, "could not connect"), None, NOW + 5)
    store.release(claim)
    [view] = store.deliveries(failed_only=True)
    assert (view.event_id, view.status, view.attempts, view.last_error) == ("evt_1", "failed", 2, "could not connect")
    assert store.stats(NOW + 6).failed_recently == 1
    assert store.requeue("evt_1", None, NOW + 10) == 1
    claim = store.claim("w", NOW + 10)
    assert claim is not None and claim.deliveries[0].attempts == 0  # a fresh schedule
    with pytest.raises(NotFound):
        store.requeue("evt_unknown", None, NOW)


def test_410_disables_the_subscription_and_fails_what_was_pending(store: Store) -> None:
    gone = subscribe(store, "gone")
    derive(store, "build-1")
    derive(store, "build-2", ("evt_1", "entry.updated"), ("evt_2", "entry.updated"))
    claim = store.claim("w", NOW)
    assert claim is not None
    assert store.record(claim, claim.deliveries[0], Attempt(False, 410), None, NOW)
    store.release(claim)
    after = store.subscription(gone.id)
    assert after is not None and after.status == "disabled" and "410 Gone" in (after.disabled_reason or "")
    assert {d.event_id: d.status for d in store.deliveries()} == {"evt_1": "failed", "evt_2": "failed"}
    assert store.claim("w", NOW + 100) is None
    derive(store, "build-3", ("evt_3", "entry.updated"))
    assert "evt_3" not in {d.event_id for d in store.deliveries()}  # nothing is queued for it any more
    stats = store.stats(NOW)
    assert (stats.subscriptions, stats.disabled, stats.pending) == (1, 1, 0)
    store.add_subscription(Subscription("wh_again", gone.url, gone.events, "", gone.owner, NOW, new_secret()),
                           limit=5)  # the subscriber may come back: a disabled subscription is no conflict


def test_removing_a_subscription_cancels_its_deliveries(store: Store) -> None:
    subscription = subscribe(store, "leaving")
    derive(store, "build-1")
    derive(store, "build-2", ("evt_1", "entry.updated"))
    assert store.remove_subscription(subscription.id) and not store.remove_subscription(subscription.id)
    assert store.claim("w", NOW + 1) is None
    assert [d.status for d in store.deliveries()] == ["cancelled"]


def test_subscriptions_are_unique_per_owner_and_url_and_limited(store: Store) -> None:
    subscribe(store, "same")
    with pytest.raises(Conflict, match="already subscribed"):
        subscribe(store, "same")
    subscribe(store, "same", owner="tok_b")  # another token may subscribe the same URL
    for name in "bcde":
        subscribe(store, name)
    with pytest.raises(Conflict, match="at most 5 subscriptions per token"):
        subscribe(store, "f")
    assert [s.owner for s in store.subscriptions("tok_b")] == ["tok_b"]


def test_tokens_are_found_by_their_hash_only_and_can_be_revoked(store: Store) -> None:
    store.add_token(Token("tok_x", "ops@example.com", NOW, "ab" * 32))
    store.add_token(Token("tok_y", "other@example.com", NOW + 1, "ef" * 32))
    assert store.find_token("ab" * 32) == Token("tok_x", "ops@example.com", NOW, "ab" * 32)
    assert store.find_token("cd" * 32) is None
    assert [t.id for t in store.tokens()] == ["tok_x", "tok_y"]
    assert store.revoke_token("tok_x") and not store.revoke_token("tok_x")
    assert store.find_token("ab" * 32) is None and [t.id for t in store.tokens()] == ["tok_y"]


def test_stats_and_pruning(store: Store) -> None:
    subscribe(store, "stats")
    derive(store, "build-1")
    derive(store, "build-2", ("evt_1", "entry.updated"), ("evt_2", "entry.updated"))
    stats = store.stats(NOW + 100)
    assert (stats.subscriptions, stats.pending, stats.failing, stats.oldest_due) == (1, 2, 0, NOW)
    claim = store.claim("w", NOW)
    assert claim is not None
    store.record(claim, claim.deliveries[0], Attempt(True, 204), None, NOW)
    store.record(claim, claim.deliveries[1], Attempt(False, 503), NOW + 5, NOW)
    store.release(claim)
    stats = store.stats(NOW)
    assert (stats.pending, stats.failing, stats.oldest_due) == (1, 1, NOW + 5)
    assert store.prune(NOW + 1) == 1  # the delivered one; the pending one stays
    assert [d.event_id for d in store.deliveries()] == ["evt_2"]


def test_a_test_event_sent_by_the_operator_is_recorded_and_can_be_redelivered(store: Store) -> None:
    subscription = subscribe(store, "tested")
    store.add_sent(Event("evt_test_a", "entry.updated", NOW, b"{}"), subscription.id, Attempt(False, 500), NOW)
    store.add_sent(Event("evt_test_b", "entry.updated", NOW, b"{}"), subscription.id, Attempt(True, 200), NOW + 1)
    assert [(d.event_id, d.status, d.last_status) for d in store.deliveries()] == [
        ("evt_test_b", "delivered", 200), ("evt_test_a", "failed", 500)]
    assert [d.event_id for d in store.deliveries(failed_only=True)] == ["evt_test_a"]
    assert store.requeue("evt_test_a", subscription.id, NOW + 2) == 1
    claim = store.claim("w", NOW + 2)
    assert claim is not None and [d.event.id for d in claim.deliveries] == ["evt_test_a"]

"""What `petgen webhooks …` does: the operator's side, out of band, on the same store the runtime uses.

Each function takes the store and returns what the command prints, or raises OperatorError with the
message to show; the command line (petgen/cli/webhooks.py) only parses options.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import orjson

from petgen.build.dist import MANIFEST
from runtime.webhooks.destinations import Policy, Refused, check_destination
from runtime.webhooks.model import (
    EVENT_TYPES,
    MAX_DESCRIPTION,
    OPERATOR,
    Attempt,
    DeliveryView,
    Event,
    Subscription,
    Token,
    iso,
    new_id,
    new_secret,
    new_token,
    token_hash,
)
from runtime.webhooks.sender import Sender, user_agent
from runtime.webhooks.store import Conflict, NotFound, Store


class OperatorError(Exception):
    """What went wrong, worded for the operator."""


def parse_events(values: tuple[str, ...]) -> tuple[str, ...]:
    """`--events a,b --events c` → (a, b, c); all types when none are given."""
    events = [e.strip() for value in values for e in value.split(",") if e.strip()]
    for event in events:
        if event not in EVENT_TYPES:
            raise OperatorError(f"Unknown event type '{event}'; the event types are {', '.join(EVENT_TYPES)}.")
    return tuple(dict.fromkeys(events)) or EVENT_TYPES


def invite(store: Store, contact: str, now: float) -> str:
    if not contact.strip():
        raise OperatorError("--contact must say who the token is for (an e-mail address or a name).")
    token = new_token()
    record = Token(new_id("tok_"), contact.strip(), now, token_hash(token))
    store.add_token(record)
    return (f"Onboarding token for {record.contact} ({record.id}), shown only now:\n{token}\n"
            "The subscriber sends it as 'Authorization: Bearer <token>' to POST /webhooks.")


def add(store: Store, url: str, events: tuple[str, ...], description: str, policy: Policy, now: float) -> str:
    if len(description) > MAX_DESCRIPTION:
        raise OperatorError(f"--description is longer than {MAX_DESCRIPTION} characters.")
    try:
        anyio.run(lambda: check_destination(url, policy))
    except Refused as exc:
        raise OperatorError(f"{url} is not accepted: {exc}.") from None
    subscription = Subscription(id=new_id("wh_"), url=url, events=events, description=description, owner=OPERATOR,
                                created=now, secret=new_secret())
    try:
        store.add_subscription(subscription, limit=None)
    except Conflict as exc:
        raise OperatorError(f"Not subscribed: {exc} (see `petgen webhooks list`).") from None
    return (f"Subscribed {subscription.id} to {url} ({', '.join(events)}).\n"
            f"Signing secret, shown only now: {subscription.secret}")


def list_subscriptions(store: Store) -> str:
    contacts = {t.id: t.contact for t in store.tokens()}
    rows = [(s.id, s.status, contacts.get(s.owner, s.owner), ",".join(s.events), s.url) for s in store.subscriptions()]
    if not rows:
        return "No subscriptions."
    return _table(("ID", "STATUS", "OWNER", "EVENTS", "URL"), rows)


def list_tokens(store: Store) -> str:
    held: dict[str, int] = {}
    for subscription in store.subscriptions():
        held[subscription.owner] = held.get(subscription.owner, 0) + 1
    rows = [(t.id, t.contact, iso(t.created), str(held.get(t.id, 0))) for t in store.tokens()]
    if not rows:
        return "No onboarding tokens."
    return _table(("TOKEN", "CONTACT", "ISSUED", "SUBSCRIPTIONS"), rows)


def revoke(store: Store, token_id: str) -> str:
    if not store.revoke_token(token_id):
        raise OperatorError(f"No onboarding token {token_id} (see `petgen webhooks tokens`).")
    return (f"Revoked {token_id}: it no longer manages subscriptions. Its subscriptions stay until removed "
            "(`petgen webhooks remove ID`).")


def remove(store: Store, subscription_id: str) -> str:
    if not store.remove_subscription(subscription_id):
        raise OperatorError(f"No subscription {subscription_id} (see `petgen webhooks list`).")
    return f"Removed {subscription_id}; its pending deliveries are cancelled."


def rotate(store: Store, subscription_id: str, now: float) -> str:
    subscription = _subscription(store, subscription_id)
    rotated = subscription.rotated(now)
    store.save_subscription(rotated)
    assert rotated.previous_expires is not None
    return (f"New signing secret for {subscription_id}, shown only now: {rotated.secret}\n"
            f"The previous secret stays valid until {iso(rotated.previous_expires)}; until then every delivery "
            "carries both signatures.")


def deliveries(store: Store, *, failed_only: bool, limit: int, now: float) -> str:
    views = store.deliveries(failed_only=failed_only, limit=limit)
    if not views:
        return "No failed deliveries." if failed_only else "No deliveries."
    return _table(("EVENT", "TYPE", "SUBSCRIPTION", "STATUS", "ATTEMPTS", "LAST RESULT", "WHEN"),
                  [_delivery_row(v, now) for v in views])


def _delivery_row(view: DeliveryView, now: float) -> tuple[str, ...]:
    last = f"HTTP {view.last_status}" if view.last_status else ""
    if view.last_error:
        last = f"{last}: {view.last_error}" if last else view.last_error
    when = (f"next attempt {iso(view.next_at)}" if view.status == "pending" and view.next_at is not None
            else iso(view.updated))
    return view.event_id, view.event_type, view.subscription, view.status, str(view.attempts), last[:80] or "-", when


def redeliver(store: Store, event_id: str, subscription_id: str | None, now: float) -> str:
    try:
        count = store.requeue(event_id, subscription_id, now)
    except NotFound:
        raise OperatorError(f"No event {event_id} in the store (see `petgen webhooks deliveries`).") from None
    if count == 0:
        target = f"subscription {subscription_id}" if subscription_id else "any active subscription"
        raise OperatorError(f"{event_id} was not delivered to {target}; nothing was queued.")
    return (f"Queued {event_id} again for {count} subscription{'s' if count != 1 else ''}; the running server "
            "delivers it.")


def send_test(store: Store, subscription_id: str, dist_dir: Path, policy: Policy, now: float) -> str:
    """Send an `entry.updated` test event (an entry of the dist, `changes: []`) now, once, and say how it went."""
    subscription = _subscription(store, subscription_id)
    sample, site = sample_entry(dist_dir)
    event_id = "evt_test_" + new_id("")
    body = orjson.dumps({"id": event_id, "type": "entry.updated", "created": iso(now),
                         "data": {**sample, "changes": []}})
    event = Event(event_id, "entry.updated", now, body)

    async def deliver() -> Attempt:
        async with Sender(policy, agent=user_agent(site["name"], site["api_version"], site["base_url"])) as sender:
            return await sender.send(subscription.url, event, subscription.signing_secrets(time.time()), 1)

    attempt = anyio.run(deliver)
    store.add_sent(event, subscription.id, attempt, time.time())
    if not attempt.delivered:
        raise OperatorError(f"The test event {event_id} to {subscription.id} ({subscription.url}) failed: "
                            f"{attempt.summary()}.")
    return f"Delivered the test event {event_id} to {subscription.id} ({subscription.url}): {attempt.summary()}."


def sample_entry(dist_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first entry of a built dist as `entry.updated` data (without `changes`), and the site."""
    try:
        manifest = orjson.loads((dist_dir / MANIFEST).read_bytes())
        data = orjson.loads((dist_dir / manifest["data"]).read_bytes())
        summary = data["items"][0]
        entry = orjson.loads((dist_dir / manifest["routes"][f"/api/names/{summary['slug']}"]["file"]).read_bytes())
    except (OSError, KeyError, IndexError, ValueError):
        raise OperatorError(f"{dist_dir} holds no built entry to send as a test; run `petgen build` or pass "
                            "--dist DIR.") from None
    return ({"slug": entry["slug"], "title": entry["title"], "url": entry["url"],
             "lastReviewed": entry["lastReviewed"]}, data["site"])


def _subscription(store: Store, subscription_id: str) -> Subscription:
    subscription = store.subscription(subscription_id)
    if subscription is None:
        raise OperatorError(f"No subscription {subscription_id} (see `petgen webhooks list`).")
    return subscription


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    return "\n".join("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in (header, *rows))

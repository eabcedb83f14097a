"""End to end on a real server: subscribe, publish a changed dist, receive signed events at a real receiver."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator
from standardwebhooks import Webhook

from runtime.webhooks.sqlite_store import SQLiteStore
from runtime.webhooks.store import SQLITE_FILE
from tests.runtime.test_server import running_server
from tests.runtime.webhooks.support import (
    Receiver,
    Site,
    issue_token,
    petname_signature_valid,
    validate_event,
    wait_for,
)

pytestmark = pytest.mark.slow


class Service:
    """A running runtime with a subscription of the receiver, and the way to publish a new build."""

    def __init__(self, site: Site, base: str, state: Path, token: str) -> None:
        self.site, self.base, self.state = site, base, state
        self.client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10)

    def subscribe(self, url: str, **fields: Any) -> dict[str, Any]:
        response = self.client.post("/webhooks", json={"url": url, **fields})
        assert response.status_code == 201, response.text
        return response.json()

    def publish(self) -> None:
        """Rebuild; the runtime notices the new manifest by itself (no reload call, no signal)."""
        self.site.build()
        source = orjson.loads((self.site.dist / "_manifest.json").read_bytes())["sourceHash"]
        store = SQLiteStore(self.state / SQLITE_FILE)
        wait_for(lambda: store.seen_source() == source, "the runtime to derive the new build's events")

    def deliveries(self) -> list[Any]:
        return SQLiteStore(self.state / SQLITE_FILE).deliveries()


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    site = Site(tmp_path)
    state = tmp_path / "state"
    with running_server(site.dist, state_dir=state, dist_poll=0.05, webhook_allow_loopback=True,
                        webhook_retry_scale=0.001) as base:
        service = Service(site, base, state, issue_token(state))
        with service.client:
            yield service


def test_a_change_is_delivered_signed_both_ways(service: Service, receiver: Receiver) -> None:
    subscription = service.subscribe(receiver.url, events=["entry.updated"])
    service.site.edit("apfel", "answer: Unter Paaren wirkt Apfel liebevoll", "answer: Unter Paaren klingt Apfel süß")
    service.publish()
    [delivery] = receiver.wait_for(1)
    event = validate_event(delivery)
    assert event["type"] == "entry.updated" and event["data"]["changes"] == ["faq[1].answer"]
    assert event["data"]["url"] == "http://testserver/names/apfel/"

    headers, body = delivery.headers, delivery.body
    assert headers["Content-Type"] == "application/json"
    assert headers["User-Agent"].startswith("Kosenamen-API-Webhooks/1.0.0")
    assert headers["X-Petname-Event-Id"] == event["id"] == headers["Webhook-Id"]
    assert headers["X-Petname-Event-Type"] == "entry.updated" and headers["X-Petname-Attempt"] == "1"
    assert abs(int(headers["Webhook-Timestamp"]) - time.time()) < 300
    assert headers["X-Petname-Signature"].startswith(f"t={headers['Webhook-Timestamp']},v1=")
    assert petname_signature_valid(subscription["secret"], headers, body)  # an HMAC of our own
    assert Webhook(subscription["secret"]).verify(body, headers) == event  # the standardwebhooks library
    assert not petname_signature_valid(subscription["secret"], headers, body + b" ")


def test_the_event_matches_the_openapi_webhooks_description(service: Service, receiver: Receiver) -> None:
    service.subscribe(receiver.url)
    slug = service.site.add("Hasi", categories="tiere")  # a theme, and (gender alle) the alias category neutral
    service.publish()
    received = receiver.wait_for(3)
    document = orjson.loads((service.site.dist / "openapi.json").read_bytes())
    for delivery in received:
        event = delivery.event
        operation = document["webhooks"][event["type"]]["post"]
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        validator = Draft202012Validator({**schema, "components": document["components"]})
        assert list(validator.iter_errors(event)) == [], event
        assert {p["name"].lower() for p in operation["parameters"]} <= {h.lower() for h in delivery.headers}
    assert sorted((d.event["type"], d.event["data"]["slug"]) for d in received) == [
        ("category.updated", "neutral"), ("category.updated", "tiere"), ("entry.published", slug)]


def test_a_receiver_that_fails_twice_then_succeeds(service: Service, receiver: Receiver) -> None:
    service.subscribe(receiver.url)
    receiver.answers = [500, 503]
    service.site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
    service.publish()
    received = receiver.wait_for(3)
    assert [r.headers["X-Petname-Attempt"] for r in received] == ["1", "2", "3"]
    assert len({r.headers["X-Petname-Event-Id"] for r in received}) == 1 and len({r.body for r in received}) == 1
    wait_for(lambda: [d.status for d in service.deliveries()] == ["delivered"], "the delivery to be recorded")
    [view] = service.deliveries()
    assert (view.attempts, view.last_status) == (3, 200)


def test_410_disables_the_subscription(service: Service, receiver: Receiver) -> None:
    subscription = service.subscribe(receiver.url)
    receiver.answers = [410]
    service.site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
    service.publish()
    receiver.wait_for(1)
    wait_for(lambda: service.client.get(f"/webhooks/{subscription['id']}").json()["status"] == "disabled",
             "the subscription to be disabled")
    shown = service.client.get(f"/webhooks/{subscription['id']}").json()
    assert shown["disabledReason"].startswith("the endpoint answered 410 Gone on ")
    service.site.edit("apfel", "meaning: Ein zärtlicher", "meaning: Ein lieber")
    service.publish()  # derived, but queued for nobody
    assert len(receiver.received) == 1 and {d.status for d in service.deliveries()} == {"failed"}
    assert service.client.post("/webhooks", json={"url": receiver.url}).status_code == 201  # it may come back


def test_rotation_signs_with_both_secrets_during_the_overlap(service: Service, receiver: Receiver) -> None:
    subscription = service.subscribe(receiver.url)
    rotated = service.client.post(f"/webhooks/{subscription['id']}/rotate").json()
    old, new = subscription["secret"], rotated["secret"]
    service.site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
    service.publish()
    [delivery] = receiver.wait_for(1)
    assert delivery.headers["X-Petname-Signature"].count("v1=") == 2
    assert delivery.headers["Webhook-Signature"].count("v1,") == 2
    for secret in (old, new):  # a subscriber who has not switched yet, and one who has
        assert petname_signature_valid(secret, delivery.headers, delivery.body)
        assert Webhook(secret).verify(delivery.body, delivery.headers)["id"] == delivery.event["id"]

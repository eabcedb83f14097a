"""What the webhook tests share: a site to change and rebuild, a real receiver, tokens, signature checks."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from petgen.build.pipeline import build
from petgen.content.text import slugify
from petgen.contract.schemas import schema_for
from runtime.webhooks.operator import invite
from runtime.webhooks.sqlite_store import SQLiteStore
from runtime.webhooks.store import SQLITE_FILE
from tests.conftest import entry_text, write_site

EVENT_SCHEMAS = {kind: Draft202012Validator(schema_for(name)) for kind, name in (
    ("entry.published", "EntryPublishedEvent"), ("entry.updated", "EntryUpdatedEvent"),
    ("category.updated", "CategoryUpdatedEvent"))}
WAIT = 30.0  # seconds to wait for something that takes milliseconds when all is well


def issue_token(state_dir: Path, contact: str = "tests@example.com") -> str:
    """An onboarding token in the SQLite store a runtime with this state directory uses."""
    return invite(SQLiteStore(state_dir / SQLITE_FILE), contact, time.time()).splitlines()[1]


def wait_for(condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


class Site:
    """A small real content directory and its dist, to change and rebuild as an editor would."""

    def __init__(self, root: Path, base_url: str = "http://testserver") -> None:
        self.content = write_site(root / "content")
        self.dist = root / "dist"
        self.base_url = base_url
        self.build()

    def build(self) -> None:
        build(self.content, self.dist, base_url=self.base_url)

    def entry(self, slug: str) -> Path:
        return self.content / "names" / f"{slug}.md"

    def edit(self, slug: str, old: str, new: str) -> None:
        text = self.entry(slug).read_text(encoding="utf-8")
        assert old in text, old
        self.entry(slug).write_text(text.replace(old, new, 1), encoding="utf-8")

    def add(self, title: str, categories: str = "tiere", moods: str = "zaertlich") -> str:
        slug = slugify(title)
        self.entry(slug).write_text(entry_text(title, categories, moods), encoding="utf-8")
        return slug


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict[str, Any]:
        return orjson.loads(self.body)


@dataclass
class Receiver:
    """A real HTTP endpoint on loopback that records every POST and answers with the statuses it is told."""

    server: HTTPServer
    path: str = "/hook"
    received: list[Delivery] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)  # statuses for the next requests; then 200
    hold: threading.Event | None = None  # while set to an unset Event, requests wait for it

    def __post_init__(self) -> None:
        self.server.expect_request(self.path, method="POST").respond_with_handler(self._handle)

    @property
    def url(self) -> str:
        return self.server.url_for(self.path)

    def _handle(self, request: Request) -> Response:
        self.received.append(Delivery(dict(request.headers), request.get_data()))
        if self.hold is not None:
            self.hold.wait(WAIT)
        return Response("thanks", status=self.answers.pop(0) if self.answers else 200)

    def wait_for(self, count: int, timeout: float = WAIT) -> list[Delivery]:
        wait_for(lambda: len(self.received) >= count, f"{count} deliveries (got {len(self.received)})", timeout)
        return self.received


def petname_signature_valid(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """The contract's scheme, checked independently: HMAC-SHA256 over `<t>.<body>` keyed with the secret."""
    fields = headers["X-Petname-Signature"].split(",")
    assert fields[0].startswith("t=")
    expected = hmac.new(secret.encode(), fields[0][2:].encode() + b"." + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(f"v1={expected}", value) for value in fields[1:])


def validate_event(delivery: Delivery) -> dict[str, Any]:
    event = delivery.event
    errors = [e.message for e in EVENT_SCHEMAS[event["type"]].iter_errors(event)]
    assert errors == [], (event, errors)
    return event


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real receiver on a free loopback port (import this fixture where it is used)."""
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    try:
        yield Receiver(server)
    finally:
        server.clear()
        if server.is_running():
            server.stop()

"""The webhook records (tokens, subscriptions, events, deliveries) and how their ids and secrets are made."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from petgen.contract.events import EVENT_TYPES as EVENT_DESCRIPTIONS

EVENT_TYPES = tuple(EVENT_DESCRIPTIONS)  # entry.published, entry.updated, category.updated
OPERATOR = "operator"  # the owner of subscriptions made with the CLI (out of band)
ROTATION_OVERLAP = 24 * 3600.0  # seconds the previous secret stays valid after a rotation
MAX_DESCRIPTION = 200

# Delivery states: pending (due now or later), delivered (a 2xx), failed (the schedule ran out, or the
# subscription was disabled), cancelled (the subscription was removed).
PENDING, DELIVERED, FAILED, CANCELLED = "pending", "delivered", "failed", "cancelled"


def new_id(prefix: str) -> str:
    """`wh_…`, `tok_…`: 80 random bits in lowercase base32, safe in paths and shells."""
    return prefix + base64.b32encode(secrets.token_bytes(10)).decode().lower()


def new_token() -> str:
    """An onboarding token: 256 random bits. Only its hash is stored."""
    return "wht_" + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_secret() -> str:
    """A signing secret in the Standard Webhooks format: `whsec_` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def iso(timestamp: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC, `2026-11-22T10:00:00Z`."""
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Token:
    id: str
    contact: str
    created: float
    hash: str

    def to_json(self) -> bytes:
        return orjson.dumps(self.__dict__)

    @classmethod
    def from_json(cls, data: bytes | str) -> Token:
        return cls(**orjson.loads(data))


@dataclass(frozen=True)
class Subscription:
    id: str
    url: str
    events: tuple[str, ...]
    description: str
    owner: str  # a token id, or OPERATOR
    created: float
    secret: str
    previous_secret: str | None = None
    previous_expires: float | None = None  # when the previous secret stops being used
    status: str = "active"  # or "disabled" (the endpoint answered 410)
    disabled_reason: str | None = None

    @property
    def active(self) -> bool:
        return self.status == "active"

    def wants(self, event_type: str) -> bool:
        return self.active and event_type in self.events

    def signing_secrets(self, now: float) -> list[str]:
        """The secrets a delivery is signed with: the current one, and during a rotation the previous one."""
        if self.previous_secret and self.previous_expires and now < self.previous_expires:
            return [self.secret, self.previous_secret]
        return [self.secret]

    def rotated(self, now: float) -> Subscription:
        return replace(self, secret=new_secret(), previous_secret=self.secret,
                       previous_expires=now + ROTATION_OVERLAP)

    def disabled(self, reason: str) -> Subscription:
        return replace(self, status="disabled", disabled_reason=reason)

    def resource(self, license: dict[str, str], *, now: float, with_secret: bool = False) -> dict[str, Any]:
        """The Subscription resource of the API; the secret only right after it was made."""
        body: dict[str, Any] = {"id": self.id, "url": self.url, "events": list(self.events),
                                "description": self.description, "status": self.status,
                                "created": iso(self.created)}
        if self.disabled_reason:
            body["disabledReason"] = self.disabled_reason
        if with_secret:
            body["secret"] = self.secret
        if self.previous_expires and now < self.previous_expires:
            body["previousSecretExpires"] = iso(self.previous_expires)
        return {**body, **license}

    def to_json(self) -> bytes:
        return orjson.dumps(self.__dict__)

    @classmethod
    def from_json(cls, data: bytes | str) -> Subscription:
        fields = orjson.loads(data)
        return cls(**{**fields, "events": tuple(fields["events"])})


@dataclass(frozen=True)
class Event:
    id: str
    type: str
    created: float
    body: bytes  # the exact bytes every attempt sends (and signs)
    seq: int = 0  # the order events were derived in, across derivations


@dataclass(frozen=True)
class Attempt:
    """What one delivery attempt came to."""

    delivered: bool
    status: int | None = None  # the HTTP status, if a response arrived
    error: str | None = None  # why it failed, for the operator
    ms: int = 0

    @property
    def gone(self) -> bool:
        """410 Gone: the subscriber asks us to stop; the subscription is disabled."""
        return self.status == 410

    def summary(self) -> str:
        """`HTTP 200 in 12 ms`, `HTTP 500`, `could not connect: …`."""
        if self.status is None:
            return self.error or "failed"
        text = f"HTTP {self.status} in {self.ms} ms" if self.delivered else f"HTTP {self.status}"
        return f"{text} ({self.error})" if self.error else text


def status_after(attempt: Attempt, next_at: float | None) -> str:
    """A delivery's state after an attempt: delivered; pending again (a retry is scheduled); or failed (no
    retry left, or 410 Gone)."""
    if attempt.delivered:
        return DELIVERED
    return FAILED if attempt.gone or next_at is None else PENDING


@dataclass(frozen=True)
class Due:
    """A pending delivery handed to a worker: the event and how many attempts were made before."""

    event: Event
    attempts: int


@dataclass(frozen=True)
class Claim:
    """A subscription leased to one worker, with its due deliveries in event order."""

    subscription: Subscription
    owner: str
    deliveries: list[Due] = field(default_factory=list)


@dataclass(frozen=True)
class DeliveryView:
    """One (event, subscription) delivery as the operator sees it."""

    event_id: str
    event_type: str
    subscription: str
    status: str
    attempts: int
    next_at: float | None
    last_status: int | None
    last_error: str | None
    updated: float


@dataclass(frozen=True)
class Stats:
    """What /api/status reports about webhooks."""

    subscriptions: int
    disabled: int
    failing: int  # active subscriptions whose last attempt failed
    pending: int
    oldest_due: float | None  # when the longest-waiting pending delivery became due
    failed_recently: int  # deliveries marked failed in the last 24 hours

"""The webhook store in Redis: shared by every replica, so a subscription made on one is seen by all.

Transactions are optimistic (`WATCH` … `MULTI` … `EXEC`, retried when a watched key changed): a
derivation watches the snapshot's source hash, the subscriptions and the event counter, so two
replicas loading the same dist at once derive it once; the loser retries, finds the dist already
seen and derives nothing. A worker leases a subscription with a script that sets `lease:<sub>` to
`<worker>|<until>` unless a lease that has not run out is there; recording an attempt watches the lease
and commits only while the worker still holds it.

Keys (prefix `petgen:wh:`): `tokens`, `subs` (hashes of JSON records), `snap` and `meta` (the
snapshot), `seq` (the event counter), `ev:<id>` (an event), `evids`, `evtime`, `evsubs:<id>`,
`dl:<sub>:<event>` (a delivery), `q:<sub>` (its pending deliveries by event order), `due:<sub>` (the
same by due time), `ready` (subscriptions by their earliest due time), `log` and `failedlog` (for the
operator), `lease:<sub>`, `failing`.

Durability is Redis's: run it with `appendonly yes` (and `appendfsync everysec` or `always`), see
docs/webhooks.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import redis

from runtime.webhooks.derive import Record
from runtime.webhooks.model import (
    CANCELLED,
    DELIVERED,
    FAILED,
    PENDING,
    Attempt,
    Claim,
    DeliveryView,
    Due,
    Event,
    Stats,
    Subscription,
    Token,
    iso,
    status_after,
)
from runtime.webhooks.store import LEASE, Conflict, NotFound, Planner, StoreUnavailable

P = "petgen:wh:"
T = TypeVar("T")

# Keep `ready` (subscription -> its earliest due time) in step with one subscription's `due` set.
REFRESH_READY = """
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 then redis.call('ZREM', KEYS[2], ARGV[1]) else redis.call('ZADD', KEYS[2], first[2], ARGV[1]) end
return 1
"""
# A lease is "<owner>|<until>" (until: the claimant's clock, as in the SQLite store, so both keep the same
# promise; replicas' clocks must agree to well under the lease). The key also expires by itself, later.
ACQUIRE = """
local held = redis.call('GET', KEYS[1])
if held and tonumber(string.match(held, '|([^|]*)$')) >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[3], 'PX', ARGV[4])
return 1
"""
RELEASE = """
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '|' then return redis.call('DEL', KEYS[1]) end
return 0
"""
GRACE = 60_000  # ms a lease key outlives its end, then Redis removes it


def _guarded(method: Callable[..., T]) -> Callable[..., T]:
    """Redis failures (down, timeout, refused) become StoreUnavailable with what happened."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return method(*args, **kwargs)
        except redis.RedisError as exc:
            raise StoreUnavailable(f"the webhook store (Redis) failed: {exc}") from None

    return wrapper


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _float(value: bytes | None) -> float | None:
    return float(value) if value not in (None, b"") else None


class RedisStore:
    def __init__(self, url: str) -> None:
        self.redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2, health_check_interval=30)
        self._refresh = self.redis.register_script(REFRESH_READY)
        self._acquire = self.redis.register_script(ACQUIRE)
        self._release = self.redis.register_script(RELEASE)

    def close(self) -> None:
        self.redis.close()

    def _transaction(self, watch: list[str], body: Callable[[Any], T]) -> T:
        """Run `body(pipe)` under WATCH until it commits; `body` reads, calls `pipe.multi()`, queues writes."""
        while True:
            with self.redis.pipeline() as pipe:
                try:
                    pipe.watch(*watch)
                    result = body(pipe)
                    if pipe.explicit_transaction:
                        pipe.execute()
                    return result
                except redis.WatchError:
                    continue

    def _ready(self, pipe: Any, sid: str) -> None:
        self._refresh(keys=[f"{P}due:{sid}", f"{P}ready"], args=[sid], client=pipe)

    # tokens and subscriptions

    @_guarded
    def add_token(self, token: Token) -> None:
        self.redis.hset(f"{P}tokens", token.hash, token.to_json())

    @_guarded
    def find_token(self, hash: str) -> Token | None:
        raw = self.redis.hget(f"{P}tokens", hash)
        return Token.from_json(raw) if raw else None

    @_guarded
    def tokens(self) -> list[Token]:
        return sorted((Token.from_json(v) for v in self.redis.hvals(f"{P}tokens")), key=lambda t: (t.created, t.id))

    @_guarded
    def revoke_token(self, id: str) -> bool:
        def body(pipe: Any) -> bool:
            hashes = [h for h, raw in pipe.hgetall(f"{P}tokens").items() if Token.from_json(raw).id == id]
            pipe.multi()
            if hashes:
                pipe.hdel(f"{P}tokens", *hashes)
            return bool(hashes)

        return self._transaction([f"{P}tokens"], body)

    @_guarded
    def add_subscription(self, subscription: Subscription, *, limit: int | None) -> None:
        def body(pipe: Any) -> None:
            mine = [s for s in (Subscription.from_json(v) for v in pipe.hvals(f"{P}subs"))
                    if s.owner == subscription.owner]
            if any(s.url == subscription.url and s.active for s in mine):  # a disabled one may come back
                raise Conflict(f"{subscription.url} is already subscribed")
            if limit is not None and len(mine) >= limit:
                raise Conflict(f"at most {limit} subscriptions per token")
            pipe.multi()
            pipe.hset(f"{P}subs", subscription.id, subscription.to_json())

        self._transaction([f"{P}subs"], body)

    @_guarded
    def subscription(self, id: str) -> Subscription | None:
        raw = self.redis.hget(f"{P}subs", id)
        return Subscription.from_json(raw) if raw else None

    @_guarded
    def subscriptions(self, owner: str | None = None) -> list[Subscription]:
        found = [Subscription.from_json(v) for v in self.redis.hvals(f"{P}subs")]
        return sorted((s for s in found if owner is None or s.owner == owner), key=lambda s: (s.created, s.id))

    @_guarded
    def save_subscription(self, subscription: Subscription) -> None:
        def body(pipe: Any) -> None:
            if pipe.hexists(f"{P}subs", subscription.id):  # never bring back one removed meanwhile
                pipe.multi()
                pipe.hset(f"{P}subs", subscription.id, subscription.to_json())

        self._transaction([f"{P}subs"], body)

    @_guarded
    def remove_subscription(self, id: str) -> bool:
        def body(pipe: Any) -> bool:
            if not pipe.hexists(f"{P}subs", id):
                return False
            pending = [_text(e) for e in pipe.zrange(f"{P}q:{id}", 0, -1)]
            pipe.multi()
            pipe.hdel(f"{P}subs", id)
            for event_id in pending:
                pipe.hset(f"{P}dl:{id}:{event_id}", mapping={"status": CANCELLED, "next_at": ""})
            pipe.delete(f"{P}q:{id}", f"{P}due:{id}", f"{P}lease:{id}")
            pipe.zrem(f"{P}ready", id)
            pipe.hdel(f"{P}failing", id)
            return True

        return self._transaction([f"{P}subs", f"{P}q:{id}"], body)

    # derivation

    @_guarded
    def seen(self) -> tuple[str | None, int]:
        source, generation = self.redis.hmget(f"{P}meta", ["source", "generation"])
        return (_text(source) if source else None), int(generation or 0)

    def seen_source(self) -> str | None:
        return self.seen()[0]

    @_guarded
    def derive(self, source: str, planner: Planner, now: float) -> list[Event]:
        def body(pipe: Any) -> list[Event]:
            seen = pipe.hget(f"{P}meta", "source")
            if seen is not None and _text(seen) == source:
                return []  # another replica derived this dist already
            previous = {_text(k): Record.from_json(v) for k, v in pipe.hgetall(f"{P}snap").items()}
            plan = planner(previous, seen is None)
            subscribers = [s for s in (Subscription.from_json(v) for v in pipe.hvals(f"{P}subs")) if s.active]
            known = pipe.smismember(f"{P}evids", [d.id for d in plan.events]) if plan.events else []
            seq = int(pipe.get(f"{P}seq") or 0)
            pipe.multi()
            if plan.records:
                pipe.hset(f"{P}snap", mapping={k: r.to_json() for k, r in plan.records.items()})
            pipe.hset(f"{P}meta", "source", source)
            pipe.hincrby(f"{P}meta", "generation", 1)
            events = []
            touched: set[str] = set()
            for draft, exists in zip(plan.events, known):
                if exists:
                    continue  # the same change was queued before
                seq += 1
                events.append(Event(draft.id, draft.type, now, draft.body, seq))
                pipe.hset(f"{P}ev:{draft.id}", mapping={"type": draft.type, "created": now, "body": draft.body,
                                                        "seq": seq})
                pipe.sadd(f"{P}evids", draft.id)
                pipe.zadd(f"{P}evtime", {draft.id: now})
                for s in subscribers:
                    if s.wants(draft.type):
                        self._queue(pipe, s.id, draft.id, seq, now)
                        pipe.sadd(f"{P}evsubs:{draft.id}", s.id)
                        touched.add(s.id)
            pipe.set(f"{P}seq", seq)
            for sid in touched:
                pipe.zadd(f"{P}ready", {sid: now}, lt=True)  # new deliveries are due now
            return events

        return self._transaction([f"{P}meta", f"{P}subs", f"{P}seq"], body)

    @staticmethod
    def _queue(pipe: Any, sid: str, event_id: str, seq: int, now: float) -> None:
        pipe.hset(f"{P}dl:{sid}:{event_id}", mapping={"status": PENDING, "attempts": 0, "next_at": now,
                                                      "last_status": "", "last_error": "", "updated": now,
                                                      "seq": seq})
        pipe.zadd(f"{P}q:{sid}", {event_id: seq})
        pipe.zadd(f"{P}due:{sid}", {event_id: now})
        pipe.zadd(f"{P}log", {f"{sid}|{event_id}": now})
        pipe.zrem(f"{P}failedlog", f"{sid}|{event_id}")

    # the outbox

    @_guarded
    def claim(self, owner: str, now: float, *, lease: float = LEASE, batch: int = 50) -> Claim | None:
        for raw in self.redis.zrangebyscore(f"{P}ready", "-inf", now, start=0, num=50):
            sid = _text(raw)
            if not self._acquire(keys=[f"{P}lease:{sid}"], args=[owner, now, now + lease, int(lease * 1000) + GRACE]):
                continue  # another worker has it
            claim = self._claimed(sid, owner, now, batch)
            if claim is not None:
                return claim
            self._release(keys=[f"{P}lease:{sid}"], args=[owner])
        return None

    def _claimed(self, sid: str, owner: str, now: float, batch: int) -> Claim | None:
        subscription = self.subscription(sid)
        if subscription is None or not subscription.active:
            self._transaction([f"{P}q:{sid}"], lambda pipe: self._drop_pending(pipe, sid, now, CANCELLED, None))
            return None
        # The first pending deliveries in event order, if due, and whatever else is due (retries)
        first = [_text(e) for e in self.redis.zrange(f"{P}q:{sid}", 0, batch - 1)]
        due = {_text(e) for e in self.redis.zrangebyscore(f"{P}due:{sid}", "-inf", now, start=0, num=batch)}
        with self.redis.pipeline(transaction=False) as pipe:
            for event_id in first:
                pipe.zscore(f"{P}due:{sid}", event_id)
            due |= {e for e, at in zip(first, pipe.execute()) if at is not None and at <= now}
        if not due:
            self.redis.eval(REFRESH_READY, 2, f"{P}due:{sid}", f"{P}ready", sid)  # a stale entry in `ready`
            return None
        with self.redis.pipeline(transaction=False) as pipe:
            for event_id in due:
                pipe.hgetall(f"{P}ev:{event_id}")
                pipe.hget(f"{P}dl:{sid}:{event_id}", "attempts")
            found = pipe.execute()
        deliveries = []
        for event_id, ev, attempts in zip(due, found[::2], found[1::2]):
            if ev:
                deliveries.append(Due(Event(event_id, _text(ev[b"type"]), float(ev[b"created"]), ev[b"body"],
                                            int(ev[b"seq"])), int(attempts or 0)))
        deliveries.sort(key=lambda d: d.event.seq)
        return Claim(subscription, owner, deliveries[:batch])

    def _drop_pending(self, pipe: Any, sid: str, now: float, status: str, reason: str | None) -> None:
        """End every pending delivery of a subscription (removed: cancelled; disabled: failed). Call after WATCH."""
        pending = [_text(e) for e in pipe.zrange(f"{P}q:{sid}", 0, -1)]
        if not pipe.explicit_transaction:
            pipe.multi()
        for event_id in pending:
            fields: dict[str, Any] = {"status": status, "next_at": "", "updated": now}
            if reason:
                fields["last_error"] = reason
            pipe.hset(f"{P}dl:{sid}:{event_id}", mapping=fields)
            if status == FAILED:
                pipe.zadd(f"{P}failedlog", {f"{sid}|{event_id}": now})
        pipe.delete(f"{P}q:{sid}", f"{P}due:{sid}")
        pipe.zrem(f"{P}ready", sid)

    @_guarded
    def record(self, claim: Claim, due: Due, attempt: Attempt, next_at: float | None, now: float, *,
               lease: float = LEASE) -> bool:
        sid, event_id = claim.subscription.id, due.event.id
        lease_key = f"{P}lease:{sid}"

        def body(pipe: Any) -> bool:
            held = _text(pipe.get(lease_key) or b"")
            if held.rpartition("|")[0] != claim.owner:
                return False  # the lease ran out and another worker has it
            pending = [_text(e) for e in pipe.zrange(f"{P}q:{sid}", 0, -1)] if attempt.gone else []
            status = status_after(attempt, next_at)
            pipe.multi()
            pipe.hset(f"{P}dl:{sid}:{event_id}", mapping={
                "status": status, "attempts": due.attempts + 1,
                "next_at": next_at if status == PENDING else "", "last_status": attempt.status or "",
                "last_error": attempt.error or "", "updated": now})
            pipe.zadd(f"{P}log", {f"{sid}|{event_id}": now})
            if status == PENDING:
                pipe.zadd(f"{P}due:{sid}", {event_id: next_at})
            else:
                pipe.zrem(f"{P}q:{sid}", event_id)
                pipe.zrem(f"{P}due:{sid}", event_id)
            if status == FAILED:
                pipe.zadd(f"{P}failedlog", {f"{sid}|{event_id}": now})
            if attempt.delivered:
                pipe.hdel(f"{P}failing", sid)
            else:
                pipe.hincrby(f"{P}failing", sid, 1)
            if attempt.gone:
                disabled = claim.subscription.disabled(f"the endpoint answered 410 Gone on {iso(now)}")
                pipe.hset(f"{P}subs", sid, disabled.to_json())
                for other in pending:
                    if other != event_id:
                        pipe.hset(f"{P}dl:{sid}:{other}", mapping={
                            "status": FAILED, "next_at": "", "updated": now,
                            "last_error": "not sent: the subscription was disabled (410 Gone)"})
                        pipe.zadd(f"{P}failedlog", {f"{sid}|{other}": now})
                pipe.delete(f"{P}q:{sid}", f"{P}due:{sid}")
            pipe.set(lease_key, f"{claim.owner}|{now + lease}", px=int(lease * 1000) + GRACE)
            self._ready(pipe, sid)
            return True

        return self._transaction([lease_key, f"{P}q:{sid}"], body)

    @_guarded
    def release(self, claim: Claim) -> None:
        self._release(keys=[f"{P}lease:{claim.subscription.id}"], args=[claim.owner])

    # for the operator

    @_guarded
    def deliveries(self, *, failed_only: bool = False, limit: int = 50) -> list[DeliveryView]:
        members = [_text(m) for m in self.redis.zrevrange(f"{P}failedlog" if failed_only else f"{P}log", 0,
                                                          limit * 2 - 1)]
        with self.redis.pipeline(transaction=False) as pipe:
            for member in members:
                sid, event_id = member.split("|", 1)
                pipe.hgetall(f"{P}dl:{sid}:{event_id}")
                pipe.hget(f"{P}ev:{event_id}", "type")
            found = pipe.execute()
        views = []
        for member, dl, kind in zip(members, found[::2], found[1::2]):
            if not dl or (failed_only and dl[b"status"] != FAILED.encode()):
                continue
            sid, event_id = member.split("|", 1)
            views.append(DeliveryView(
                event_id, _text(kind or b"?"), sid, _text(dl[b"status"]), int(dl[b"attempts"]),
                _float(dl.get(b"next_at")), int(dl[b"last_status"]) if dl.get(b"last_status") else None,
                _text(dl[b"last_error"]) if dl.get(b"last_error") else None, float(dl[b"updated"])))
        return views[:limit]

    @_guarded
    def requeue(self, event_id: str, subscription_id: str | None, now: float) -> int:
        if not self.redis.sismember(f"{P}evids", event_id):
            raise NotFound(f"no event {event_id} in the store")
        seq = int(self.redis.hget(f"{P}ev:{event_id}", "seq") or 0)
        count = 0
        for raw in self.redis.smembers(f"{P}evsubs:{event_id}"):
            sid = _text(raw)
            if subscription_id is not None and sid != subscription_id:
                continue
            subscription = self.subscription(sid)
            if subscription is None or not subscription.active:
                continue

            def body(pipe: Any, sid: str = sid) -> None:
                pipe.multi()
                self._queue(pipe, sid, event_id, seq, now)
                self._ready(pipe, sid)

            self._transaction([f"{P}q:{sid}"], body)
            count += 1
        return count

    @_guarded
    def add_sent(self, event: Event, subscription_id: str, attempt: Attempt, now: float) -> None:
        seq = self.redis.incr(f"{P}seq")
        member = f"{subscription_id}|{event.id}"
        status = DELIVERED if attempt.delivered else FAILED
        with self.redis.pipeline() as pipe:
            pipe.hset(f"{P}ev:{event.id}", mapping={"type": event.type, "created": event.created, "body": event.body,
                                                    "seq": seq})
            pipe.sadd(f"{P}evids", event.id)
            pipe.zadd(f"{P}evtime", {event.id: event.created})
            pipe.sadd(f"{P}evsubs:{event.id}", subscription_id)
            pipe.hset(f"{P}dl:{subscription_id}:{event.id}", mapping={
                "status": status, "attempts": 1, "next_at": "", "last_status": attempt.status or "",
                "last_error": attempt.error or "", "updated": now, "seq": seq})
            pipe.zadd(f"{P}log", {member: now})
            if status == FAILED:
                pipe.zadd(f"{P}failedlog", {member: now})
            pipe.execute()

    @_guarded
    def stats(self, now: float) -> Stats:
        subscriptions = [Subscription.from_json(v) for v in self.redis.hvals(f"{P}subs")]
        active = {s.id for s in subscriptions if s.active}
        failing = {_text(k) for k in self.redis.hkeys(f"{P}failing")} & active
        with self.redis.pipeline(transaction=False) as pipe:
            for s in subscriptions:
                pipe.zcard(f"{P}q:{s.id}")
            pending = sum(pipe.execute())
        first = self.redis.zrange(f"{P}ready", 0, 0, withscores=True)
        failed = self.redis.zcount(f"{P}failedlog", now - 86400, "+inf")
        return Stats(len(subscriptions), len(subscriptions) - len(active), len(failing), pending,
                     float(first[0][1]) if first else None, failed)

    @_guarded
    def prune(self, before: float) -> int:
        gone = 0
        for raw in self.redis.zrangebyscore(f"{P}evtime", "-inf", before):
            event_id = _text(raw)
            sids = [_text(s) for s in self.redis.smembers(f"{P}evsubs:{event_id}")]
            with self.redis.pipeline(transaction=False) as pipe:
                for sid in sids:
                    pipe.hmget(f"{P}dl:{sid}:{event_id}", "status", "updated")
                states = pipe.execute()
            if any(s == PENDING.encode() or (u is not None and float(u) >= before) for s, u in states):
                continue
            with self.redis.pipeline() as pipe:
                for sid in sids:
                    pipe.delete(f"{P}dl:{sid}:{event_id}")
                    pipe.zrem(f"{P}log", f"{sid}|{event_id}")
                    pipe.zrem(f"{P}failedlog", f"{sid}|{event_id}")
                pipe.delete(f"{P}ev:{event_id}", f"{P}evsubs:{event_id}")
                pipe.srem(f"{P}evids", event_id)
                pipe.zrem(f"{P}evtime", event_id)
                pipe.execute()
            gone += len(sids)
        return gone

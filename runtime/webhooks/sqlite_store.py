"""The webhook store in one SQLite file (`<state-dir>/webhooks.sqlite3`): one machine, any number of processes.

Write-ahead logging lets readers go on while one writer writes; every write is a `BEGIN IMMEDIATE`
transaction, so two workers (two processes of one server, or `petgen webhooks` beside a running
server) never interleave. Derivations and subscription changes commit with `synchronous=FULL`
(fsync before the commit returns: they survive a power cut); the outbox's bookkeeping after each
attempt with `NORMAL` (it survives any crash of the process; a power cut may forget the last attempts,
which are then made again: at least once). Each operation opens and closes its own connection, so
nothing is shared between threads; one more stays open while the store lives (see `__init__`).

The file holds the signing secrets: it is created readable by its owner only.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

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

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subscriptions (id TEXT PRIMARY KEY, owner TEXT NOT NULL, url TEXT NOT NULL,
    status TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot (key TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL, created REAL NOT NULL, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS deliveries (subscription TEXT NOT NULL, event_seq INTEGER NOT NULL,
    status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at REAL, last_status INTEGER,
    last_error TEXT, updated REAL NOT NULL, PRIMARY KEY (subscription, event_seq));
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (subscription, next_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS deliveries_order ON deliveries (subscription, event_seq) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS deliveries_updated ON deliveries (updated);
CREATE TABLE IF NOT EXISTS leases (subscription TEXT PRIMARY KEY, owner TEXT NOT NULL, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS failing (subscription TEXT PRIMARY KEY, failures INTEGER NOT NULL);
"""

# The subscription whose delivery has waited longest, among those no live lease holds: one index lookup per
# subscription. ('pending' is written out: SQLite uses a partial index only for the literal of its WHERE.)
CLAIMABLE = ("SELECT s.id, (SELECT min(d.next_at) FROM deliveries d WHERE d.subscription = s.id "
             "AND d.status = 'pending') AS due FROM subscriptions s LEFT JOIN leases l ON l.subscription = s.id "
             "WHERE s.status = 'active' AND (l.until IS NULL OR l.until < :now) AND due <= :now ORDER BY due LIMIT 1")


class SQLiteStore:
    def __init__(self, path: Path) -> None:
        self.path = path.absolute()  # each operation opens the file again: a later chdir must not move it
        self._writing = threading.Lock()
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))  # secrets inside: owner only
            with closing(sqlite3.connect(path, timeout=10.0, isolation_level=None)) as db:
                db.execute("PRAGMA journal_mode=WAL")  # persistent: set once for the file
                db.executescript(SCHEMA)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            # One connection stays open for the store's life: when the last connection to a WAL database
            # closes, SQLite checkpoints and removes the log, which made every operation cost a millisecond.
            self._anchor = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
            self._anchor.execute("SELECT 1 FROM meta LIMIT 1").fetchall()
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open the webhook store {path}: {exc}") from None
        self._finalizer = weakref.finalize(self, self._anchor.close)

    def _connect(self) -> sqlite3.Connection:
        try:
            return sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open the webhook store {self.path}: {exc}") from None

    @contextmanager
    def _tx(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction on a connection of its own; any SQLite failure is StoreUnavailable.

        Writers of this process queue on a lock: SQLite's own wait for a busy database sleeps in steps of
        milliseconds, which several delivery lanes writing at once turned into most of their time."""
        with self._writing, self._transaction(durable) as db:
            yield db

    @contextmanager
    def _transaction(self, durable: bool) -> Iterator[sqlite3.Connection]:
        db = self._connect()
        try:
            db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.rollback()
                raise
            db.commit()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the webhook store {self.path} failed: {exc}") from None
        finally:
            db.close()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        db = self._connect()
        try:
            yield db
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the webhook store {self.path} failed: {exc}") from None
        finally:
            db.close()

    # tokens and subscriptions

    def add_token(self, token: Token) -> None:
        with self._tx(durable=True) as db:
            db.execute("INSERT INTO tokens VALUES (?, ?, ?)", (token.hash, token.id, token.to_json()))

    def find_token(self, hash: str) -> Token | None:
        with self._read() as db:
            row = db.execute("SELECT record FROM tokens WHERE hash = ?", (hash,)).fetchone()
        return Token.from_json(row[0]) if row else None

    def tokens(self) -> list[Token]:
        with self._read() as db:
            rows = db.execute("SELECT record FROM tokens").fetchall()
        return sorted((Token.from_json(r[0]) for r in rows), key=lambda t: (t.created, t.id))

    def revoke_token(self, id: str) -> bool:
        with self._tx(durable=True) as db:
            return db.execute("DELETE FROM tokens WHERE id = ?", (id,)).rowcount > 0

    def add_subscription(self, subscription: Subscription, *, limit: int | None) -> None:
        with self._tx(durable=True) as db:
            rows = db.execute("SELECT url, status FROM subscriptions WHERE owner = ?",
                              (subscription.owner,)).fetchall()
            if (subscription.url, "active") in rows:  # a disabled one (410) may be subscribed again
                raise Conflict(f"{subscription.url} is already subscribed")
            if limit is not None and len(rows) >= limit:
                raise Conflict(f"at most {limit} subscriptions per token")
            db.execute("INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?)", _subscription_row(subscription))

    def subscription(self, id: str) -> Subscription | None:
        with self._read() as db:
            row = db.execute("SELECT record FROM subscriptions WHERE id = ?", (id,)).fetchone()
        return Subscription.from_json(row[0]) if row else None

    def subscriptions(self, owner: str | None = None) -> list[Subscription]:
        with self._read() as db:
            if owner is None:
                rows = db.execute("SELECT record FROM subscriptions").fetchall()
            else:
                rows = db.execute("SELECT record FROM subscriptions WHERE owner = ?", (owner,)).fetchall()
        return sorted((Subscription.from_json(r[0]) for r in rows), key=lambda s: (s.created, s.id))

    def save_subscription(self, subscription: Subscription) -> None:
        with self._tx(durable=True) as db:
            db.execute("UPDATE subscriptions SET url = ?, status = ?, record = ? WHERE id = ?",
                       (subscription.url, subscription.status, subscription.to_json(), subscription.id))

    def remove_subscription(self, id: str) -> bool:
        with self._tx(durable=True) as db:
            if db.execute("DELETE FROM subscriptions WHERE id = ?", (id,)).rowcount == 0:
                return False
            db.execute("UPDATE deliveries SET status = ?, next_at = NULL WHERE subscription = ? AND status = ?",
                       (CANCELLED, id, PENDING))
            db.execute("DELETE FROM leases WHERE subscription = ?", (id,))
            db.execute("DELETE FROM failing WHERE subscription = ?", (id,))
        return True

    # derivation

    def seen(self) -> tuple[str | None, int]:
        with self._read() as db:
            meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('source', 'generation')").fetchall())
        return meta.get("source"), int(meta.get("generation", 0))

    def seen_source(self) -> str | None:
        return self.seen()[0]

    def derive(self, source: str, planner: Planner, now: float) -> list[Event]:
        with self._tx(durable=True) as db:
            seen = db.execute("SELECT value FROM meta WHERE key = 'source'").fetchone()
            if seen and seen[0] == source:
                return []  # another process derived this dist already
            previous = {key: Record.from_json(raw) for key, raw in db.execute("SELECT key, record FROM snapshot")}
            plan = planner(previous, seen is None)
            db.executemany("INSERT OR REPLACE INTO snapshot VALUES (?, ?)",
                           [(key, record.to_json()) for key, record in plan.records.items()])
            db.execute("INSERT OR REPLACE INTO meta VALUES ('source', ?)", (source,))
            db.execute("INSERT INTO meta VALUES ('generation', 1) "
                       "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")
            subscribers = [Subscription.from_json(r[0]) for r in
                           db.execute("SELECT record FROM subscriptions WHERE status = 'active'")]
            events = []
            for draft in plan.events:
                cursor = db.execute("INSERT OR IGNORE INTO events (id, type, created, body) VALUES (?, ?, ?, ?)",
                                    (draft.id, draft.type, now, draft.body))
                if cursor.rowcount == 0:
                    continue  # the same change was queued before
                seq = cursor.lastrowid
                assert seq is not None
                events.append(Event(draft.id, draft.type, now, draft.body, seq))
                db.executemany("INSERT INTO deliveries (subscription, event_seq, status, next_at, updated) "
                               "VALUES (?, ?, ?, ?, ?)",
                               [(s.id, seq, PENDING, now, now) for s in subscribers if s.wants(draft.type)])
        return events

    # the outbox

    def claim(self, owner: str, now: float, *, lease: float = LEASE, batch: int = 50) -> Claim | None:
        with self._read() as db:  # most polls find nothing: answer those without taking the write lock
            if db.execute(CLAIMABLE, {"now": now}).fetchone() is None:
                return None
        with self._tx() as db:
            row = db.execute(CLAIMABLE, {"now": now}).fetchone()
            if row is None:
                return None
            sid = row[0]
            record = db.execute("SELECT record FROM subscriptions WHERE id = ?", (sid,)).fetchone()
            subscription = Subscription.from_json(record[0]) if record else None
            if subscription is None or not subscription.active:  # removed or disabled meanwhile
                db.execute("UPDATE deliveries SET status = ?, next_at = NULL, updated = ? "
                           "WHERE subscription = ? AND status = ?", (CANCELLED, now, sid, PENDING))
                return None
            db.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (sid, owner, now + lease))
            rows = db.execute(
                "SELECT e.id, e.type, e.created, e.body, e.seq, d.attempts FROM deliveries d "
                "JOIN events e ON e.seq = d.event_seq WHERE d.subscription = ? AND d.status = 'pending' "
                "AND d.next_at <= ? ORDER BY d.event_seq LIMIT ?", (sid, now, batch)).fetchall()
        return Claim(subscription, owner, [Due(Event(r[0], r[1], r[2], bytes(r[3]), r[4]), r[5]) for r in rows])

    def record(self, claim: Claim, due: Due, attempt: Attempt, next_at: float | None, now: float, *,
               lease: float = LEASE) -> bool:
        sid = claim.subscription.id
        with self._tx() as db:
            if db.execute("UPDATE leases SET until = ? WHERE subscription = ? AND owner = ?",
                          (now + lease, sid, claim.owner)).rowcount == 0:
                return False  # the lease ran out and another worker has it
            status = status_after(attempt, next_at)
            db.execute("UPDATE deliveries SET status = ?, attempts = attempts + 1, next_at = ?, last_status = ?, "
                       "last_error = ?, updated = ? WHERE subscription = ? AND event_seq = ? AND status = ?",
                       (status, next_at if status == PENDING else None, attempt.status, attempt.error, now, sid,
                        due.event.seq, PENDING))
            if attempt.delivered:
                db.execute("DELETE FROM failing WHERE subscription = ?", (sid,))
            else:
                db.execute("INSERT INTO failing VALUES (?, 1) ON CONFLICT (subscription) "
                           "DO UPDATE SET failures = failures + 1", (sid,))
            if attempt.gone:
                self._disable(db, claim.subscription, now)
        return True

    def _disable(self, db: sqlite3.Connection, subscription: Subscription, now: float) -> None:
        disabled = subscription.disabled(f"the endpoint answered 410 Gone on {iso(now)}")
        db.execute("UPDATE subscriptions SET status = ?, record = ? WHERE id = ?",
                   (disabled.status, disabled.to_json(), subscription.id))
        db.execute("UPDATE deliveries SET status = ?, next_at = NULL, last_error = ?, updated = ? "
                   "WHERE subscription = ? AND status = ?",
                   (FAILED, "not sent: the subscription was disabled (410 Gone)", now, subscription.id, PENDING))

    def release(self, claim: Claim) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM leases WHERE subscription = ? AND owner = ?", (claim.subscription.id, claim.owner))

    # for the operator

    def deliveries(self, *, failed_only: bool = False, limit: int = 50) -> list[DeliveryView]:
        where = "WHERE d.status = 'failed'" if failed_only else ""
        with self._read() as db:
            rows = db.execute(
                "SELECT e.id, e.type, d.subscription, d.status, d.attempts, d.next_at, d.last_status, d.last_error, "
                f"d.updated FROM deliveries d JOIN events e ON e.seq = d.event_seq {where} "
                "ORDER BY d.updated DESC, e.seq DESC LIMIT ?", (limit,)).fetchall()
        return [DeliveryView(*row) for row in rows]

    def requeue(self, event_id: str, subscription_id: str | None, now: float) -> int:
        with self._tx(durable=True) as db:
            row = db.execute("SELECT seq FROM events WHERE id = ?", (event_id,)).fetchone()
            if row is None:
                raise NotFound(f"no event {event_id} in the store")
            query = ("UPDATE deliveries SET status = ?, attempts = 0, next_at = ?, last_status = NULL, "
                     "last_error = NULL, updated = ? WHERE event_seq = ? AND subscription IN "
                     "(SELECT id FROM subscriptions WHERE status = 'active')")
            params: tuple[object, ...] = (PENDING, now, now, row[0])
            if subscription_id is not None:
                query += " AND subscription = ?"
                params += (subscription_id,)
            return db.execute(query, params).rowcount

    def add_sent(self, event: Event, subscription_id: str, attempt: Attempt, now: float) -> None:
        with self._tx() as db:
            seq = db.execute("INSERT INTO events (id, type, created, body) VALUES (?, ?, ?, ?)",
                             (event.id, event.type, event.created, event.body)).lastrowid
            db.execute("INSERT INTO deliveries VALUES (?, ?, ?, 1, NULL, ?, ?, ?)",
                       (subscription_id, seq, DELIVERED if attempt.delivered else FAILED, attempt.status,
                        attempt.error, now))

    def stats(self, now: float) -> Stats:
        with self._read() as db:
            total, disabled = db.execute("SELECT count(*), coalesce(sum(status != 'active'), 0) "
                                         "FROM subscriptions").fetchone()
            failing = db.execute("SELECT count(*) FROM failing f JOIN subscriptions s ON s.id = f.subscription "
                                 "WHERE s.status = 'active'").fetchone()[0]
            pending, oldest = db.execute("SELECT count(*), min(next_at) FROM deliveries "
                                         "WHERE status = 'pending'").fetchone()
            failed = db.execute("SELECT count(*) FROM deliveries WHERE status = ? AND updated >= ?",
                                (FAILED, now - 86400)).fetchone()[0]
        return Stats(total, disabled, failing, pending, oldest, failed)

    def prune(self, before: float) -> int:
        with self._tx() as db:
            gone = db.execute("DELETE FROM deliveries WHERE status != ? AND updated < ?", (PENDING, before)).rowcount
            db.execute("DELETE FROM events WHERE created < ? AND NOT EXISTS "
                       "(SELECT 1 FROM deliveries d WHERE d.event_seq = events.seq)", (before,))
        return gone

    def close(self) -> None:
        self._finalizer()


def _subscription_row(s: Subscription) -> tuple[str, str, str, str, bytes]:
    return s.id, s.owner, s.url, s.status, s.to_json()


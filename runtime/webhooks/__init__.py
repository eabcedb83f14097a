"""Webhooks (beta): subscriptions, events derived from dist changes, a durable outbox, signed deliveries.

One idea per module:

- `model`: the records (tokens, subscriptions, events, deliveries) and how ids and secrets are made;
- `derive`: a loaded dist as a snapshot, and the events between two snapshots (pure);
- `store`, `sqlite_store`, `redis_store`: where the state lives (SQLite by default, Redis when shared);
- `schedule`: the retry schedule; `signing`: the signature headers;
- `destinations`: which URLs and addresses may receive deliveries (the SSRF guard);
- `sender`: one delivery attempt over HTTP; `worker`: the loop that claims and delivers;
- `routes`: the `/webhooks` endpoints; `facility`: the wiring into the runtime; `operator`: the CLI's side.
"""

"""The webhook event types: one description read by the runtime (what it derives and accepts in a
subscription), the JSON Schemas and the OpenAPI document (its top-level `webhooks`)."""

from __future__ import annotations

EVENT_TYPES: dict[str, str] = {
    "entry.published": "A new entry went online (or an entry that had been removed came back).",
    "entry.updated": "An entry's content changed; `changes` names the field paths, e.g. `meaning`, `faq[1].answer`.",
    "category.updated": "The taxonomy changed: a category's own fields, or which names it holds (`added`, "
                        "`removed`); `action` says whether it was created, edited or deleted.",
}

# What a subscriber's URL may look like: https, a host name (not an IP address) in lowercase or uppercase ASCII
# (an internationalised name in its xn-- form), an optional port from 1 to 65535, a path and query of URL
# characters, no credentials, no fragment. The JSON Schema and the runtime's check use this one pattern;
# the runtime then checks every address the name resolves to (runtime/webhooks/destinations.py).
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_TOP = r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_PATH = r"(?:[A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*"
SUBSCRIBER_URL = rf"^https://(?:{_LABEL}\.)+{_TOP}\.?(?::{_PORT})?(?:[/?]{_PATH})?$"
MAX_URL = 2048

"""The signature headers of a delivery, two ways over the same secret.

- `X-Petname-Signature: t=<unix>,v1=<hex>`: HMAC-SHA256 over `<t>.<raw body>`, keyed with the secret
  exactly as issued (the whole `whsec_…` string as UTF-8), as the contract describes (Stripe's scheme).
- Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`: HMAC-SHA256
  over `<id>.<t>.<raw body>`, keyed with the base64-decoded part after `whsec_`, so the
  `standardwebhooks` libraries verify deliveries as they are.

During a rotation both secrets sign: two `v1=` values, two `v1,` signatures; a verifier accepts the
delivery if any one matches.
"""

from __future__ import annotations

import base64
import hashlib
import hmac


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def standard_key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix("whsec_"))


def signature_headers(event_id: str, body: bytes, secrets: list[str], timestamp: int) -> dict[str, str]:
    """The signature headers for one attempt at `timestamp` (whole seconds since the epoch)."""
    petname = f"{timestamp}.".encode() + body
    standard = f"{event_id}.{timestamp}.".encode() + body
    return {
        "X-Petname-Signature": ",".join([f"t={timestamp}", *(f"v1={_hmac(s.encode(), petname).hex()}"
                                                              for s in secrets)]),
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(f"v1,{base64.b64encode(_hmac(standard_key(s), standard)).decode()}"
                                      for s in secrets),
    }

"""Step 5 of runtime/clients/botauth.py: an RFC 9421 signature checked with the http-message-signatures
library and Ed25519 from `cryptography`.

Apart from botauth so that the runtime imports both libraries (about 50 ms) when the first signed
request arrives, not while it starts.
"""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from http_message_signatures.exceptions import HTTPMessageSignaturesException

from runtime.clients.botauth import CLOCK_SKEW, TAG


class Verifier(HTTPMessageVerifier):
    max_clock_skew = datetime.timedelta(seconds=CLOCK_SKEW)

    def validate_created_and_expires(self, sig_input: Any, max_age: Any = None) -> None:
        """Already checked, with the reason for each failure, by `BotVerifier._check`."""


class OneKey(HTTPSignatureKeyResolver):
    """The key `_check` found for the signature's keyid: verification uses that one, whatever a reload does."""

    def __init__(self, key_id: str, key: Ed25519PublicKey) -> None:
        self.key_id, self.key = key_id, key

    def resolve_public_key(self, key_id: str) -> Ed25519PublicKey | None:
        return self.key if key_id == self.key_id else None


@lru_cache(maxsize=1024)
def public_key(raw: bytes) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(raw)


def verifies(request: Any, *, key_id: str, raw_key: bytes, label: str) -> bool:
    """Whether the signature `label` of `request` verifies with the Ed25519 public key `raw_key`."""
    try:
        verifier = Verifier(signature_algorithm=algorithms.ED25519, key_resolver=OneKey(key_id, public_key(raw_key)))
        verifier.verify(request, expect_tag=TAG, expect_label=label, max_age=None)
    except HTTPMessageSignaturesException:
        return False
    return True

"""The client behind Netlify's proxy: its address, believed only on a request Netlify signed.

Netlify's proxy connects from its own addresses, so on proxied routes the socket peer is an edge server that many
clients share. With signed proxy rules (`Sign=PETGEN_NETLIFY_SIGNING_SECRET` in `_redirects`, petgen/emit/redirects.py)
Netlify adds to each proxied request `X-Nf-Sign`, a JWT (JWS compact form, HS256) signed with that secret, and
it sends the client's address in `X-Nf-Client-Connection-Ip`. Anyone can send both headers; only Netlify (and
this runtime) know the secret. So the address counts only when the token verifies:

- the signature, HS256 only (no `none`, no other algorithm: the header's `alg` cannot choose), compared in
  constant time (PyJWT uses `hmac.compare_digest`);
- `iss` must be `netlify`; `exp` and `nbf`, when present, must hold (30 s of clock skew allowed); an `iat` in
  the future is refused too. Netlify's tokens expire 5 minutes after they are made;
- the other claims (`netlify_id`, `site_url`, `deploy_context`) are not checked: the secret already binds
  the token to the sites the operator gave it to, and a deploy preview's clients deserve their own budgets too;
- the address must be one IP address (IPv4 or IPv6, no port, no list).

Anything else (no token, a forged, expired or foreign one, a junk address) is not an error: the request is
keyed as before, by the socket peer or a trusted proxy's X-Forwarded-For (runtime/clients/ratelimit.py).
"""

from __future__ import annotations

import ipaddress
from typing import Any

SIGN_HEADER = b"x-nf-sign"
CLIENT_HEADER = b"x-nf-client-connection-ip"
ISSUER = "netlify"
ALGORITHMS = ["HS256"]  # what Netlify signs with; never from the token's own header
LEEWAY = 30  # seconds of clock skew between Netlify and this host
MAX_TOKEN = 4096  # bytes; Netlify's tokens are a few hundred
MAX_ADDRESS = 64  # the longest IPv6 text with a zone is shorter

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class SignedProxy:
    """Verifies Netlify's signature on a proxied request and yields the client address it vouches for."""

    def __init__(self, secret: str) -> None:
        import jwt  # PyJWT and cryptography: only when a signing secret is configured

        self._key = secret.encode()
        self._refusals = (jwt.PyJWTError, ValueError, TypeError)
        self._jwt = jwt.PyJWT({"verify_aud": False})  # Netlify's tokens name no audience

    def client_address(self, scope: dict[str, Any]) -> IPAddress | None:
        """The address in X-Nf-Client-Connection-Ip when X-Nf-Sign verifies, else None."""
        token = address = None
        for name, value in scope["headers"]:
            if name == SIGN_HEADER:
                token = value if token is None else b""  # two tokens: believe neither
            elif name == CLIENT_HEADER:
                address = value if address is None else b""  # two addresses: which one?
        if not token or not address or len(token) > MAX_TOKEN or len(address) > MAX_ADDRESS:
            return None
        try:
            ip = ipaddress.ip_address(address.decode("ascii").strip())
        except (UnicodeDecodeError, ValueError):
            return None
        return ip if self.verifies(token) else None

    def verifies(self, token: bytes) -> bool:
        """Whether `token` is a JWT that Netlify signed with our secret and that holds now."""
        try:
            claims = self._jwt.decode(token, self._key, algorithms=ALGORITHMS, issuer=ISSUER, leeway=LEEWAY,
                                      options={"require": ["iss"]})
        except self._refusals:  # PyJWTError covers every refusal; the rest: junk input
            return False
        return isinstance(claims, dict)

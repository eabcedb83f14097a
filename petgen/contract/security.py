"""The security headers of every response, in one place: the build writes them into `_headers` and
every static route of the manifest, the runtime adds them to whatever it computes (runtime/http/security.py).

One set for every response, HTML or not: the policy allows nothing a page does not use, so it is
as strict on the index as on a JSON document (where browsers ignore it), and the CDN can send it
with one `/*` rule, also on its own 404 page. See docs/security.md for each choice.
"""

from __future__ import annotations

# Scripts only from the site itself: the search script (`/assets/search.<hash>.js`), which fetches the
# static search index (and /api/search) from the same origin, hence `connect-src 'self'`. No inline
# script: the JSON-LD block of a page (`<script type="application/ld+json">`) is a data block, which
# browsers never execute and which CSP therefore does not govern (HTML, "prepare the script element":
# a script whose type is not JavaScript is left alone before the CSP check); it needs no hash. Styles
# and images only from the site itself (images also as data: URLs), no <base>, forms only to the
# site, no framing.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
                           "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

SECURITY_HEADERS: dict[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate CSP 2
}

# As ASGI sends them: lowercase names, bytes.
RAW_SECURITY_HEADERS: list[tuple[bytes, bytes]] = [(name.lower().encode(), value.encode())
                                                   for name, value in SECURITY_HEADERS.items()]

# CORS: the response headers a browser script may read, the same on the CDN (`_headers`) and from the
# runtime (runtime/http/cors.py), and the request headers a preflight allows.
CORS_EXPOSED = ("ETag, Link, Location, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, "
                "RateLimit, RateLimit-Policy, X-Petname-Bot, X-Request-Id, Mcp-Session-Id")
CORS_ALLOWED_HEADERS = ("Accept, Authorization, Content-Type, If-None-Match, Prefer, prefer.streaming, Last-Event-ID, "
                        "Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Signature, Signature-Input, "
                        "Signature-Agent, X-Request-Id")


# The one variable that holds the secret of signed proxies: on Netlify (which signs with it) and on the runtime host
# (which verifies); docs/deploy.md#client-ip-behind-netlify.
SIGNING_SECRET_ENV = "PETGEN_NETLIFY_SIGNING_SECRET"
MIN_SECRET_BYTES = 32  # HS256's key is a 256-bit HMAC key: RFC 7518 §3.2 asks for at least that many bytes


def parse_signing_secret(value: str | None) -> str | None:
    """The secret of signed proxies, or None for none (unset or empty); raise ValueError for one too short to
    be a secret. Surrounding whitespace is no part of it (a pasted newline would differ from Netlify's copy)."""
    if value is None or not value.strip():
        return None
    secret = value.strip()
    if len(secret.encode()) < MIN_SECRET_BYTES:
        raise ValueError(f"{SIGNING_SECRET_ENV} must be at least {MIN_SECRET_BYTES} bytes long, not "
                         f"{len(secret.encode())} (make one with `openssl rand -hex 32`)")
    return secret

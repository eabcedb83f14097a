"""Netlify's signed proxy requests, against a live runtime with a real HTTP client (runtime/clients/netlify.py).

The tokens are made here by hand (base64url + HMAC-SHA256, RFC 7515), not with the library the runtime verifies
with, so a bug shared by signer and verifier cannot hide; tests/test_netlify.py has the Netlify CLI sign them.
Every client binds its own loopback address (127.0.0.x), so each case starts from fresh budgets: the socket peer,
which stands for one Netlify edge server, and the client addresses it names. The limit is one request per minute.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from petgen.build.pipeline import build
from petgen.cli.main import cli
from petgen.emit.redirects import SIGNING_SECRET_ENV
from runtime.settings import Settings
from tests.conftest import write_site
from tests.runtime.test_server import running_server

SECRET = "s3cr3t-shared-by-netlify-and-the-runtime-0123456789"  # ≥ 32 bytes
OTHER_SECRET = "an0ther-secret-that-netlify-does-not-sign-with-xyz"
_peers = itertools.count(10)
_clients = itertools.count(1)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(claims: dict[str, Any] | None = None, *, secret: str = SECRET, alg: str = "HS256",
          header: dict[str, Any] | None = None) -> str:
    """A JWS in compact form as Netlify makes it: HS256 over `header.payload`, with Netlify's claims by default."""
    payload = b64url(json.dumps(netlify_claims() if claims is None else claims).encode())
    signing_input = f"{b64url(json.dumps(header or {'alg': alg, 'typ': 'JWT'}).encode())}.{payload}"
    digest = {"HS256": hashlib.sha256, "HS512": hashlib.sha512}.get(alg)
    signature = hmac.new(secret.encode(), signing_input.encode(), digest).digest() if digest else b""
    return f"{signing_input}.{b64url(signature)}"


def netlify_claims(**changes: Any) -> dict[str, Any]:
    """What Netlify's signer puts in (the CLI's, deploy/node_modules/netlify-cli/dist/utils/sign-redirect.js):
    the site, its URL and deploy context, issuer `netlify`, valid for 5 minutes; `changes` (None drops a claim)."""
    now = int(time.time())
    base = {"deploy_context": "production", "netlify_id": "site-id", "site_url": "https://kosenamen.example",
            "iss": "netlify", "iat": now, "exp": now + 300}
    return {k: v for k, v in {**base, **changes}.items() if v is not None}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("signed")
    build(write_site(root / "content"), root / "dist", base_url="http://127.0.0.1")
    return root / "dist"


@pytest.fixture(scope="module")
def server(dist: Path) -> Iterator[str]:
    with running_server(dist, rate_limit=1, netlify_signing_secret=SECRET) as base:
        yield base


def edge(base: str) -> httpx.Client:
    """A client on a loopback address of its own: one Netlify edge server, as the runtime's socket sees it."""
    return httpx.Client(base_url=base, transport=httpx.HTTPTransport(local_address=f"127.0.0.{next(_peers)}"),
                        timeout=10)


def client_address() -> str:
    return f"198.51.100.{next(_clients)}"  # TEST-NET-2: a client on the internet


def get(client: httpx.Client, headers: Any = None) -> httpx.Response:
    response = client.get("/api/status", headers=headers)
    assert response.status_code in (200, 429), response.text  # never an error, whatever the headers say
    return response


def signed(address: str, **kwargs: Any) -> dict[str, str]:
    return {"x-nf-sign": token(**kwargs), "x-nf-client-connection-ip": address}


def test_each_client_behind_one_edge_gets_its_own_budget(server: str) -> None:
    alice, bob = client_address(), client_address()
    with edge(server) as netlify:
        first = get(netlify, signed(alice))
        assert first.status_code == 200 and first.headers["x-ratelimit-remaining"] == "0"
        assert get(netlify, signed(bob)).status_code == 200  # another client through the same edge
        again = get(netlify, signed(alice))
        assert again.status_code == 429 and int(again.headers["retry-after"]) >= 1  # alice's budget is spent
        assert get(netlify, signed(bob)).status_code == 429
        assert get(netlify).status_code == 200  # the edge's own budget was never touched
    with edge(server) as other_edge:  # alice is alice through any edge server
        assert get(other_edge, signed(alice)).status_code == 429


def test_ipv6_clients_are_keyed_by_their_64(server: str) -> None:
    with edge(server) as netlify:
        assert get(netlify, signed("2001:db8:7:1::1")).status_code == 200
        assert get(netlify, signed("2001:db8:7:1:ffff:ffff:ffff:ffff")).status_code == 429  # the same /64
        assert get(netlify, signed("2001:db8:7:2::1")).status_code == 200  # the next /64
        assert get(netlify, signed("203.0.113.77")).status_code == 200
        assert get(netlify, signed("::ffff:203.0.113.77")).status_code == 429  # IPv4-mapped: the IPv4 client


def test_one_token_vouches_for_whatever_address_comes_with_it(server: str) -> None:
    """The token binds no request: it says Netlify sent it, and the address is Netlify's word (docs/deploy.md says
    what follows: never let a token leave the runtime)."""
    shared = token()
    with edge(server) as netlify:
        for address in (client_address(), client_address()):
            assert get(netlify, {"x-nf-sign": shared, "x-nf-client-connection-ip": address}).status_code == 200


def tampered(part: int, replacement: str) -> str:
    """A valid token with one of its three parts replaced after signing."""
    parts = token().split(".")
    parts[part] = replacement
    return ".".join(parts)


def ago(seconds: int) -> int:
    return int(time.time()) - seconds


# Tokens that must not count (None: no X-Nf-Sign header); each goes with a valid client address.
FALLBACKS: dict[str, Any] = {
    "no token": lambda: None,
    "empty token": lambda: "",
    "junk token": lambda: "not.a.jwt",
    "wrong secret": lambda: token(secret=OTHER_SECRET),
    "claims changed after signing": lambda: tampered(1, b64url(json.dumps(netlify_claims(exp=2**40)).encode())),
    "signature altered": lambda: tampered(2, b64url(b"\0" * 32)),
    "signature missing": lambda: tampered(2, ""),
    "expired": lambda: token(netlify_claims(iat=ago(900), exp=ago(600))),
    "not yet valid": lambda: token(netlify_claims(nbf=ago(-600))),
    "issued in the future": lambda: token(netlify_claims(iat=ago(-600))),
    "another issuer": lambda: token(netlify_claims(iss="evil")),
    "no issuer": lambda: token(netlify_claims(iss=None)),
    "alg none": lambda: token(alg="none"),
    "alg HS512": lambda: token(alg="HS512"),
    "two tokens": lambda: [token(), token(secret=OTHER_SECRET)],
}
BAD_ADDRESSES = ["", "not-an-ip", "{a}, 198.51.100.250", "{a}:443", "[{a}]", "{a}/24", "{a}\u00a0"]


@pytest.mark.parametrize("case", FALLBACKS)
def test_an_unverified_token_keys_by_the_peer(server: str, case: str) -> None:
    """The request counts against the edge's (the peer's) budget, never the named client's; no error."""
    named, sent = client_address(), FALLBACKS[case]()
    tokens = [] if sent is None else sent if isinstance(sent, list) else [sent]
    with edge(server) as netlify:
        headers = [*(("x-nf-sign", value) for value in tokens), ("x-nf-client-connection-ip", named)]
        assert get(netlify, headers).status_code == 200
        assert get(netlify).status_code == 429  # the peer's budget: spent by the unverified request
    with edge(server) as honest:
        assert get(honest, signed(named)).status_code == 200  # the named client's budget: untouched


@pytest.mark.parametrize("template", BAD_ADDRESSES)
def test_a_signed_request_with_a_junk_address_keys_by_the_peer(server: str, template: str) -> None:
    named = client_address()
    with edge(server) as netlify:
        headers = [("x-nf-sign", token()), ("x-nf-client-connection-ip", template.format(a=named).encode("latin-1"))]
        assert get(netlify, headers).status_code == 200
        assert get(netlify).status_code == 429
    with edge(server) as honest:
        assert get(honest, signed(named)).status_code == 200


def test_two_addresses_key_by_the_peer(server: str) -> None:
    first, second = client_address(), client_address()
    with edge(server) as netlify:
        headers = [("x-nf-sign", token()), ("x-nf-client-connection-ip", first), ("x-nf-client-connection-ip", second)]
        assert get(netlify, headers).status_code == 200
        assert get(netlify).status_code == 429


def test_without_the_setting_the_headers_mean_nothing(dist: Path) -> None:
    with running_server(dist, rate_limit=1) as base, edge(base) as netlify:
        assert get(netlify, signed(client_address())).status_code == 200
        assert get(netlify, signed(client_address())).status_code == 429  # both counted against the peer


def test_the_setting_from_the_environment_and_the_command_line(tmp_path: Path) -> None:
    assert Settings.from_env({SIGNING_SECRET_ENV: f"  {SECRET}\n"}).netlify_signing_secret == SECRET
    assert Settings.from_env({SIGNING_SECRET_ENV: ""}).netlify_signing_secret is None
    assert SECRET not in repr(Settings(netlify_signing_secret=SECRET))  # never in a log line
    with pytest.raises(ValueError, match=f"{SIGNING_SECRET_ENV} must be at least 32 bytes long, not 5"):
        Settings.from_env({SIGNING_SECRET_ENV: "short"})
    result = CliRunner().invoke(cli, ["serve", "--dist", str(tmp_path / "dist"), "--content", str(tmp_path)],
                                env={SIGNING_SECRET_ENV: "x" * 31})
    assert result.exit_code == 2
    assert "Invalid value for '--netlify-signing-secret': PETGEN_NETLIFY_SIGNING_SECRET must be at least 32" \
        in result.output
    assert not (tmp_path / "dist").exists()  # refused before building

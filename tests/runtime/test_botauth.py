"""Web Bot Auth: a real signer (docs/bots.md's client, the http-message-signatures library) against a live
server. A verified bot has its own quota; every kind of failure falls back to the per-IP budget and says why."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from petgen.content.bots import encode_key, jwk_thumbprint
from runtime.clients.botauth import REASONS, BotVerifier
from runtime.clients.nonces import NonceCache
from runtime.settings import parse_networks
from tests.conftest import BASE_URL
from tests.runtime.test_server import running_server
from tests.signing import SIGNER, SignedBot, fresh_window, make_bot, site_with_bot

NOW = dt.datetime.now  # the signer's clock is the real one, as a bot's is
UTC = dt.UTC


def at(seconds: float) -> dt.datetime:
    return NOW(UTC) + dt.timedelta(seconds=seconds)


def unregistered() -> SignedBot:
    key = Ed25519PrivateKey.generate()
    x = encode_key(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    return SignedBot("Nobody", jwk_thumbprint(x), key)


def damaged(headers: dict[str, str]) -> dict[str, str]:
    """The signature's bytes with one base64 character changed."""
    value = headers["Signature"]
    i = value.index(":") + 5
    return {**headers, "Signature": value[:i] + ("A" if value[i] != "A" else "B") + value[i + 1:]}


def edited(headers: dict[str, str], name: str, old: str, new: str) -> dict[str, str]:
    assert old in headers[name]
    return {**headers, name: headers[name].replace(old, new)}


# How each failure is provoked: (reason, a function of (bot, url) giving the request's headers, the path asked for)
FAILURES: dict[str, tuple[str, Callable[[SignedBot, str], dict[str, str]], str]] = {
    "unknown key": ("unknown_key", lambda bot, url: unregistered().headers(url), "/api/names/apfel"),
    "bad signature": ("bad_signature", lambda bot, url: damaged(bot.headers(url)), "/api/names/apfel"),
    "covered path changed": ("bad_signature", lambda bot, url: bot.headers(
        url, agent=None, covered_component_ids=("@authority", "@path")), "/api/names/schnucki"),  # signed: …/apfel
    "covered agent changed": ("bad_signature", lambda bot, url: edited(
        bot.headers(url), "Signature-Agent", "bot.example", "evil.example"), "/api/names/apfel"),
    "expired": ("expired", lambda bot, url: bot.headers(url, created=at(-120), expires=at(-60)), "/api/names/apfel"),
    "created in the future": ("not_yet_valid", lambda bot, url: bot.headers(url, created=at(60), expires=at(120)),
                              "/api/names/apfel"),
    "validity too long": ("validity_too_long", lambda bot, url: bot.headers(url, validity=301), "/api/names/apfel"),
    "wrong tag": ("wrong_tag", lambda bot, url: bot.headers(url, tag="crawler"), "/api/names/apfel"),
    "missing tag": ("wrong_tag", lambda bot, url: bot.headers(url, tag=None), "/api/names/apfel"),
    "authority not covered": ("authority_not_covered", lambda bot, url: bot.headers(
        url, agent=None, covered_component_ids=("@method", "@path")), "/api/names/apfel"),
    "agent not covered": ("signature_agent_not_covered", lambda bot, url: bot.headers(
        url, covered_component_ids=("@authority",)), "/api/names/apfel"),
    "missing expires": ("missing_parameter", lambda bot, url: bot.headers(url, expires=None), "/api/names/apfel"),
    "other algorithm": ("unsupported_algorithm", lambda bot, url: edited(
        bot.headers(url), "Signature-Input", 'alg="ed25519"', 'alg="rsa-pss-sha512"'), "/api/names/apfel"),
    "unparseable input": ("malformed", lambda bot, url: {"Signature-Input": "sig1=(", "Signature": "sig1=:AA==:"},
                          "/api/names/apfel"),
    "signature missing": ("malformed", lambda bot, url: {
        k: v for k, v in bot.headers(url).items() if k != "Signature"}, "/api/names/apfel"),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, SignedBot]]:
    dist, bot = site_with_bot(tmp_path_factory.mktemp("botauth"), quota=600)
    with running_server(dist, rate_limit=60) as base:
        yield base, bot


@pytest.mark.slow
@pytest.mark.parametrize("case", list(FAILURES))
def test_every_failure_falls_back_to_the_ip_budget_with_its_reason(server: tuple[str, SignedBot], case: str) -> None:
    base, bot = server
    reason, make_headers, path = FAILURES[case]
    headers = make_headers(bot, f"{base}/api/names/apfel")
    response = httpx.get(base + path, headers=headers)
    assert response.status_code == 200  # never an error: answered like an anonymous request
    assert response.headers["x-petname-bot"] == f"unverified;reason={reason}"
    assert response.headers["x-ratelimit-limit"] == "60"
    assert response.headers["ratelimit-policy"] == '"per-ip";q=60;w=60'
    assert "X-Petname-Bot" in response.headers["access-control-expose-headers"]


def test_every_reason_is_provoked_and_documented() -> None:
    assert {reason for reason, _, _ in FAILURES.values()} | {"replayed"} == set(REASONS)
    documented = set(re.findall(r"`unverified;reason=(\w+)`", (Path(__file__).parents[2] / "docs" / "bots.md")
                                .read_text(encoding="utf-8")))
    assert documented == set(REASONS)


@pytest.mark.slow
def test_a_verified_bot_goes_beyond_60_and_stops_at_its_own_quota(tmp_path: Path) -> None:
    dist, bot = site_with_bot(tmp_path, quota=70)
    with running_server(dist, rate_limit=60) as base, httpx.Client(base_url=base) as client:
        url = f"{base}/api/names/apfel"
        fresh_window(60)
        for i in range(70):
            response = client.get(url, headers=bot.headers(url))
            assert response.status_code == 200, (i, response.text)
            assert response.headers["x-petname-bot"] == 'verified;name="TestBot"'
            assert response.headers["x-ratelimit-limit"] == "70"
            assert response.headers["x-ratelimit-remaining"] == str(69 - i)
            assert response.headers["ratelimit-policy"] == '"bot";q=70;w=60'
            assert response.headers["ratelimit"].startswith(f'"bot";r={69 - i};t=')
        refused = client.get(url, headers=bot.headers(url))
        assert refused.status_code == 429
        assert refused.headers["x-petname-bot"] == 'verified;name="TestBot"'
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert refused.json()["error"]["code"] == "rate_limited"
        assert refused.json()["error"]["message"] == "Too many requests: the limit is 70 per 60 seconds for this bot."
        anonymous = client.get(url)  # the same IP: its own budget is untouched by the bot's 71 requests
        assert anonymous.status_code == 200 and "x-petname-bot" not in anonymous.headers
        assert (anonymous.headers["x-ratelimit-limit"], anonymous.headers["x-ratelimit-remaining"]) == ("60", "59")


@pytest.mark.slow
def test_a_replayed_nonce_is_caught(server: tuple[str, SignedBot]) -> None:
    base, bot = server
    url = f"{base}/api/names/apfel"
    headers = bot.headers(url)
    first, second = httpx.get(url, headers=headers), httpx.get(url, headers=headers)
    assert first.headers["x-petname-bot"] == 'verified;name="TestBot"'
    assert second.status_code == 200 and second.headers["x-petname-bot"] == "unverified;reason=replayed"
    assert second.headers["ratelimit-policy"] == '"per-ip";q=60;w=60'
    without_nonce = bot.headers(url, nonce=None)  # no nonce: reusable until it expires, as the drafts allow
    assert [httpx.get(url, headers=without_nonce).headers["x-petname-bot"] for _ in range(2)] == [
        'verified;name="TestBot"'] * 2


def test_unsigned_requests_are_not_looked_at(client: TestClient) -> None:
    response = client.get("/api/names/apfel")
    assert "x-petname-bot" not in response.headers


def test_more_components_and_the_legacy_agent_form_verify(tmp_path: Path,
                                                          make_client: Callable[..., TestClient]) -> None:
    dist, bot = site_with_bot(tmp_path, base_url=BASE_URL)
    client = make_client(dist)
    url = f"{BASE_URL}/api/search?q=maus"
    every = bot.headers(url, covered_component_ids=("@method", "@authority", "@target-uri", "@path", "@query",
                                                    '"signature-agent";key="sig1"'))
    for headers in (every, legacy_agent_headers(bot, url)):
        response = client.get(url, headers=headers)
        assert response.headers["x-petname-bot"] == 'verified;name="TestBot"', headers
    posted = bot.headers(f"{BASE_URL}/ask", method="POST", agent=None, covered_component_ids=("@method", "@authority"))
    assert client.post("/ask", json={"query": "maus"}, headers=posted).headers["x-petname-bot"] == \
        'verified;name="TestBot"'
    as_get = client.get("/api/names/apfel", headers=posted)  # signed for POST, sent as GET
    assert as_get.headers["x-petname-bot"] == "unverified;reason=bad_signature"


def legacy_agent_headers(bot: SignedBot, url: str) -> dict[str, str]:
    """The drafts' older form: `Signature-Agent` a plain string, covered as the whole field."""
    message = SIGNER.Message("GET", url, {"Signature-Agent": '"https://bot.example"'})
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519,
                               key_resolver=MappingKeyResolver(private_keys={bot.kid: bot.key}, public_keys={}))
    signer.sign(message, key_id=bot.kid, label="sig1", tag="web-bot-auth", expires=at(60),
                covered_component_ids=("@authority", "signature-agent"))
    return message.headers


def test_the_first_web_bot_auth_signature_that_verifies_counts(tmp_path: Path,
                                                               make_client: Callable[..., TestClient]) -> None:
    dist, bot = site_with_bot(tmp_path, base_url=BASE_URL)
    client = make_client(dist)
    url = f"{BASE_URL}/api/names/apfel"
    good = bot.headers(url, agent=None)
    other = unregistered().headers(url, agent=None)
    both = {"Signature-Input": other["Signature-Input"].replace("sig1=", "sig0=") + ", " + good["Signature-Input"],
            "Signature": other["Signature"].replace("sig1=", "sig0=") + ", " + good["Signature"]}
    assert client.get(url, headers=both).headers["x-petname-bot"] == 'verified;name="TestBot"'
    swapped = {"Signature-Input": other["Signature-Input"] + ", " + good["Signature-Input"].replace("sig1=", "sig2="),
               "Signature": other["Signature"] + ", " + damaged(good)["Signature"].replace("sig1=", "sig2=")}
    assert client.get(url, headers=swapped).headers["x-petname-bot"] == "unverified;reason=unknown_key"  # the first's


def test_a_new_build_brings_new_bots_without_a_restart(content: Path, tmp_path: Path,
                                                       make_client: Callable[..., TestClient]) -> None:
    build(content, tmp_path / "dist", base_url=BASE_URL)
    client = make_client(tmp_path / "dist")
    bot = make_bot(tmp_path, content, "LateBot", quota=99)
    url = f"{BASE_URL}/api/names/apfel"
    assert client.get(url, headers=bot.headers(url)).headers["x-petname-bot"] == "unverified;reason=unknown_key"
    build(content, tmp_path / "dist", base_url=BASE_URL)
    assert client.app.runtime.reload()  # type: ignore[attr-defined]
    response = client.get(url, headers=bot.headers(url))
    assert response.headers["x-petname-bot"] == 'verified;name="LateBot"'
    assert response.headers["x-ratelimit-limit"] == "99"


def scope(url: str, headers: dict[str, str], peer: str = "127.0.0.1", **extra: Any) -> dict[str, Any]:
    parts = httpx.URL(url)
    raw = [(b"host", parts.netloc)] + [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    raw += [(k.encode(), v.encode()) for k, v in extra.items()]
    return {"type": "http", "method": "GET", "scheme": parts.scheme, "path": parts.path, "raw_path": parts.raw_path,
            "query_string": b"", "headers": raw, "client": (peer, 1234)}


@pytest.fixture
def verifier(tmp_path: Path) -> tuple[BotVerifier, SignedBot]:
    import orjson

    dist, bot = site_with_bot(tmp_path, base_url=BASE_URL)
    found = BotVerifier(nonces=NonceCache(), trusted_proxies=parse_networks("10.0.0.0/8"))
    found.load(orjson.loads((dist / "_data" / "index.json").read_bytes())["bots"])
    return found, bot


def test_behind_a_trusted_proxy_the_forwarded_host_is_the_authority(verifier: tuple[BotVerifier, SignedBot]) -> None:
    check, bot = verifier
    headers = bot.headers("https://kosenamen.example/api/names/apfel")
    proxied = scope("http://10.0.0.2:8000/api/names/apfel", headers, peer="10.0.0.1",
                    **{"x-forwarded-host": "kosenamen.example", "x-forwarded-proto": "https"})
    assert asyncio.run(check.verify(proxied))[1] == b'verified;name="TestBot"'
    spoofed = scope("http://10.0.0.2:8000/api/names/apfel", bot.headers("https://kosenamen.example/api/names/apfel"),
                    peer="203.0.113.9", **{"x-forwarded-host": "kosenamen.example"})
    assert asyncio.run(check.verify(spoofed))[1] == b"unverified;reason=bad_signature"  # not from a trusted proxy


@pytest.mark.parametrize("headers", [
    {"Signature-Input": "sig1=(\"@authority\");tag=\"web-bot-auth\"\xff", "Signature": "sig1=:AA==:"},
    {"Signature-Input": "sig1=(\"@authority\");created=?1;expires=2;keyid=\"k\";tag=\"web-bot-auth\"",
     "Signature": "sig1=:AA==:"},
    {"Signature-Input": "sig1=(1 2);created=1;expires=2;keyid=\"k\";tag=\"web-bot-auth\"", "Signature": "sig1=:AA==:"},
    {"Signature-Input": "sig1=(\"@authority\");tag=\"web-bot-auth\"", "Signature": "sig1=\"text\""},
    {"Signature-Input": "sig1=(\"@authority\");tag=\"web-bot-auth\";created=1;expires=2;keyid=\"k\";extra=1",
     "Signature": "sig1=:AA==:"},
    {"Signature": "sig1=:AA==:"},
])
def test_odd_headers_are_malformed_never_an_error(verifier: tuple[BotVerifier, SignedBot],
                                                   headers: dict[str, str]) -> None:
    check, _ = verifier
    request = scope("http://testserver/api/names/apfel", {})
    request["headers"] += [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]
    assert asyncio.run(check.verify(request)) == (None, b"unverified;reason=malformed")


def test_nonces_in_memory_are_bounded_and_expire() -> None:
    now = [1000.0]
    cache = NonceCache(max_nonces=3, clock=lambda: now[0])

    def first(key: str, until: float) -> bool:
        return asyncio.run(cache.first_use(key, until))

    assert [first(k, 1100) for k in "abc"] == [True] * 3
    assert not first("b", 1100)  # a replay
    assert first("d", 1100) and list(cache.seen) == ["b", "c", "d"]  # full: the oldest forgotten
    now[0] = 1101
    assert first("b", 1200)  # expired: a new signature may use it again
    assert list(cache.seen) == ["b"]  # the expired ones were dropped on the way


def test_the_openapi_document_describes_the_signature_headers(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            headers = {p["name"] for p in operation["parameters"] if p["in"] == "header" and not p["required"]}
            assert {"Signature-Input", "Signature", "Signature-Agent"} <= headers, (method, path)
            success = next(code for code in operation["responses"] if code.startswith("2"))  # 200, 201, 204
            ok = operation["responses"][success]["headers"]
            assert ok["X-Petname-Bot"] == {"$ref": "#/components/headers/X-Petname-Bot"}, (method, path)
    assert "unverified;reason=" in document["components"]["headers"]["X-Petname-Bot"]["description"]

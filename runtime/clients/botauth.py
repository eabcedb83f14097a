"""Web Bot Auth: verify a request's HTTP Message Signature (RFC 9421, Ed25519) against the registered bots.

Only a request that carries `Signature-Input` or `Signature` is looked at. Its signature counts when
every rule below holds; the first that does not is the reason it does not count, and the request
is then budgeted like any other, by IP (never refused for it). The answer says which, in
`X-Petname-Bot`: `verified;name="ExampleBot"` or `unverified;reason=expired` (docs/bots.md).

1. The headers parse as Structured Field dictionaries with the same labels (`malformed`), and one
   signature has `tag="web-bot-auth"` (`wrong_tag`).
2. It has `created`, `expires` and `keyid` (`missing_parameter`), no parameter RFC 9421 does not
   define, `alg` only if `"ed25519"` (`unsupported_algorithm`), and `keyid` is the RFC 7638
   thumbprint of a registered key (`unknown_key`).
3. `created` is not in the future and `expires` not in the past, either beyond CLOCK_SKEW seconds
   (`not_yet_valid`, `expired`), and at most MAX_VALIDITY seconds lie between them
   (`validity_too_long`).
4. It covers `@authority` (`authority_not_covered`) and, when the request has a `Signature-Agent`,
   that header or its member for this label (`signature_agent_not_covered`).
5. The signature verifies over the signature base of this very request (`bad_signature`): done by
   the http-message-signatures library, which builds the base per RFC 9421 (component
   serialisation, `@signature-params`) and checks it with Ed25519 from `cryptography`.
6. A `nonce`, if sent, has not been seen with this key before (`replayed`); it is remembered until
   the signature expires, in Redis when the runtime has one (runtime/clients/nonces.py).

`@authority` is the request's `Host` (behind a `--trusted-proxy`, its `X-Forwarded-Host`), so a
signature made for another host does not verify here. The body is not verified: a signature earns a
quota, nothing else, and reading the body would cost every request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import quote

import http_sf

from petgen.content.bots import NAME, decode_key, encode_key, jwk_thumbprint
from runtime.clients.nonces import NonceCache
from runtime.clients.ratelimit import Bot, is_trusted
from runtime.settings import Network

log = logging.getLogger("petgen.runtime")

TAG = "web-bot-auth"
MAX_VALIDITY = 300  # seconds from created to expires: a signature is a bearer token until it expires
CLOCK_SKEW = 5  # seconds by which the bot's clock and ours may disagree
PARAMETERS = frozenset({"alg", "created", "expires", "keyid", "nonce", "tag"})  # RFC 9421 section 2.3
SIGNED = frozenset({b"signature-input", b"signature"})
REASONS = ("malformed", "wrong_tag", "missing_parameter", "unsupported_algorithm", "unknown_key", "not_yet_valid",
           "expired", "validity_too_long", "authority_not_covered", "signature_agent_not_covered", "bad_signature",
           "replayed")


class Unverified(Exception):
    def __init__(self, reason: str) -> None:
        assert reason in REASONS
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class RegisteredKey:
    bot: Bot
    key: bytes  # the raw Ed25519 public key (32 bytes)
    status: bytes  # the X-Petname-Bot value when this key verifies


class Headers:
    """An ASGI header list as the library reads it: (name, value) strings, every field line in order."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self.raw = raw

    def items(self) -> Iterator[tuple[str, str]]:
        return ((name.decode("latin-1"), value.decode("latin-1")) for name, value in self.raw)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(name for name, _ in self.items()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower().encode("latin-1") in {n for n, _ in self.raw}


@dataclass
class Request:
    """The request as the library's verifier reads it: method, absolute URL, headers."""

    method: str
    url: str
    headers: Headers


class BotVerifier:
    def __init__(self, *, nonces: NonceCache | None = None, trusted_proxies: tuple[Network, ...] = (),
                 clock: Callable[[], float] = time.time) -> None:
        self.nonces = nonces or NonceCache()
        self.trusted = trusted_proxies
        self.clock = clock
        self.keys: dict[str, RegisteredKey] = {}  # replaced as a whole on reload (from another thread in dev)

    def load(self, bots: list[dict[str, Any]]) -> None:
        """Use the registered bots of a (re)loaded dist: name, quota and keys (see petgen.content.bots.runtime_bots).

        The build has checked all of it; a hand-edited dist is checked again where it matters: the
        name goes into a header, and a key is known by its own thumbprint, not by the `kid` written
        beside it."""
        keys: dict[str, RegisteredKey] = {}
        for entry in bots:
            if not NAME.fullmatch(str(entry.get("name"))) or type(entry.get("quota")) is not int:
                log.warning("bot %r in the build has an invalid name or quota; ignored", entry.get("name"))
                continue
            bot = Bot(entry["name"], entry["quota"])
            status = f'verified;name="{bot.name}"'.encode()
            for key in entry["keys"]:
                raw = decode_key(key.get("x"))
                if raw is None:
                    log.warning("bot %s: key %s is not an Ed25519 public key; ignored", bot.name, key.get("kid"))
                    continue
                keys[jwk_thumbprint(encode_key(raw))] = RegisteredKey(bot, raw,
                                                                      status)
        self.keys = keys

    @staticmethod
    def signed(scope: dict[str, Any]) -> bool:
        """Whether the request carries a signature to look at (the per-request cost for everyone else)."""
        for name, _ in scope["headers"]:
            if name in SIGNED:
                return True
        return False

    async def verify(self, scope: dict[str, Any]) -> tuple[Bot | None, bytes]:
        """(the bot, `verified;name=…`) when the signature counts, else (None, `unverified;reason=…`)."""
        try:
            return await self._verify(scope)
        except Unverified as failure:
            return None, b"unverified;reason=" + failure.reason.encode()
        except Exception:  # a fault here must cost the bot its quota, never the request its answer
            log.exception("verifying a bot signature failed unexpectedly; treated as unverified")
            return None, b"unverified;reason=malformed"

    async def _verify(self, scope: dict[str, Any]) -> tuple[Bot | None, bytes]:
        fields = field_values(scope["headers"])
        try:
            # label -> (members, parameters); a signature member is (bytes, parameters)
            inputs = cast(dict[str, Any], http_sf.parse(fields.get(b"signature-input", b""), tltype="dictionary"))
            signatures = cast(dict[str, Any], http_sf.parse(fields.get(b"signature", b""), tltype="dictionary"))
        except ValueError:
            raise Unverified("malformed") from None
        if not inputs or inputs.keys() != signatures.keys():
            raise Unverified("malformed")
        labels = [label for label, (members, params) in inputs.items()
                  if isinstance(members, list) and type(params.get("tag")) is str and params["tag"] == TAG]
        if not labels:
            raise Unverified("wrong_tag")
        failure: Unverified | None = None
        for label in labels:  # a request may carry several Web Bot Auth signatures: the first that counts
            try:
                return await self._verify_one(scope, label, inputs[label], signatures[label], fields)
            except Unverified as exc:
                failure = failure or exc
        assert failure is not None
        raise failure

    async def _verify_one(self, scope: dict[str, Any], label: str, signature_input: Any, signature: Any,
                          fields: dict[bytes, bytes]) -> tuple[Bot, bytes]:
        members, params = signature_input
        registered, expires = self._check(label, members, params, signature, b"signature-agent" in fields)
        request = Request(scope["method"], self._url(scope, fields), Headers(scope["headers"]))
        from runtime.clients.botsign import verifies  # the signature libraries: at the first signed request

        if not verifies(request, key_id=params["keyid"], raw_key=registered.key, label=label):
            raise Unverified("bad_signature")
        nonce = params.get("nonce")
        if nonce is not None and not await self.nonces.first_use(f"{params['keyid']}:{nonce}", expires + CLOCK_SKEW):
            raise Unverified("replayed")
        return registered.bot, registered.status

    def _check(self, label: str, members: list[Any], params: dict[str, Any], signature: Any,
               has_agent: bool) -> tuple[RegisteredKey, int]:
        """Rules 1 to 4 (see the module's docstring); the registered key and `expires`."""
        if not isinstance(signature[0], bytes) or set(params) - PARAMETERS:
            raise Unverified("malformed")
        if not all(isinstance(name, str) for name, _ in members):
            raise Unverified("malformed")
        if any(name not in params for name in ("created", "expires", "keyid")):
            raise Unverified("missing_parameter")
        created, expires, keyid = params["created"], params["expires"], params["keyid"]
        if type(created) is not int or type(expires) is not int or type(keyid) is not str or (
                "nonce" in params and type(params["nonce"]) is not str):
            raise Unverified("malformed")
        if "alg" in params and params["alg"] != "ed25519":
            raise Unverified("unsupported_algorithm")
        registered = self.keys.get(keyid)
        if registered is None:
            raise Unverified("unknown_key")
        now = self.clock()
        if created > now + CLOCK_SKEW:
            raise Unverified("not_yet_valid")
        if expires < now - CLOCK_SKEW:
            raise Unverified("expired")
        if expires < created:
            raise Unverified("malformed")
        if expires - created > MAX_VALIDITY:
            raise Unverified("validity_too_long")
        covered = {(name, tuple(sorted(p.items()))) for name, p in members}
        if ("@authority", ()) not in covered:
            raise Unverified("authority_not_covered")
        if has_agent and not covered & {("signature-agent", ()), ("signature-agent", (("key", label),))}:
            raise Unverified("signature_agent_not_covered")
        return registered, expires

    def _url(self, scope: dict[str, Any], fields: dict[bytes, bytes]) -> str:
        """The URL the client addressed: scheme and authority as it sent them (`Host`, or the forwarded
        ones from a trusted proxy), the path and query exactly as they arrived."""
        scheme, host = scope.get("scheme", "http"), fields.get(b"host", b"").decode("latin-1")
        client = scope.get("client")
        if self.trusted and client and is_trusted(client[0], self.trusted):
            forwarded = fields.get(b"x-forwarded-host", b"").decode("latin-1").rsplit(",", 1)[-1].strip()
            proto = fields.get(b"x-forwarded-proto", b"").decode("latin-1").rsplit(",", 1)[-1].strip().lower()
            host = forwarded or host
            scheme = proto if proto in ("http", "https") else scheme
        if not host and scope.get("server"):
            server_host, port = scope["server"]
            host = f"{server_host}:{port}" if port else server_host
        path = scope.get("raw_path") or quote(scope["path"]).encode()
        query = scope.get("query_string", b"")
        return f"{scheme}://{host}{path.decode('latin-1')}" + (f"?{query.decode('latin-1')}" if query else "")


def field_values(raw: list[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
    """Header fields by lowercase name, repeated field lines joined with `, ` (RFC 9110 section 5.3)."""
    found: dict[bytes, bytes] = {}
    for name, value in raw:
        found[name] = found[name] + b", " + value if name in found else value
    return found

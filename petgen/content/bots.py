"""content/bots.yml: the registry of signed bots (RFC 9421 Web Bot Auth), their Ed25519 keys and quotas.

Each bot has a name (what `X-Petname-Bot` and the logs show), a contact and a use case for the operator,
a quota (requests per minute, its own budget instead of the per-IP one) and one or more public keys.
The build publishes the keys as a JWKS at /.well-known/http-message-signatures-directory and hands
names, quotas and keys to the runtime in its data file (`runtime_bots`).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import orjson

from petgen.content.model import did_you_mean, parse_yaml, read_text
from petgen.content.problems import Problems

BOT_FIELDS = ("name", "contact", "use_case", "quota", "keys")
KEY_FIELDS = ("x", "kid")
DEFAULT_QUOTA = 600  # requests per minute: ten times the anonymous per-IP budget
MAX_QUOTA = 1_000_000
# Names go into a response header and into rate-limit keys: letters, digits and . _ - only.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_CONTACT = 200
MAX_USE_CASE = 500


def jwk_thumbprint(x: str) -> str:
    """RFC 7638 thumbprint of an Ed25519 OKP key (the Web Bot Auth `keyid` and the directory's `kid`)."""
    canonical = orjson.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, option=orjson.OPT_SORT_KEYS)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()


def decode_key(x: Any) -> bytes | None:
    """The raw 32-byte Ed25519 public key in a base64url `x` (padding optional), or None."""
    if not isinstance(x, str) or not re.fullmatch(r"[A-Za-z0-9_-]{43}=?", x):
        return None
    raw = base64.urlsafe_b64decode(x.rstrip("=") + "=")
    return raw if len(raw) == 32 else None


def encode_key(raw: bytes) -> str:
    """A raw public key as a JWK `x`: base64url without padding (the canonical spelling)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def bot_problems(bot: Any, index: int) -> list[tuple[str, str | None]]:
    """What is wrong with one registry entry, as (message, hint) pairs; empty when it is valid."""
    if not isinstance(bot, dict):
        return [(f"bot {index + 1} must be a mapping with name, contact, use_case and keys", None)]
    name = bot.get("name")
    label = f"bot '{name}'" if isinstance(name, str) else f"bot {index + 1}"
    found: list[tuple[str, str | None]] = []
    for key in bot:
        if key not in BOT_FIELDS:
            found.append((f"{label}: unknown key '{key}'", did_you_mean(str(key), BOT_FIELDS)))
    if not isinstance(name, str) or not NAME.fullmatch(name):
        found.append(((f"{label}: 'name' must be 1 to 64 letters, digits, '.', '_' or '-' (starting with a letter "
                       "or digit)"), "it is shown in the X-Petname-Bot response header, e.g. ExampleBot"))
    for field, limit in (("contact", MAX_CONTACT), ("use_case", MAX_USE_CASE)):
        value = bot.get(field)
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            found.append((f"{label}: '{field}' must be text of 1 to {limit} characters",
                          "how to reach the bot's operator (URL or e-mail)" if field == "contact"
                          else "what the bot does with the API, in a sentence"))
        elif field == "contact" and "\n" in value:
            found.append((f"{label}: 'contact' must be one line", None))
    quota = bot.get("quota", DEFAULT_QUOTA)
    if type(quota) is not int or not 1 <= quota <= MAX_QUOTA:
        found.append((f"{label}: 'quota' must be a whole number of requests per minute from 1 to {MAX_QUOTA:,}",
                      f"leave it out for the default, {DEFAULT_QUOTA}"))
    keys = bot.get("keys")
    if not isinstance(keys, list) or not keys:
        found.append((f"{label}: 'keys' must be a list of at least one Ed25519 public key",
                      "add one with `petgen bots add`, or write '- x: <base64url public key>'"))
        return found
    for key in keys:
        if not isinstance(key, dict) or decode_key(key.get("x")) is None:
            found.append((f"{label}: every key needs 'x', a base64url Ed25519 public key of 32 bytes",
                          "export the raw public key, base64url-encoded without padding"))
            continue
        found.extend((f"{label}: key {key['x'][:8]}…: unknown key '{k}'", did_you_mean(str(k), KEY_FIELDS))
                     for k in key if k not in KEY_FIELDS)
        kid, thumbprint = key.get("kid"), jwk_thumbprint(encode_key(decode_key(key["x"]) or b""))
        if kid is not None and kid != thumbprint:
            found.append((f"{label}: key {key['x'][:8]}…: 'kid' must be the key's RFC 7638 thumbprint, {thumbprint}",
                          "leave 'kid' out; the build computes it"))
    return found


def load_bots(content_dir: Path, problems: Problems) -> list[dict[str, Any]]:
    """Read content/bots.yml: each bot with its contact, use case, quota and Ed25519 public keys (JWKs)."""
    path = content_dir / "bots.yml"
    if not path.exists():
        return []
    text = read_text(path, problems)
    return parse_bots(text, str(path), problems) if text is not None else []


def parse_bots(text: str, where: str, problems: Problems) -> list[dict[str, Any]]:
    """The bots in the text of a bots.yml; every problem is added to `problems`."""
    data, lines = parse_yaml(text, where, problems)
    if data is None:
        return []
    if not isinstance(data, dict) or set(data) - {"bots"} or not isinstance(data.get("bots", []), list):
        problems.add(where, 1, "bots.yml must be a mapping with one key, 'bots', holding a list",
                     "write 'bots: []' when no bot is registered")
        return []
    bots: list[dict[str, Any]] = []
    names: set[str] = set()
    kids: dict[str, str] = {}
    for i, bot in enumerate(data.get("bots") or []):
        line = lines.get(f"bots[{i}]", 1)
        found = bot_problems(bot, i)
        for message, hint in found:
            problems.add(where, line, message, hint)
        if found:
            continue
        if bot["name"] in names:
            problems.add(where, line, f"bot '{bot['name']}' is registered twice", "names must be unique")
        names.add(bot["name"])
        keys = []
        for key in bot["keys"]:
            x = encode_key(decode_key(key["x"]) or b"")
            kid = jwk_thumbprint(x)
            if kid in kids:
                problems.add(where, line, f"bot '{bot['name']}': key {kid} is already registered for "
                             f"'{kids[kid]}'", "every key belongs to one bot")
            kids[kid] = bot["name"]
            keys.append({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid})
        bots.append({"name": bot["name"], "contact": bot["contact"].strip(), "use_case": bot["use_case"].strip(),
                     "quota": bot.get("quota", DEFAULT_QUOTA), "keys": keys})
    return bots


def directory(bots: list[dict[str, Any]]) -> dict[str, Any]:
    """The HTTP Message Signatures Directory: every registered public key as a JWKS."""
    return {"keys": [key for bot in bots for key in bot["keys"]]}


def runtime_bots(bots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the runtime needs to verify and budget a bot: its name, quota and keys (no contact details)."""
    return [{"name": bot["name"], "quota": bot["quota"], "keys": [{"kid": k["kid"], "x": k["x"]} for k in bot["keys"]]}
            for bot in bots]

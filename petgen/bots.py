"""content/bots.yml: the registry of signed bots (RFC 9421 Web Bot Auth) and their Ed25519 keys."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import orjson

from petgen.content import did_you_mean, parse_yaml, read_text
from petgen.problems import Problems

BOT_FIELDS = ("name", "contact", "keys")


def jwk_thumbprint(x: str) -> str:
    """RFC 7638 thumbprint of an Ed25519 OKP key (the Web Bot Auth `kid`)."""
    canonical = orjson.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, option=orjson.OPT_SORT_KEYS)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()


def load_bots(content_dir: Path, problems: Problems) -> list[dict[str, Any]]:
    """Read content/bots.yml: registered bots and their Ed25519 public keys (base64url `x`)."""
    path = content_dir / "bots.yml"
    if not path.exists():
        return []
    text = read_text(path, problems)
    data, lines = parse_yaml(text, str(path), problems) if text is not None else (None, {})
    if data is None:
        return []
    where = str(path)
    if not isinstance(data, dict) or set(data) - {"bots"} or not isinstance(data.get("bots", []), list):
        problems.add(where, 1, "bots.yml must be a mapping with one key, 'bots', holding a list",
                     "write 'bots: []' when no bot is registered")
        return []
    bots = []
    for i, bot in enumerate(data.get("bots") or []):
        line = lines.get(f"bots[{i}]", 1)
        if not isinstance(bot, dict) or not isinstance(bot.get("name"), str) or not isinstance(bot.get("keys"), list):
            problems.add(where, line, f"bot {i + 1} needs 'name' (text) and 'keys' (a list)")
            continue
        for key in bot:
            if key not in BOT_FIELDS:
                problems.add(where, line, f"bot '{bot['name']}': unknown key '{key}'", did_you_mean(str(key), BOT_FIELDS))
        keys = []
        for key in bot["keys"]:
            x = key.get("x") if isinstance(key, dict) else None
            try:
                raw = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)) if isinstance(x, str) else b""
            except ValueError:
                raw = b""
            if len(raw) != 32:
                problems.add(where, line, f"bot '{bot['name']}': every key needs 'x', a base64url Ed25519 public "
                             "key of 32 bytes", "export the raw public key, base64url-encoded without padding")
                continue
            kid = key.get("kid") or jwk_thumbprint(x)
            keys.append({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid})
        bots.append({"name": bot["name"], "contact": bot.get("contact"), "keys": keys})
    return bots



"""`petgen bots add` and `petgen bots keygen`: register a bot's public key, make a key pair for tests.

`add_bot` appends one entry to content/bots.yml as text, so the editors' comments and layout stay as
they are; the new file is parsed and validated like any build would before it replaces the old one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from petgen.content.bots import DEFAULT_QUOTA, bot_problems, decode_key, encode_key, jwk_thumbprint, parse_bots
from petgen.content.problems import ContentError, Problems

NEW_FILE = """\
# Signed bots (RFC 9421 HTTP Message Signatures, "Web Bot Auth"): each registered bot, its quota
# (requests per minute, default 600) and its Ed25519 public keys. `petgen bots add` appends here.
# The keys are published at /.well-known/http-message-signatures-directory. See docs/bots.md.
bots: []
"""


@dataclass(frozen=True)
class Registered:
    name: str
    quota: int
    kids: list[str]
    path: Path


def read_public_keys(path: Path) -> list[str]:
    """The Ed25519 public keys (`x`) in a JWK or JWKS file; anything else is a clear error."""
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise click.ClickException(f"cannot read {path}: {exc.strerror}.") from None
    except orjson.JSONDecodeError:
        raise click.ClickException(f"{path} is not JSON: pass a JWK such as {{\"kty\": \"OKP\", \"crv\": "
                                   "\"Ed25519\", \"x\": \"…\"}.") from None
    keys = data.get("keys") if isinstance(data, dict) and "keys" in data else [data]
    if not isinstance(keys, list) or not keys:
        raise click.ClickException(f"{path} holds no key: pass a JWK or a JWKS with at least one key.")
    found = []
    for key in keys:
        if not isinstance(key, dict) or key.get("kty") != "OKP" or key.get("crv") != "Ed25519":
            shown = (f"kty={key.get('kty')!r}, crv={key.get('crv')!r}" if isinstance(key, dict) else "not a JWK")
            raise click.ClickException(f"{path}: only Ed25519 keys (kty \"OKP\", crv \"Ed25519\") can be "
                                       f"registered, not {shown}.")
        if "d" in key:
            raise click.ClickException(f"{path} holds a private key ('d'): register the public key only (petgen "
                                       "bots keygen writes it to PREFIX.public.jwk), and keep the private one secret.")
        raw = decode_key(key.get("x"))
        if raw is None:
            raise click.ClickException(f"{path}: 'x' must be a base64url Ed25519 public key of 32 bytes.")
        found.append(encode_key(raw))
    return found


def add_bot(content_dir: Path, name: str, jwk: Path, contact: str, use_case: str,
            quota: int | None = None) -> Registered:
    """Validate the key and the details, then append the bot to content/bots.yml."""
    if not content_dir.is_dir():
        raise click.ClickException(f"{content_dir} does not exist; pass --content DIR.")
    entry: dict[str, Any] = {"name": name, "contact": contact, "use_case": use_case}
    if quota is not None:
        entry["quota"] = quota
    entry["keys"] = [{"x": x, "kid": jwk_thumbprint(x)} for x in read_public_keys(jwk)]
    problems = bot_problems(entry, 0)
    if problems:
        raise click.ClickException("; ".join(m + (f" ({h})" if h else "") for m, h in problems) + ".")

    path = content_dir / "bots.yml"
    text = path.read_text(encoding="utf-8") if path.exists() else NEW_FILE
    found = Problems()
    bots = parse_bots(text, str(path), found)
    if found.errors:
        raise ContentError(found.sorted())
    for bot in bots:
        if bot["name"] == name:
            raise click.ClickException(f"a bot named '{name}' is already registered in {path}.")
        for key in bot["keys"]:
            if key["kid"] in {k["kid"] for k in entry["keys"]}:
                raise click.ClickException(f"the key {key['kid']} is already registered for '{bot['name']}'.")

    updated = append_entry(text, entry, path)
    check = Problems()
    parse_bots(updated, str(path), check)
    if check.errors:  # our own append went wrong: say so, and write nothing
        raise click.ClickException(f"could not append to {path} ({check.errors[0].message}); add this entry by "
                                   f"hand:\n{render_entry(entry, '  ')}")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(updated, encoding="utf-8")
    os.replace(tmp, path)
    return Registered(name, quota or DEFAULT_QUOTA, [k["kid"] for k in entry["keys"]], path)


def render_entry(entry: dict[str, Any], indent: str) -> str:
    """One bot as a YAML block-list item; every string JSON-quoted (valid YAML, never read as a number)."""
    q = lambda value: orjson.dumps(value).decode()
    lines = [f"{indent}- name: {q(entry['name'])}", f"{indent}  contact: {q(entry['contact'])}",
             f"{indent}  use_case: {q(entry['use_case'])}"]
    if "quota" in entry:
        lines.append(f"{indent}  quota: {entry['quota']}")
    lines.append(f"{indent}  keys:")
    for key in entry["keys"]:
        lines += [f"{indent}    - x: {q(key['x'])}", f"{indent}      kid: {q(key['kid'])}"]
    return "\n".join(lines) + "\n"


def append_entry(text: str, entry: dict[str, Any], path: Path) -> str:
    """`text` with `entry` appended to its `bots:` list (an empty `bots: []` becomes a block list)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        stripped = line.split("#", 1)[0].strip()
        if stripped.replace(" ", "") == "bots:[]":
            return "".join(lines[:i]) + "bots:\n" + render_entry(entry, "  ") + "".join(lines[i + 1:])
        if stripped == "bots:":
            items = [x for x in lines[i + 1:] if x.lstrip().startswith("- ")]
            indent = items[0][:len(items[0]) - len(items[0].lstrip())] if items else "  "
            body = "".join(lines)
            return body + ("" if body.endswith("\n") else "\n") + render_entry(entry, indent)
    raise click.ClickException(f"{path} has no 'bots:' list to append to; add this entry by hand:\n"
                               f"{render_entry(entry, '  ')}")


def generate_key_pair(prefix: Path) -> tuple[Path, Path, str]:
    """Write PREFIX.private.jwk (mode 0600) and PREFIX.public.jwk; return both paths and the key id."""
    private_path = prefix.with_name(prefix.name + ".private.jwk")
    public_path = prefix.with_name(prefix.name + ".public.jwk")
    for path in (private_path, public_path):
        if path.exists():
            raise click.ClickException(f"{path} already exists; choose another prefix.")
    key = Ed25519PrivateKey.generate()
    x = encode_key(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    d = encode_key(key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()))
    public = {"kty": "OKP", "crv": "Ed25519", "kid": jwk_thumbprint(x), "x": x}
    try:
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise click.ClickException(f"cannot write {private_path}: {exc.strerror}.") from None
    with os.fdopen(fd, "wb") as out:
        out.write(orjson.dumps({**public, "d": d}, option=orjson.OPT_INDENT_2) + b"\n")
    public_path.write_bytes(orjson.dumps(public, option=orjson.OPT_INDENT_2) + b"\n")
    return private_path, public_path, public["kid"]

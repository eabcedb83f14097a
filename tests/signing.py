"""Signed-bot helpers for the tests: the signer documented in docs/bots.md, and a built site with bots.

The signer is the Python client of docs/bots.md, taken from the Markdown and run as it stands, so the
documented example is what signs every request in the tests (with the http-message-signatures library,
as a bot author would sign).
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from petgen.build.pipeline import build
from petgen.cli.bots import add_bot, generate_key_pair
from tests.conftest import REPO, write_site


def documented_signer() -> ModuleType:
    """The code block of docs/bots.md that defines `signed_headers`, executed as a module (not as __main__)."""
    text = (REPO / "docs" / "bots.md").read_text(encoding="utf-8")
    code = next(block for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "def signed_headers" in block)
    module = ModuleType("bot_client")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(code, "docs/bots.md", "exec"), module.__dict__)  # noqa: S102 - our own documentation
    return module


SIGNER = documented_signer()


@dataclass(frozen=True)
class SignedBot:
    name: str
    kid: str
    key: Ed25519PrivateKey

    def headers(self, url: str, method: str = "GET", **options: Any) -> dict[str, str]:
        return SIGNER.signed_headers(method, url, self.kid, self.key, **options)  # type: ignore[no-any-return]


def make_bot(root: Path, content: Path, name: str, quota: int | None = None) -> SignedBot:
    """Register a new bot (a fresh key pair) in `content`, as an operator would with the CLI's functions."""
    private, public, kid = generate_key_pair(root / name.lower())
    add_bot(content, name, public, f"https://{name.lower()}.example", "Tests", quota)
    loaded_kid, key = SIGNER.load_private_key(str(private))
    assert loaded_kid == kid
    return SignedBot(name, kid, key)


def site_with_bot(root: Path, quota: int | None = None, base_url: str = "http://127.0.0.1") -> tuple[Path, SignedBot]:
    """A built site (dist) with one registered bot, TestBot."""
    content = write_site(root / "content")
    bot = make_bot(root, content, "TestBot", quota)
    build(content, root / "dist", base_url=base_url)
    return root / "dist", bot


def fresh_window(window: int, need: float = 10) -> None:
    """Wait, if need be, until at least `need` seconds of the current rate window are left, so that a
    test counting a whole budget does not straddle two windows (the counter's windows follow the clock)."""
    left = window - time.time() % window
    if left < need:
        time.sleep(left + 0.05)

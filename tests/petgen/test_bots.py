"""The bot registry: `petgen bots keygen` and `petgen bots add` (exact output, exit codes), the rules of
content/bots.yml, and the directory round trip from the CLI to /.well-known/http-message-signatures-directory."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from petgen.build.pipeline import build
from petgen.cli.main import cli
from petgen.content.bots import DEFAULT_QUOTA, jwk_thumbprint
from petgen.content.kb import load_knowledge_base
from petgen.content.problems import ContentError
from tests.conftest import BASE_URL
from tests.signing import SIGNER

KEY = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"  # RFC 8032's test key 1


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def keygen(runner: CliRunner, prefix: Path) -> tuple[Path, Path, str]:
    result = runner.invoke(cli, ["bots", "keygen", str(prefix)])
    assert result.exit_code == 0, result.output
    kid = result.output.rsplit("keyid: ", 1)[1].strip()
    return Path(f"{prefix}.private.jwk"), Path(f"{prefix}.public.jwk"), kid


def add(runner: CliRunner, content: Path, name: str, jwk: Path, *extra: str) -> Result:
    return runner.invoke(cli, ["bots", "add", name, "--jwk", str(jwk), "--contact", "https://bot.example/about",
                               "--use-case", "Suggests pet names", "--content", str(content), *extra])


@pytest.mark.parametrize("command", [["bots"], ["bots", "add"], ["bots", "keygen"]])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(runner: CliRunner, command: list[str], flag: str) -> None:
    result = runner.invoke(cli, [*command, flag])
    assert result.exit_code == 0 and result.output.startswith(f"Usage: cli {' '.join(command)} ")


def test_keygen_writes_a_key_pair_and_refuses_to_overwrite(runner: CliRunner, tmp_path: Path) -> None:
    prefix = tmp_path / "examplebot"
    result = runner.invoke(cli, ["bots", "keygen", str(prefix)])
    assert result.exit_code == 0
    private, public = tmp_path / "examplebot.private.jwk", tmp_path / "examplebot.public.jwk"
    public_jwk, private_jwk = orjson.loads(public.read_bytes()), orjson.loads(private.read_bytes())
    assert result.output == (f"Wrote {private} (the private key: keep it secret, sign with it) and {public} (the "
                             f"public key: petgen bots add NAME --jwk {public} …).\nkeyid: {public_jwk['kid']}\n")
    assert set(public_jwk) == {"kty", "crv", "kid", "x"} and public_jwk["kid"] == jwk_thumbprint(public_jwk["x"])
    assert private_jwk == {**public_jwk, "d": private_jwk["d"]}
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    again = runner.invoke(cli, ["bots", "keygen", str(prefix)])
    assert again.exit_code == 1
    assert again.output == f"Error: {private} already exists; choose another prefix.\n"


def test_add_appends_to_bots_yml_and_keeps_its_comments(runner: CliRunner, content: Path, tmp_path: Path) -> None:
    (content / "bots.yml").write_text("# Our bots.\nbots: []  # none yet\n# the end\n", encoding="utf-8")
    _, public, kid = keygen(runner, tmp_path / "one")
    result = add(runner, content, "ExampleBot", public, "--quota", "1200")
    assert result.exit_code == 0, result.output
    assert result.output == (f"Registered ExampleBot (quota 1200/min, key {kid}) in {content / 'bots.yml'}; run "
                             "`petgen build` to publish it.\n")
    x = orjson.loads(public.read_bytes())["x"]
    assert (content / "bots.yml").read_text(encoding="utf-8") == (
        '# Our bots.\nbots:\n  - name: "ExampleBot"\n    contact: "https://bot.example/about"\n'
        f'    use_case: "Suggests pet names"\n    quota: 1200\n    keys:\n      - x: "{x}"\n        kid: "{kid}"\n'
        "# the end\n")
    _, second, kid2 = keygen(runner, tmp_path / "two")
    result = add(runner, content, "Second.Bot", second)
    assert result.exit_code == 0, result.output
    assert f"quota {DEFAULT_QUOTA}/min, key {kid2}" in result.output
    bots = load_knowledge_base(content).bots
    assert [(b["name"], b["quota"], b["use_case"]) for b in bots] == [
        ("ExampleBot", 1200, "Suggests pet names"), ("Second.Bot", DEFAULT_QUOTA, "Suggests pet names")]
    assert (content / "bots.yml").read_text(encoding="utf-8").startswith("# Our bots.\nbots:\n")


def test_add_creates_bots_yml_when_there_is_none(runner: CliRunner, content: Path, tmp_path: Path) -> None:
    assert not (content / "bots.yml").exists()
    _, public, kid = keygen(runner, tmp_path / "k")
    assert add(runner, content, "ExampleBot", public).exit_code == 0
    assert [k["kid"] for b in load_knowledge_base(content).bots for k in b["keys"]] == [kid]


def test_add_refuses_what_it_cannot_register(runner: CliRunner, content: Path, tmp_path: Path) -> None:
    private, public, kid = keygen(runner, tmp_path / "k")
    assert add(runner, content, "ExampleBot", public).exit_code == 0
    rsa = tmp_path / "rsa.jwk"
    rsa.write_text('{"kty": "RSA", "n": "AQAB", "e": "AQAB"}')
    garbage = tmp_path / "garbage.jwk"
    garbage.write_text("-----BEGIN PUBLIC KEY-----")
    short = tmp_path / "short.jwk"
    short.write_text('{"kty": "OKP", "crv": "Ed25519", "x": "tooshort"}')
    _, other, _ = keygen(runner, tmp_path / "other")
    cases: list[tuple[list[Any], str]] = [
        (["Copy", public], f"Error: the key {kid} is already registered for 'ExampleBot'.\n"),
        (["ExampleBot", other], f"Error: a bot named 'ExampleBot' is already registered in {content / 'bots.yml'}.\n"),
        (["Thief", private], (f"Error: {private} holds a private key ('d'): register the public key only (petgen bots "
                             "keygen writes it to PREFIX.public.jwk), and keep the private one secret.\n")),
        (["Rsa", rsa], (f"Error: {rsa}: only Ed25519 keys (kty \"OKP\", crv \"Ed25519\") can be registered, not "
                       "kty='RSA', crv=None.\n")),
        (["Pem", garbage], (f"Error: {garbage} is not JSON: pass a JWK such as {{\"kty\": \"OKP\", \"crv\": \"Ed25519\","
                           " \"x\": \"…\"}.\n")),
        (["Short", short], f"Error: {short}: 'x' must be a base64url Ed25519 public key of 32 bytes.\n"),
        (["Missing", tmp_path / "nope.jwk"], f"Error: cannot read {tmp_path / 'nope.jwk'}: No such file or directory.\n"),
        (["bad name", other], ("Error: bot 'bad name': 'name' must be 1 to 64 letters, digits, '.', '_' or '-' "
                              "(starting with a letter or digit) (it is shown in the X-Petname-Bot response header, "
                              "e.g. ExampleBot).\n")),
        (["Greedy", other, "--quota", "1000001"], ("Error: bot 'Greedy': 'quota' must be a whole number of requests "
                                                  "per minute from 1 to 1,000,000 (leave it out for the default, 600).\n")),
    ]
    before = (content / "bots.yml").read_bytes()
    for (name, jwk, *extra), expected in cases:
        result = add(runner, content, name, jwk, *extra)
        assert (result.exit_code, result.output) == (1, expected), name
    assert (content / "bots.yml").read_bytes() == before  # nothing was written
    zero = add(runner, content, "Zero", other, "--quota", "0")
    assert zero.exit_code == 2 and "Invalid value for '--quota': 0 is not in the range x>=1." in zero.output
    no_contact = runner.invoke(cli, ["bots", "add", "X", "--jwk", str(other), "--use-case", "y", "--content",
                                     str(content)])
    assert no_contact.exit_code == 2 and "Missing option '--contact'." in no_contact.output
    nowhere = add(runner, tmp_path / "nope", "X", other)
    assert (nowhere.exit_code, nowhere.output) == (1, (f"Error: {tmp_path / 'nope'} does not exist; pass --content "
                                                      "DIR.\n"))


def test_add_refuses_to_append_to_a_broken_registry(runner: CliRunner, content: Path, tmp_path: Path) -> None:
    (content / "bots.yml").write_text("bots:\n  - name: Old\n", encoding="utf-8")
    _, public, _ = keygen(runner, tmp_path / "k")
    result = add(runner, content, "ExampleBot", public)
    assert result.exit_code == 1
    assert result.output.startswith(f"{content / 'bots.yml'}:2: bot 'Old': 'contact' must be text of 1 to 200 "
                                    "characters\n")
    assert result.output.endswith("Error: content has 3 errors; nothing was written.\n")


@pytest.mark.parametrize("entry, message", [
    (f"name: A\n    contact: c\n    usecase: u\n    keys: [{{x: {KEY}}}]",
     "bot 'A': unknown key 'usecase'\n    hint: did you mean 'use_case'?"),
    (f"name: A\n    contact: c\n    use_case: u\n    quota: lots\n    keys: [{{x: {KEY}}}]",
     "bot 'A': 'quota' must be a whole number of requests per minute from 1 to 1,000,000"),
    (f"name: A\n    contact: c\n    use_case: u\n    keys: [{{x: {KEY}, kid: mine}}]",
     f"bot 'A': key 11qYAYKx…: 'kid' must be the key's RFC 7638 thumbprint, {jwk_thumbprint(KEY)}"),
    (f"name: A\n    contact: c\n    use_case: u\n    keys: [{{x: {KEY}, y: 1}}]", "bot 'A': key 11qYAYKx…: unknown key 'y'"),
    ("name: A\n    contact: c\n    use_case: u\n    keys: []", "bot 'A': 'keys' must be a list of at least one Ed25519"),
    (f"name: 'A B'\n    contact: c\n    use_case: u\n    keys: [{{x: {KEY}}}]",
     "bot 'A B': 'name' must be 1 to 64 letters"),
    (f"name: A\n    contact: \"c\\nd\"\n    use_case: u\n    keys: [{{x: {KEY}}}]", "bot 'A': 'contact' must be one line"),
])
def test_bots_yml_rules(content: Path, entry: str, message: str) -> None:
    (content / "bots.yml").write_text(f"bots:\n  - {entry}\n", encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    assert message in "\n".join(p.format() for p in info.value.problems)


def test_one_key_one_bot_and_unique_names(content: Path) -> None:
    bot = f"  - name: A\n    contact: c\n    use_case: u\n    keys: [{{x: {KEY}}}]\n"
    (content / "bots.yml").write_text("bots:\n" + bot + bot, encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    messages = [p.message for p in info.value.problems]
    assert messages == ["bot 'A' is registered twice", (f"bot 'A': key {jwk_thumbprint(KEY)} is already registered "
                                                         "for 'A'")]


def test_directory_round_trips_a_key_added_with_the_cli(runner: CliRunner, content: Path, tmp_path: Path,
                                                        make_client: Callable[..., TestClient]) -> None:
    """keygen → add → build: the directory lists the key, and a request signed with it is verified."""
    private, public, kid = keygen(runner, tmp_path / "examplebot")
    assert add(runner, content, "ExampleBot", public, "--quota", "1200").exit_code == 0
    assert runner.invoke(cli, ["build", "--content", str(content), "--out", str(tmp_path / "dist"), "--base-url",
                               BASE_URL]).exit_code == 0
    client = make_client(tmp_path / "dist")
    directory = client.get("/.well-known/http-message-signatures-directory")
    assert directory.headers["content-type"] == "application/http-message-signatures-directory+json"
    assert directory.json() == {"keys": [{**orjson.loads(public.read_bytes()), "kty": "OKP", "crv": "Ed25519"}]}
    loaded_kid, key = SIGNER.load_private_key(str(private))
    assert loaded_kid == kid == directory.json()["keys"][0]["kid"]
    url = f"{BASE_URL}/api/names/apfel"
    signed = client.get(url, headers=SIGNER.signed_headers("GET", url, kid, key))
    assert signed.status_code == 200
    assert signed.headers["x-petname-bot"] == 'verified;name="ExampleBot"'
    assert signed.headers["x-ratelimit-limit"] == "1200"
    assert signed.headers["ratelimit-policy"] == '"bot";q=1200;w=60'


def test_the_runtime_gets_names_quotas_and_keys_but_no_contacts(content: Path, tmp_path: Path) -> None:
    (content / "bots.yml").write_text(f"bots:\n  - name: A\n    contact: ops@a.example\n    use_case: u\n"
                                      f"    keys: [{{x: {KEY}}}]\n", encoding="utf-8")
    build(content, tmp_path / "dist", base_url=BASE_URL)
    data = orjson.loads((tmp_path / "dist" / "_data" / "index.json").read_bytes())
    assert data["bots"] == [{"name": "A", "quota": DEFAULT_QUOTA, "keys": [{"kid": jwk_thumbprint(KEY), "x": KEY}]}]

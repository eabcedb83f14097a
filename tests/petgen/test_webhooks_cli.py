"""`petgen webhooks …`: the operator's commands, with their exact output and exit codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from petgen.cli.main import cli
from runtime.webhooks.model import token_hash
from runtime.webhooks.sqlite_store import SQLiteStore
from tests.runtime.webhooks.support import Receiver, petname_signature_valid, validate_event

HOOK = "https://hooks.petnames.example/in"


def petgen(state: Path, *args: str, loopback: bool = False) -> Result:
    env = {"PETGEN_WEBHOOK_ALLOW_LOOPBACK": "1" if loopback else "0"}
    return CliRunner().invoke(cli, ["webhooks", "--state-dir", str(state), *args], env=env, catch_exceptions=False)


def secret_of(output: str) -> str:
    found = re.search(r"(whsec_[A-Za-z0-9+/=]+)", output)
    assert found
    return found.group(1)


def test_invite_prints_a_token_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    result = petgen(tmp_path, "invite", "--contact", "ops@example.com")
    assert result.exit_code == 0
    match = re.fullmatch(r"Onboarding token for ops@example\.com \((tok_[a-z2-7]{16})\), shown only now:\n"
                         r"(wht_[A-Za-z0-9_-]{43})\n"
                         r"The subscriber sends it as 'Authorization: Bearer <token>' to POST /webhooks\.\n",
                         result.output)
    assert match, result.output
    store = SQLiteStore(tmp_path / "webhooks.sqlite3")
    found = store.find_token(token_hash(match.group(2)))
    assert found is not None and found.id == match.group(1)
    assert match.group(2).encode() not in (tmp_path / "webhooks.sqlite3").read_bytes()


def test_tokens_list_shows_who_and_revoke_ends_a_token(tmp_path: Path) -> None:
    assert petgen(tmp_path, "tokens").output == "No onboarding tokens.\n"
    token_id = re.search(r"\((tok_\w+)\)", petgen(tmp_path, "invite", "--contact", "ops@example.com").output)
    assert token_id
    rows = [line.split() for line in petgen(tmp_path, "tokens").output.splitlines()]
    assert rows[0] == ["TOKEN", "CONTACT", "ISSUED", "SUBSCRIPTIONS"]
    assert (rows[1][0], rows[1][1], rows[1][3]) == (token_id.group(1), "ops@example.com", "0")
    assert petgen(tmp_path, "revoke", token_id.group(1)).output == (
        f"Revoked {token_id.group(1)}: it no longer manages subscriptions. Its subscriptions stay until removed "
        "(`petgen webhooks remove ID`).\n")
    again = petgen(tmp_path, "revoke", token_id.group(1))
    assert (again.exit_code, again.output) == (
        1, f"Error: No onboarding token {token_id.group(1)} (see `petgen webhooks tokens`).\n")


def test_add_list_rotate_remove(tmp_path: Path) -> None:
    assert petgen(tmp_path, "list").output == "No subscriptions.\n"
    added = petgen(tmp_path, "add", HOOK, "--events", "entry.updated,category.updated", "--description", "news")
    assert added.exit_code == 0
    match = re.fullmatch(rf"Subscribed (wh_[a-z2-7]{{16}}) to {re.escape(HOOK)} \(entry\.updated, category\.updated\)\."
                         r"\nSigning secret, shown only now: whsec_[A-Za-z0-9+/]{43}=\n", added.output)
    assert match, added.output
    sid = match.group(1)
    assert [line.split() for line in petgen(tmp_path, "list").output.splitlines()] == [
        ["ID", "STATUS", "OWNER", "EVENTS", "URL"], [sid, "active", "operator", "entry.updated,category.updated", HOOK]]

    rotated = petgen(tmp_path, "rotate", sid)
    assert rotated.exit_code == 0 and re.fullmatch(
        rf"New signing secret for {sid}, shown only now: whsec_\S+\nThe previous secret stays valid until "
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; until then every delivery carries both signatures\.\n", rotated.output)
    assert secret_of(rotated.output) != secret_of(added.output)

    assert petgen(tmp_path, "remove", sid).output == f"Removed {sid}; its pending deliveries are cancelled.\n"
    assert petgen(tmp_path, "list").output == "No subscriptions.\n"


@pytest.mark.parametrize("args, code, error", [
    (["add", "http://hooks.petnames.example/in"], 1,
     ("Error: http://hooks.petnames.example/in is not accepted: the URL must use https:// (plain http is not "
      "accepted).\n")),
    (["add", "https://10.0.0.1/in"], 1,
     ("Error: https://10.0.0.1/in is not accepted: 10.0.0.1 is a private address; deliveries go to public addresses "
     "only.\n")),
    (["add", HOOK, "--events", "entry.deleted"], 2, ("Error: Invalid value for --events: Unknown event type "
     "'entry.deleted'; the event types are entry.published, entry.updated, category.updated.\n")),
    (["remove", "wh_nope"], 1, "Error: No subscription wh_nope (see `petgen webhooks list`).\n"),
    (["rotate", "wh_nope"], 1, "Error: No subscription wh_nope (see `petgen webhooks list`).\n"),
    (["send-test", "wh_nope"], 1, "Error: No subscription wh_nope (see `petgen webhooks list`).\n"),
    (["redeliver", "evt_nope"], 1, "Error: No event evt_nope in the store (see `petgen webhooks deliveries`).\n"),
    (["invite", "--contact", " "], 1, ("Error: --contact must say who the token is for (an e-mail address or a "
     "name).\n")),
])
def test_errors_say_what_to_do(tmp_path: Path, args: list[str], code: int, error: str) -> None:
    result = petgen(tmp_path, *args)
    assert (result.exit_code, result.output.splitlines()[-1] + "\n") == (code, error), result.output


def test_the_same_url_twice_is_refused(tmp_path: Path) -> None:
    petgen(tmp_path, "add", HOOK)
    result = petgen(tmp_path, "add", HOOK)
    assert (result.exit_code, result.output) == (
        1, f"Error: Not subscribed: {HOOK} is already subscribed (see `petgen webhooks list`).\n")


def test_a_bad_redis_url_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["webhooks", "--redis-url", "http://x", "list"])
    assert result.exit_code == 2 and "Invalid value for --redis-url: 'http://x' is not a Redis URL" in result.output


def test_send_test_deliveries_and_redeliver(tmp_path: Path, dist: Path, receiver: Receiver) -> None:
    added = petgen(tmp_path, "add", receiver.url, loopback=True)
    sid, secret = re.search(r"(wh_\w+)", added.output).group(1), secret_of(added.output)  # type: ignore[union-attr]
    sent = petgen(tmp_path, "send-test", sid, "--dist", str(dist), loopback=True)
    assert sent.exit_code == 0, sent.output
    assert re.fullmatch(rf"Delivered the test event (evt_test_[a-z2-7]{{16}}) to {sid} \({re.escape(receiver.url)}\): "
                        r"HTTP 200 in \d+ ms\.\n", sent.output), sent.output
    [delivery] = receiver.received
    event = validate_event(delivery)
    assert event["type"] == "entry.updated" and event["data"]["changes"] == [] and event["data"]["slug"] == "aeffchen"
    assert petname_signature_valid(secret, delivery.headers, delivery.body)

    receiver.answers = [500]
    failed = petgen(tmp_path, "send-test", sid, "--dist", str(dist), loopback=True)
    assert failed.exit_code == 1 and re.fullmatch(
        rf"Error: The test event (evt_test_\w+) to {sid} \({re.escape(receiver.url)}\) failed: HTTP 500\.\n",
        failed.output), failed.output
    failed_id = re.search(r"(evt_test_\w+)", failed.output).group(1)  # type: ignore[union-attr]

    table = petgen(tmp_path, "deliveries").output.splitlines()
    assert table[0].split() == ["EVENT", "TYPE", "SUBSCRIPTION", "STATUS", "ATTEMPTS", "LAST", "RESULT", "WHEN"]
    assert [row.split()[:5] for row in table[1:]] == [[failed_id, "entry.updated", sid, "failed", "1"],
                                                      [event["id"], "entry.updated", sid, "delivered", "1"]]
    only_failed = petgen(tmp_path, "deliveries", "--failed").output.splitlines()
    assert [row.split()[0] for row in only_failed[1:]] == [failed_id] and "HTTP 500" in only_failed[1]

    assert petgen(tmp_path, "redeliver", failed_id).output == \
        f"Queued {failed_id} again for 1 subscription; the running server delivers it.\n"
    assert petgen(tmp_path, "deliveries", "--failed").output == "No failed deliveries.\n"


def test_send_test_needs_a_built_dist(tmp_path: Path) -> None:
    added = petgen(tmp_path, "add", HOOK)
    sid = re.search(r"(wh_\w+)", added.output).group(1)  # type: ignore[union-attr]
    result = petgen(tmp_path, "send-test", sid, "--dist", str(tmp_path / "nothing"))
    assert (result.exit_code, result.output) == (1, (f"Error: {tmp_path / 'nothing'} holds no built entry to send as a "
                                                    "test; run `petgen build` or pass --dist DIR.\n"))


@pytest.mark.parametrize("command", [[], ["invite"], ["tokens"], ["revoke"], ["add"], ["list"], ["remove"], ["rotate"],
                                     ["deliveries"], ["redeliver"], ["send-test"]])
def test_help_everywhere(command: list[str]) -> None:
    for flag in ("-h", "--help"):
        result = CliRunner().invoke(cli, ["webhooks", *command, flag])
        assert result.exit_code == 0 and result.output.startswith("Usage: ")

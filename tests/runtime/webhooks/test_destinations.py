"""The SSRF guard: which URLs and addresses may receive deliveries, at subscribe time and on every connection."""

from __future__ import annotations

import ipaddress
import re

import anyio
import pytest

from petgen.contract.events import SUBSCRIBER_URL
from runtime.webhooks.destinations import (
    Policy,
    Refused,
    address_problem,
    check_destination,
    check_url,
    system_resolver,
)
from runtime.webhooks.model import Attempt, Event
from runtime.webhooks.sender import Sender
from tests.runtime.webhooks.support import Receiver

EVENT = Event("evt_1", "entry.updated", 0.0, b'{"id": "evt_1"}')


@pytest.mark.parametrize("address, problem", [
    ("127.0.0.1", "a loopback address"),
    ("127.1.2.3", "a loopback address"),
    ("::1", "a loopback address"),
    ("10.0.0.1", "a private address"),
    ("172.16.5.4", "a private address"),
    ("192.168.1.1", "a private address"),
    ("fd12::1", "a private address"),
    ("169.254.169.254", "a cloud metadata address"),
    ("169.254.10.10", "a link-local address"),
    ("fe80::1", "a link-local address"),
    ("fd00:ec2::254", "a cloud metadata address"),
    ("100.100.100.200", "a cloud metadata address"),
    ("100.64.0.1", "a shared (carrier-grade NAT) address"),
    ("224.0.0.1", "a multicast address"),
    ("ff02::1", "a multicast address"),
    ("0.0.0.0", "an unspecified address"),
    ("::", "an unspecified address"),
    ("::ffff:10.0.0.1", "a private address"),  # IPv4 wrapped in IPv6 is judged as IPv4
    ("::ffff:127.0.0.1", "a loopback address"),
    ("64:ff9b::a9fe:a9fe", "a cloud metadata address"),  # NAT64 of 169.254.169.254
    ("2002:7f00:1::", "a loopback address"),  # 6to4 of 127.0.0.1
    ("192.0.2.1", "a private address"),  # documentation range
    ("240.0.0.1", "a private address"),  # reserved
    ("93.184.216.34", None),
    ("2606:2800:220:1:248:1893:25c8:1946", None),
])
def test_address_table(address: str, problem: str | None) -> None:
    assert address_problem(ipaddress.ip_address(address), Policy()) == problem


def test_loopback_only_with_the_development_setting() -> None:
    development = Policy(allow_loopback=True)
    assert address_problem(ipaddress.ip_address("127.0.0.1"), development) is None
    assert address_problem(ipaddress.ip_address("10.0.0.1"), development) == "a private address"
    assert address_problem(ipaddress.ip_address("93.184.216.34"), development, plain_http=True) == \
        "not a loopback address (plain http is for loopback only)"


@pytest.mark.parametrize("url, reason", [
    ("http://example.com/hook", "the URL must use https:// (plain http is not accepted)"),
    ("ftp://example.com/hook", "the URL must start with https://"),
    ("https://user:pw@example.com/", ("the URL must not contain credentials (user:password@); deliveries are signed "
                                     "instead")),
    ("https://example.com/#top", "the URL must not have a #fragment"),
    ("https://example.com:99999/", "the URL's port is not a number from 1 to 65535"),
    ("https://127.0.0.1/hook", "127.0.0.1 is a loopback address; deliveries go to public addresses only"),
    ("https://10.0.0.1/hook", "10.0.0.1 is a private address; deliveries go to public addresses only"),
    ("https://169.254.169.254/latest/meta-data", ("169.254.169.254 is a cloud metadata address; deliveries go to "
                                                 "public addresses only")),
    ("https://[::1]/hook", "::1 is a loopback address; deliveries go to public addresses only"),
    ("https://93.184.216.34/hook", "the URL needs a host name, not an IP address"),
    ("https://localhost/hook", "localhost is not a public host name (it has no domain)"),
    ("https://bücher.example/", "the URL needs a host name in ASCII (an internationalised name in its xn-- form)"),
    ("https://example.com/a b", "the URL contains spaces or control characters"),
    ("https://example.com/" + "a" * 2048, "the URL is longer than 2048 characters"),
])
def test_refused_urls_say_why(url: str, reason: str) -> None:
    with pytest.raises(Refused) as refused:
        check_url(url, Policy())
    assert str(refused.value) == reason


@pytest.mark.parametrize("url", ["https://example.com/hooks/petnames", "https://hooks.example.org:8443/a?b=c",
                                 "https://xn--bcher-kva.example/in", "https://EXAMPLE.com/"])
def test_accepted_urls_match_the_published_pattern(url: str) -> None:
    check_url(url, Policy())
    assert re.fullmatch(SUBSCRIBER_URL, url)


def test_a_name_resolving_to_a_forbidden_address_is_refused_when_subscribing() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"public.example": ["93.184.216.34"], "mixed.example": ["93.184.216.34", "10.1.2.3"],
                "internal.example": ["192.168.0.10"]}[host]

    async def check(url: str) -> str:
        try:
            await check_destination(url, Policy(), resolver=resolver)
        except Refused as exc:
            return str(exc)
        return "accepted"

    assert anyio.run(check, "https://public.example/hook") == "accepted"
    assert anyio.run(check, "https://mixed.example/hook") == \
        "mixed.example resolves to 10.1.2.3, a private address; deliveries go to public addresses only"
    assert anyio.run(check, "https://internal.example/hook") == \
        "internal.example resolves to 192.168.0.10, a private address; deliveries go to public addresses only"


def test_a_name_that_does_not_resolve_yet_is_accepted() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    anyio.run(lambda: check_destination("https://not-yet.example/hook", Policy(), resolver=resolver))


def _send(url: str, policy: Policy, resolver=None) -> Attempt:  # type: ignore[no-untyped-def]
    async def go() -> Attempt:
        kwargs = {"resolver": resolver} if resolver else {}
        async with Sender(policy, timeout=5, **kwargs) as sender:
            return await sender.send(url, EVENT, ["whsec_AAAA"], 1)

    return anyio.run(go)


def test_every_connection_is_checked_so_a_rebound_name_reaches_nothing(receiver: Receiver) -> None:
    """DNS rebinding: the name was public when subscribed, and now resolves to the loopback receiver. The
    sender resolves, checks and connects to what it checked, in one place: nothing reaches the receiver."""
    port = int(receiver.url.split(":")[-1].split("/")[0])
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])

    async def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    anyio.run(lambda: check_destination(f"https://rebind.example:{port}/hook", Policy(), resolver=rebinding))
    attempt = _send(f"https://rebind.example:{port}/hook", Policy(), rebinding)
    assert not attempt.delivered and attempt.error == \
        "refused: rebind.example resolves to 127.0.0.1, a loopback address; deliveries go to public addresses only"
    assert receiver.received == []


def test_a_name_resolving_to_loopback_is_refused_on_connect(receiver: Receiver) -> None:
    """A name that the system resolver turns into loopback addresses (as it does `localhost`), on the port
    where a real receiver listens."""
    port = int(receiver.url.split(":")[-1].split("/")[0])

    async def like_localhost(host: str, port: int) -> list[str]:
        return await system_resolver("localhost", port)

    attempt = _send(f"https://app.example:{port}/hook", Policy(), like_localhost)
    assert attempt.error is not None and "app.example resolves to 127.0.0.1, a loopback address" in attempt.error
    assert receiver.received == []


def test_plain_http_goes_to_loopback_only_and_only_in_development(receiver: Receiver) -> None:
    assert _send(receiver.url, Policy()).error == "refused: the URL must use https:// (plain http is not accepted)"
    assert _send(receiver.url, Policy(allow_loopback=True)).delivered
    assert len(receiver.received) == 1


def test_redirects_are_not_followed(receiver: Receiver) -> None:
    receiver.server.expect_request("/moved", method="POST").respond_with_data(
        "", status=307, headers={"Location": "http://169.254.169.254/latest"})
    attempt = _send(receiver.server.url_for("/moved"), Policy(allow_loopback=True))
    assert not attempt.delivered and attempt.status == 307
    assert attempt.error == "redirects are not followed (Location: http://169.254.169.254/latest)"

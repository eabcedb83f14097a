"""The /webhooks endpoints: the bearer token, the subscription's life, and a clear error for every bad input."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from runtime.webhooks.derive import Draft, Plan
from tests.runtime.webhooks.support import issue_token

HOOK = "https://hooks.petnames.example/in"  # .example never resolves: accepted, checked again on delivery


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def api(dist: Path, state: Path, make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(dist, rate_limit=0, state_dir=state)


@pytest.fixture
def token(state: Path, api: TestClient) -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token(state)}"}


@pytest.fixture
def document(dist: Path) -> dict[str, Any]:
    return orjson.loads((dist / "openapi.json").read_bytes())


def conforms(document: dict[str, Any], schema: str, body: Any) -> None:
    validator = Draft202012Validator({"$ref": f"#/components/schemas/{schema}", "components": document["components"]})
    assert [e.message for e in validator.iter_errors(body)] == [], body


def error(response: Any, status: int, code: str, document: dict[str, Any]) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    conforms(document, "Error", response.json())
    assert response.json()["error"]["code"] == code and response.json()["error"]["hint"]
    return response.json()["error"]


@pytest.mark.parametrize("headers, message", [
    ({}, "A bearer token is required to manage webhook subscriptions."),
    ({"Authorization": "Basic dXNlcjpwdw=="}, "The Authorization header must be 'Bearer <token>'."),
    ({"Authorization": "Bearer "}, "The Authorization header must be 'Bearer <token>'."),
    ({"Authorization": "Bearer wht_not-a-token-we-issued"}, "The bearer token is not valid."),
])
def test_every_endpoint_needs_a_valid_token(api: TestClient, document: dict[str, Any], headers: dict[str, str],
                                            message: str) -> None:
    for method, path in (("GET", "/webhooks"), ("POST", "/webhooks"), ("GET", "/webhooks/wh_abcdefghijklmnop"),
                         ("DELETE", "/webhooks/wh_abcdefghijklmnop"), ("POST", "/webhooks/wh_abcdefghijklmnop/rotate")):
        response = api.request(method, path, headers=headers, json={"url": HOOK})
        assert error(response, 401, "unauthorized", document)["message"] == message
        assert response.headers["www-authenticate"].startswith('Bearer realm="webhooks"')
        assert response.headers["access-control-allow-origin"] == "*"


def test_subscribe_show_rotate_delete(api: TestClient, token: dict[str, str], document: dict[str, Any]) -> None:
    created = api.post("/webhooks", headers=token, json={"url": HOOK, "events": ["entry.updated"],
                                                          "description": "our newsletter"})
    assert created.status_code == 201 and created.headers["cache-control"] == "no-store"
    body = created.json()
    conforms(document, "Subscription", body)
    assert created.headers["location"] == f"http://testserver/webhooks/{body['id']}"
    assert (body["url"], body["events"], body["description"], body["status"]) == \
        (HOOK, ["entry.updated"], "our newsletter", "active")
    assert body["secret"].startswith("whsec_") and body["license"] == "CC BY 4.0"

    shown = api.get(f"/webhooks/{body['id']}", headers=token)
    assert shown.status_code == 200 and "secret" not in shown.json()  # the secret is shown once
    conforms(document, "Subscription", shown.json())
    listed = api.get("/webhooks", headers=token).json()
    conforms(document, "SubscriptionList", listed)
    assert [s["id"] for s in listed["items"]] == [body["id"]] and listed["total"] == 1

    rotated = api.post(f"/webhooks/{body['id']}/rotate", headers=token)
    assert rotated.status_code == 200
    conforms(document, "Subscription", rotated.json())
    assert rotated.json()["secret"] not in (body["secret"], None) and rotated.json()["previousSecretExpires"]

    assert api.delete(f"/webhooks/{body['id']}", headers=token).status_code == 204
    error(api.get(f"/webhooks/{body['id']}", headers=token), 404, "not_found", document)
    assert api.get("/webhooks", headers=token).json()["total"] == 0


def test_a_token_sees_only_its_own_subscriptions(api: TestClient, state: Path, token: dict[str, str],
                                                 document: dict[str, Any]) -> None:
    mine = api.post("/webhooks", headers=token, json={"url": HOOK}).json()["id"]
    other = {"Authorization": f"Bearer {issue_token(state, 'other@example.com')}"}
    assert api.get("/webhooks", headers=other).json()["items"] == []
    for method, path in (("GET", f"/webhooks/{mine}"), ("DELETE", f"/webhooks/{mine}"),
                         ("POST", f"/webhooks/{mine}/rotate")):
        assert "for this token" in error(api.request(method, path, headers=other), 404, "not_found",
                                         document)["message"]
    assert api.get(f"/webhooks/{mine}", headers=token).status_code == 200  # untouched


def test_a_revoked_token_is_refused(api: TestClient, state: Path, token: dict[str, str],
                                     document: dict[str, Any]) -> None:
    from runtime.webhooks.sqlite_store import SQLiteStore

    assert api.get("/webhooks", headers=token).status_code == 200
    store = SQLiteStore(state / "webhooks.sqlite3")
    [issued] = store.tokens()
    assert store.revoke_token(issued.id)
    assert error(api.get("/webhooks", headers=token), 401, "unauthorized", document)["message"] == \
        "The bearer token is not valid."


def test_the_same_url_twice_is_a_conflict(api: TestClient, token: dict[str, str], document: dict[str, Any]) -> None:
    assert api.post("/webhooks", headers=token, json={"url": HOOK}).status_code == 201
    failure = error(api.post("/webhooks", headers=token, json={"url": HOOK}), 409, "conflict", document)
    assert failure["message"] == f"The subscription was not made: {HOOK} is already subscribed."
    assert "GET /webhooks lists" in failure["hint"]


@pytest.mark.parametrize("body, status, message", [
    (b"{not json", 400, "The body is not valid JSON"),
    (b'["https://hooks.petnames.example/in"]', 400, "The body must be a JSON object."),
    (b'{"url": "https://hooks.petnames.example/in", "secret": "mine"}', 400, "Unknown field 'secret' in the body."),
    (b"{}", 400, "'url' is required: the https URL that receives the events."),
    (b'{"url": 42}', 400, "'url' must be a string, not a number."),
    (b'{"url": null}', 400, "'url' must be a string, not null."),
    (b'{"url": ""}', 400, "'url' is required: the https URL that receives the events."),
    (b'{"url": "https://hooks.petnames.example/in", "events": ["entry.deleted"]}', 400,
     "Unknown event type 'entry.deleted'."),
    (b'{"url": "https://hooks.petnames.example/in", "events": []}', 400,
     "'events' must be a non-empty list of event types."),
    (b'{"url": "https://hooks.petnames.example/in", "events": ["entry.updated", "entry.updated"]}', 400,
     "'events' names an event type twice."),
    (b'{"url": "https://hooks.petnames.example/in", "description": "' + b"x" * 201 + b'"}', 400,
     "'description' must be text of at most 200 characters."),
    (b'{"url": "http://hooks.petnames.example/in"}', 400,
     "'url' is not accepted: the URL must use https:// (plain http is not accepted)."),
    (b'{"url": "https://10.0.0.1/in"}', 400,
     "'url' is not accepted: 10.0.0.1 is a private address; deliveries go to public addresses only."),
    (b'{"url": "https://169.254.169.254/latest"}', 400,
     "'url' is not accepted: 169.254.169.254 is a cloud metadata address; deliveries go to public addresses only."),
    (b'{"url": "not a url"}', 400, "'url' is not accepted: the URL contains spaces or control characters."),
])
def test_bad_input_is_a_clear_error(api: TestClient, token: dict[str, str], document: dict[str, Any], body: bytes,
                                    status: int, message: str) -> None:
    response = api.post("/webhooks", headers={**token, "content-type": "application/json"}, content=body)
    assert error(response, status, "bad_request", document)["message"].startswith(message)


def test_the_wrong_content_type_is_415(api: TestClient, token: dict[str, str], document: dict[str, Any]) -> None:
    response = api.post("/webhooks", headers={**token, "content-type": "text/plain"}, content=HOOK.encode())
    error(response, 415, "unsupported_media_type", document)


def test_an_oversized_body_is_413(dist: Path, state: Path, make_client: Callable[..., TestClient],
                                  document: dict[str, Any]) -> None:
    api = make_client(dist, rate_limit=0, state_dir=state, max_body=1024)
    token = {"Authorization": f"Bearer {issue_token(state)}"}
    response = api.post("/webhooks", headers=token, json={"url": HOOK, "description": "x" * 2000})
    error(response, 413, "payload_too_large", document)


def test_other_methods_are_405_with_allow(api: TestClient, token: dict[str, str], document: dict[str, Any]) -> None:
    for method, path, allow in (("PUT", "/webhooks", "GET, HEAD, POST"),
                                ("PATCH", "/webhooks/wh_abcdefghijklmnop", "GET, HEAD, DELETE"),
                                ("GET", "/webhooks/wh_abcdefghijklmnop/rotate", "POST")):
        response = api.request(method, path, headers=token)
        error(response, 405, "method_not_allowed", document)
        assert response.headers["allow"] == allow


def test_status_reports_webhooks_once_they_are_used(api: TestClient, token: dict[str, str]) -> None:
    assert "webhooks" not in api.get("/api/status").json()["checks"]
    api.post("/webhooks", headers=token, json={"url": HOOK})
    api.app.runtime.health.forget_probes()  # checks are evaluated at most every 10 s; do not wait in a test
    assert api.get("/api/status").json()["checks"]["webhooks"] == {
        "status": "ok", "detail": "1 subscription (0 failing, 0 disabled), 0 deliveries pending, 0 failed in the "
                                  "last 24 h"}


def test_status_degrades_when_deliveries_are_stuck(api: TestClient, token: dict[str, str]) -> None:
    """No worker runs here (no lifespan): an event queued two minutes ago is still due, so deliveries are stuck."""
    api.post("/webhooks", headers=token, json={"url": HOOK})
    store = api.app.webhooks.store
    long_ago = time.time() - 120
    store.derive("another-build", lambda previous, baseline: Plan({}, [Draft("evt_1", "entry.updated", b"{}")]),
                 long_ago)
    api.app.runtime.health.forget_probes()
    status = api.get("/api/status").json()
    assert status["status"] == "degraded"
    detail = status["checks"]["webhooks"]["detail"]
    assert status["checks"]["webhooks"]["status"] == "fail" and detail.startswith(
        "1 subscription (0 failing, 0 disabled), 1 delivery pending, 0 failed in the last 24 h; deliveries are stuck: "
        "one has been due for 1")

"""The `/webhooks` endpoints: subscribe, list, show, delete, rotate the secret. Bearer onboarding token required.

A token sees and manages only the subscriptions made with it; any other id is a 404, so ids cannot be
probed. Subscriptions the operator made with the CLI belong to no token and are managed there.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from petgen.contract.resources import encode
from runtime.http.errors import JSON, error_response
from runtime.http.params import BadBody, json_object, shown
from runtime.http.routing import any_method
from runtime.webhooks.destinations import Refused, check_destination
from runtime.webhooks.model import EVENT_TYPES, MAX_DESCRIPTION, Subscription, Token, new_id, new_secret, token_hash
from runtime.webhooks.store import Conflict, StoreUnavailable

if TYPE_CHECKING:
    from runtime.webhooks.facility import Webhooks

Endpoint = Callable[[Request], Awaitable[Response]]
PER_TOKEN = 20  # subscriptions one onboarding token may hold
FIELDS = ("url", "events", "description")
LIST_HINT = "GET /webhooks lists the subscriptions of your token"


class BadInput(Exception):
    def __init__(self, status: int, message: str, hint: str) -> None:
        self.status, self.message, self.hint = status, message, hint


def parse_subscription_request(content_type: str, body: bytes) -> tuple[str, tuple[str, ...], str]:
    """(url, events, description) from a POST /webhooks body; BadInput saying what to fix."""
    try:
        data = json_object(body, content_type, '{"url": "https://…", "events": ["entry.updated"]}')
    except BadBody as exc:
        raise BadInput(exc.status, exc.message, exc.hint) from None
    unknown = [key for key in data if key not in FIELDS]
    if unknown:
        raise BadInput(400, f"Unknown field {shown(str(unknown[0]))!r} in the body.",
                       "the fields are url (required), events and description")
    url = data.get("url")
    if "url" in data and not isinstance(url, str):
        kind = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "an object"}
        raise BadInput(400, f"'url' must be a string, not {kind.get(type(url), 'null')}.",
                       'send {"url": "https://example.com/hooks/petnames"}')
    if not url:
        raise BadInput(400, "'url' is required: the https URL that receives the events.",
                       'send {"url": "https://example.com/hooks/petnames"}')
    events = data.get("events", list(EVENT_TYPES))
    if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
        raise BadInput(400, "'events' must be a non-empty list of event types.",
                       f"choose from {', '.join(EVENT_TYPES)}, or leave 'events' out for all of them")
    for event in events:
        if event not in EVENT_TYPES:
            raise BadInput(400, f"Unknown event type {shown(event)!r}.",
                           f"the event types are {', '.join(EVENT_TYPES)}")
    if len(set(events)) != len(events):
        raise BadInput(400, "'events' names an event type twice.", "name each event type once")
    description = data.get("description", "")
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        raise BadInput(400, f"'description' must be text of at most {MAX_DESCRIPTION} characters.",
                       "describe the subscription briefly, or leave it out")
    return url, tuple(events), description


def webhook_routes(webhooks: Webhooks) -> list[Route]:
    """The routes, before the JSON fallbacks; each answers every method (405 with `Allow` for the others)."""

    def respond(body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
        response = Response(encode(body), status_code=status, media_type=JSON, headers=headers)
        response.headers["cache-control"] = "no-store"
        return response

    def unavailable(exc: StoreUnavailable) -> Response:
        return error_response(503, "The webhook store is unavailable; nothing was changed.",
                              "try again in a minute; /api/status says when it is back", headers={"retry-after": "30"})

    def not_allowed(request: Request, allow: str) -> Response:
        return error_response(405, f"Method {request.method} is not allowed on {shown(request.url.path)}.",
                              f"allowed: {allow}", headers={"allow": allow})

    def authorised(handler: Callable[[Request, Token], Awaitable[Response]]) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            header = request.headers.get("authorization", "")
            scheme, _, credential = header.partition(" ")
            challenge = 'Bearer realm="webhooks"'
            if not header:
                return error_response(401, "A bearer token is required to manage webhook subscriptions.",
                                      "send 'Authorization: Bearer <your onboarding token>'; the operator issues one "
                                      "(see /docs#webhooks)", headers={"www-authenticate": challenge})
            if scheme.lower() != "bearer" or not credential.strip():
                return error_response(401, "The Authorization header must be 'Bearer <token>'.",
                                      "send 'Authorization: Bearer <your onboarding token>'",
                                      headers={"www-authenticate": challenge})
            store = webhooks.store
            if store is None:
                return unavailable(StoreUnavailable(webhooks.problem or ""))
            try:
                token = await anyio.to_thread.run_sync(store.find_token, token_hash(credential.strip()))
                if token is None:
                    return error_response(401, "The bearer token is not valid.",
                                          "check the onboarding token the operator issued to you",
                                          headers={"www-authenticate": f'{challenge}, error="invalid_token"'})
                return await handler(request, token)
            except StoreUnavailable as exc:
                return unavailable(exc)

        return endpoint

    async def owned(request: Request, token: Token) -> Subscription | Response:
        sid = request.path_params["id"]
        assert webhooks.store is not None
        subscription = await anyio.to_thread.run_sync(webhooks.store.subscription, sid)
        if subscription is None or subscription.owner != token.id:
            return error_response(404, f"No webhook subscription {shown(sid)!r} for this token.", LIST_HINT)
        return subscription

    @authorised
    async def collection(request: Request, token: Token) -> Response:
        store, now = webhooks.store, time.time()
        assert store is not None
        if request.method in ("GET", "HEAD"):
            mine = await anyio.to_thread.run_sync(lambda: store.subscriptions(token.id))
            return respond({"items": [s.resource({}, now=now) for s in mine], "total": len(mine),
                            **webhooks.license()})
        try:
            url, events, description = parse_subscription_request(request.headers.get("content-type", ""),
                                                                  await request.body())
            await check_destination(url, webhooks.policy)
        except BadInput as exc:
            return error_response(exc.status, exc.message, exc.hint)
        except Refused as exc:
            return error_response(400, f"'url' is not accepted: {exc}.",
                                  "use the public https URL of your endpoint")
        subscription = Subscription(id=new_id("wh_"), url=url, events=events, description=description,
                                    owner=token.id, created=now, secret=new_secret())
        try:
            await anyio.to_thread.run_sync(lambda: store.add_subscription(subscription, limit=PER_TOKEN))
        except Conflict as exc:
            return error_response(409, f"The subscription was not made: {exc}.",
                                  f"{LIST_HINT}; rotate a secret you lost, or delete one first", code="conflict")
        location = f"{webhooks.base_url()}/webhooks/{subscription.id}"
        return respond(subscription.resource(webhooks.license(), now=now, with_secret=True), 201,
                       {"location": location})

    @authorised
    async def one(request: Request, token: Token) -> Response:
        found = await owned(request, token)
        if isinstance(found, Response):
            return found
        store = webhooks.store
        assert store is not None
        if request.method == "DELETE":
            await anyio.to_thread.run_sync(store.remove_subscription, found.id)
            return Response(status_code=204, headers={"cache-control": "no-store"})
        return respond(found.resource(webhooks.license(), now=time.time()))

    @authorised
    async def rotate(request: Request, token: Token) -> Response:
        found = await owned(request, token)
        if isinstance(found, Response):
            return found
        store, now = webhooks.store, time.time()
        assert store is not None
        rotated = found.rotated(now)
        await anyio.to_thread.run_sync(store.save_subscription, rotated)
        return respond(rotated.resource(webhooks.license(), now=now, with_secret=True))

    def methods(allow: str, endpoint: Endpoint) -> Endpoint:
        allowed = {m.strip() for m in allow.split(",")}

        async def dispatch(request: Request) -> Response:
            if request.method not in allowed:
                return not_allowed(request, allow)
            return await endpoint(request)

        return dispatch

    return [  # any method: `dispatch` answers 405 with the path's own Allow header
        any_method("/webhooks", methods("GET, HEAD, POST", collection)),
        any_method("/webhooks/{id}", methods("GET, HEAD, DELETE", one)),
        any_method("/webhooks/{id}/rotate", methods("POST", rotate)),
    ]


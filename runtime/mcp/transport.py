"""The HTTP side of `POST /mcp`: every refusal a JSON-RPC error, the Accept header negotiated.

The MCP SDK answers some refusals in plain text (Host 421, Origin 403), some with an empty body
(406 and 405 on its 2026-07-28 path), and refuses a client that accepts only `text/event-stream`.
`McpEndpoint` stands in front of it and checks, in this order, each answered as a JSON-RPC error
that carries the request's id when the body had a readable one:

    Host (421) → Origin (403, only when the operator restricted origins) → Content-Type (415)
    → Accept (406) → the JSON-RPC envelope (400: -32700 / -32600 / -32602) → the SDK

The SDK then answers JSON; a client that accepts only `text/event-stream` gets that response as
one SSE `message` event. A `fast` answerer (runtime/mcp/server.py: a plain `tools/call` of `search` at a
protocol version the SDK serves statelessly) may answer a JSON request itself, byte for byte as
the SDK would, without the SDK's per-request transport, session and validation. `McpErrorEnvelope` turns the service's error envelope, sent by the layers
around the endpoint (429, 413, 500), into a JSON-RPC error too, so /mcp speaks one error shape.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import lru_cache
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import orjson

from runtime.http.cors import normalise_origin
from runtime.http.params import header_map
from runtime.mcp.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    RATE_LIMITED,
    BadMessage,
    RequestId,
    error_body,
    parse_message,
)

JSON = b"application/json"
SSE = b"text/event-stream"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
HEADERS = frozenset({b"host", b"origin", b"content-type", b"accept", b"mcp-protocol-version"})  # the ones read
FastAnswer = Callable[[dict[str, Any]], bytes | None]  # a JSON-RPC request -> its response body, or None


@lru_cache(maxsize=256)  # clients send the same few Accept headers: each is parsed once
def negotiate(accept: str | None) -> str | None:
    """`json`, `sse` (the client accepts `text/event-stream` but not JSON), or None (neither).

    No Accept header, or an empty one, accepts anything (RFC 9110 §12.5.1). Quality values count:
    `application/json;q=0` refuses JSON. JSON wins whenever it is acceptable: this server is
    stateless and sends one response per request, which needs no stream.
    """
    if accept is None or not accept.strip():
        return "json"
    ranges = []
    for part in accept.split(","):
        media_type, *params = (p.strip() for p in part.split(";"))
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    quality = 0.0  # an unreadable weight accepts nothing rather than everything
        ranges.append((media_type.lower(), quality))
    if _quality(ranges, "application/json") > 0:
        return "json"
    return "sse" if _quality(ranges, "text/event-stream") > 0 else None


def _quality(ranges: list[tuple[str, float]], media_type: str) -> float:
    """The weight of the most specific range that matches `media_type` (RFC 9110 §12.5.1)."""
    group = media_type.split("/")[0] + "/*"
    best, weight = -1, 0.0
    for media_range, quality in ranges:
        specificity = {media_type: 2, group: 1, "*/*": 0}.get(media_range, -1)
        if specificity > best:
            best, weight = specificity, quality
    return weight


def host_allowed(host: str, public_netloc: str) -> bool:
    """The public host (with or without its port) and loopback names with any port: a page on another
    site that rebinds its DNS name to this server still sends its own name, and is refused."""
    name = host[1:host.index("]")] if host.startswith("[") and "]" in host else host.rsplit(":", 1)[0]
    port = host[len(name) + 2 if host.startswith("[") else len(name):]
    if port and not (port[0] == ":" and all("0" <= c <= "9" for c in port[1:])):
        return False  # `127.0.0.1:80.evil.example` names no loopback host
    return host == public_netloc or name.lower() in (_public_name(public_netloc), *LOOPBACK)


@lru_cache(maxsize=64)  # the service's own netlocs, a handful
def _public_name(public_netloc: str) -> str:
    return urlsplit(f"//{public_netloc}").hostname or public_netloc  # lowercase, IPv6 without brackets


def refusal(status: int, code: int, message: str, request_id: RequestId | None = None, *, reason: str,
            hint: str | None = None) -> Callable[..., Any]:
    """An ASGI response carrying a JSON-RPC error; `reason` and `hint` go into `error.data` like the service's
    error envelope (`code`, `hint`), so a client can act on it without parsing the message."""
    data = {"code": reason, **({"hint": hint} if hint else {})}
    body = error_body(request_id, code, message, data)

    async def respond(send: Callable[..., Any]) -> None:
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", JSON), (b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

    return respond


class McpEndpoint:
    """The checks above, then the SDK's Streamable HTTP app with the body it can take."""

    def __init__(self, app: Callable[..., Any], *, public_netloc: str, allowed_origins: Collection[str] = (),
                 other_netlocs: Collection[str] = (), fast: FastAnswer | None = None) -> None:
        self.app = app
        self.fast = fast
        self.public_netloc = public_netloc
        # Also the runtime's own address behind a CDN (a proxy such as Netlify's sends its Host, not the public
        # one) and the hosts the operator allowed.
        self.netlocs = (public_netloc, *other_netlocs)
        self.allowed_origins = frozenset(normalise_origin(origin) for origin in allowed_origins)
        # Protocol versions the SDK answers on its stateless path (no header means its default, one of these).
        # Imported here, not with this module: the app wraps every request in `McpErrorEnvelope` from the
        # start, and the SDK is loaded only once /mcp is (runtime/mcp/lazy.py).
        from mcp.server.streamable_http_manager import HANDSHAKE_PROTOCOL_VERSIONS

        self.stateless_versions = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        body = b""
        while True:  # the body size is bounded by the runtime's GuardMiddleware
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # nobody to answer
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers = header_map(scope["headers"], HEADERS, first=False)
        try:
            rpc, problem = parse_message(body), None
        except BadMessage as exc:
            rpc, problem = None, exc
        request_id = rpc.get("id") if rpc is not None else problem.request_id if problem else None
        mode = negotiate(headers.get("accept"))
        refused = self._refuse(headers, mode, request_id)
        if refused is None and problem is not None:
            refused = refusal(400, problem.code, problem.message, request_id, reason="bad_request",
                              hint="send one JSON-RPC 2.0 message object, e.g. "
                                   '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')
        if refused is not None:
            await refused(send)
            return
        assert rpc is not None
        version = headers.get("mcp-protocol-version")
        if self.fast is not None and mode == "json" and (version is None or version in self.stateless_versions):
            answer = self.fast(rpc)
            if answer is not None:
                await send({"type": "http.response.start", "status": 200, "headers": [
                    (b"content-type", JSON), (b"content-length", str(len(answer)).encode())]})
                await send({"type": "http.response.body", "body": answer})
                return
        forwarded = orjson.dumps(rpc)  # exactly what was checked, with the id normalised (7.0 → 7)
        # The media type was checked case-insensitively (RFC 9110); the SDK compares it exactly, so it gets it
        # spelt its way.
        scope = {**scope, "headers": [
            *((k, v) for k, v in scope["headers"] if k not in (b"accept", b"content-length", b"content-type")),
            (b"accept", JSON + b", " + SSE), (b"content-type", JSON),
            (b"content-length", str(len(forwarded)).encode())]}
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": forwarded, "more_body": False}

        await self.app(scope, replay, ResponseShaper(send, sse=mode == "sse", request_id=request_id))

    def _refuse(self, headers: dict[str, str], mode: str | None, request_id: RequestId | None) -> Any:
        host = headers.get("host", "")
        if not any(host_allowed(host, netloc) for netloc in self.netlocs):
            return refusal(421, INVALID_REQUEST, f"Misdirected request: this MCP server does not answer for the "
                           f"host '{host[:100]}'.", request_id, reason="misdirected_request",
                           hint=f"send the request to {self.public_netloc}")
        origin = headers.get("origin")
        if self.allowed_origins and origin is not None and normalise_origin(origin) not in self.allowed_origins:
            return refusal(403, INVALID_REQUEST, f"Forbidden: the origin '{origin[:100]}' may not call this MCP "
                           "server.", request_id, reason="forbidden",
                           hint="the operator allows only these origins: " + ", ".join(sorted(self.allowed_origins)))
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return refusal(415, INVALID_REQUEST, "Unsupported Media Type: send JSON-RPC messages as "
                           "application/json.", request_id, reason="unsupported_media_type",
                           hint="set Content-Type: application/json")
        if mode is None:
            return refusal(406, INVALID_REQUEST, "Not Acceptable: the answer is application/json or "
                           "text/event-stream, and the Accept header allows neither.", request_id,
                           reason="not_acceptable", hint="send Accept: application/json, text/event-stream")
        return None


class ResponseShaper:
    """The SDK's response as the client can take it: a 200 JSON-RPC response reframed as one SSE event for a
    client that accepts only `text/event-stream`, and any error the SDK sends as text or with an empty body
    made a JSON-RPC error."""

    def __init__(self, send: Callable[..., Any], *, sse: bool, request_id: RequestId | None) -> None:
        self.send = send
        self.sse = sse
        self.request_id = request_id
        self.start: dict[str, Any] | None = None
        self.buffer = b""

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            content_type = dict(message.get("headers", [])).get(b"content-type", b"")
            is_json = content_type.split(b";")[0].strip() == JSON
            rewrite = (message["status"] >= 400 and not is_json) or (self.sse and message["status"] == 200 and is_json)
            if not rewrite:
                if message["status"] == 202:  # accepted, no body: the SDK names a media type all the same
                    message = {**message, "headers": [(k, v) for k, v in message.get("headers", [])
                                                      if k != b"content-type"]}
                await self.send(message)
                return
            self.start = message
            return
        if message["type"] != "http.response.body" or self.start is None:
            await self.send(message)
            return
        self.buffer += message.get("body", b"")
        if message.get("more_body", False):
            return
        status = self.start["status"]
        if status == 200:
            body = b"event: message\ndata: " + self.buffer + b"\n\n"
            content_type = SSE
        else:
            text = " ".join(self.buffer.decode("utf-8", "replace").split())[:200]
            phrase = _phrase(status)
            body = error_body(self.request_id, INTERNAL_ERROR if status >= 500 else INVALID_REQUEST,
                              f"{phrase}: {text}." if text else f"{phrase}.")
            content_type = JSON
        headers = [(k, v) for k, v in self.start.get("headers", []) if k not in (b"content-type", b"content-length")]
        await self.send({"type": "http.response.start", "status": status, "headers": [
            *headers, (b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
        await self.send({"type": "http.response.body", "body": body})


class McpErrorEnvelope:
    """On the MCP path, the service's error envelope (`{"error": {"code": "rate_limited", …}}`, sent by the
    rate limiter, the body-size guard or the 500 handler before or around the MCP endpoint) becomes a JSON-RPC
    error whose `data` keeps the envelope's `code`, `hint` and `docs`. Other paths pass straight through."""

    def __init__(self, app: Callable[..., Any], *, path: str = "/mcp") -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] | None = None
        buffer = b""

        async def translating_send(message: dict[str, Any]) -> None:
            nonlocal start, buffer
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = message  # held until the body shows whether it is an envelope
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            buffer += message.get("body", b"")
            if message.get("more_body", False):
                return
            body = envelope_as_rpc_error(start["status"], buffer)
            headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, translating_send)


def envelope_as_rpc_error(status: int, body: bytes) -> bytes:
    """The service's error envelope as a JSON-RPC error (id null: these refusals come before the body is read);
    anything else unchanged."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    error = data.get("error") if isinstance(data, dict) and "jsonrpc" not in data else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return body
    code = RATE_LIMITED if status == 429 else INTERNAL_ERROR if status >= 500 else INVALID_REQUEST
    extra = {key: error[key] for key in ("code", "hint", "docs") if key in error}
    return error_body(None, code, str(error.get("message", _phrase(status))), extra)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"

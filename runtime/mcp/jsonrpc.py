"""JSON-RPC 2.0 for `/mcp`: what a valid incoming message is, and the one shape of every error that leaves.

The MCP SDK takes what pydantic accepts: `"id": 1.0` fails its strict integer and the request is
silently treated as a notification (202, never answered), and a wrong `jsonrpc` comes back as a
pydantic report under `-32602`. So the envelope is checked here first, against the JSON-RPC 2.0
and MCP rules, and answered with the code the spec names and a one-line message.
"""

from __future__ import annotations

from typing import Any

import orjson

from petgen.contract.limits import MCP_MAX_DEPTH

__all__ = ["INTERNAL_ERROR", "INVALID_PARAMS", "INVALID_REQUEST", "METHOD_NOT_FOUND", "PARSE_ERROR",
           "RATE_LIMITED", "SAFE_INTEGER", "BadMessage", "RequestId", "error_body", "parse_message", "readable_id"]

# The codes of JSON-RPC 2.0 §5.1 (the MCP SDK's `mcp_types` has the same; not imported from there, because
# importing the SDK takes seconds and the runtime loads it only when /mcp is first used: runtime/app.py).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# -32000..-32019 is the band MCP leaves to implementations; the SDK uses -32000 and -32001 itself.
RATE_LIMITED = -32010
SAFE_INTEGER = 2 ** 53 - 1  # the largest id a JavaScript client can hold exactly (documented in the OpenAPI)

RequestId = int | str


class BadMessage(Exception):
    """A message the server cannot take, with its JSON-RPC code and the request id if one was readable."""

    def __init__(self, code: int, message: str, request_id: RequestId | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


def error_body(request_id: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC error response; `id` is null when the request's id could not be read (JSON-RPC 2.0 §5)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})


def _is_integer(value: Any) -> bool:
    return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))


def _request_id(value: Any) -> RequestId | None:
    """The id as MCP allows it (a string, or an integer within ±(2^53−1)), else None.

    An integral number such as `7.0` counts as the integer 7: JSON has one number type, and JSON
    Schema (which MCP's schema is written in) calls 7.0 an integer. The answer carries `7`.
    """
    if isinstance(value, str):
        return value
    if not _is_integer(value) or abs(value) > SAFE_INTEGER:
        return None
    return int(value)


def readable_id(message: Any) -> RequestId | None:
    """The id to answer an error with: the message's own id when it is a valid one, else null."""
    return _request_id(message.get("id")) if isinstance(message, dict) else None


def parse_message(body: bytes) -> dict[str, Any]:
    """The one JSON-RPC message in `body`, with its id normalised; raise BadMessage naming what is wrong."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        reason = str(exc).split(":", 1)[0]  # orjson's reason without the position
        raise BadMessage(PARSE_ERROR, f"Parse error: the body is not valid JSON ({reason}).") from None
    if isinstance(message, list):
        # MCP dropped JSON-RPC batching in 2025-06-18; the SDK takes single messages only.
        raise BadMessage(INVALID_REQUEST, "Invalid Request: batches are not supported; send one JSON-RPC message "
                                          "per POST.")
    if not isinstance(message, dict):
        raise BadMessage(INVALID_REQUEST, "Invalid Request: the body must be a JSON-RPC message object.")
    request_id = readable_id(message)
    # a message cannot nest deeper than it has brackets (those in strings count too): most are not walked
    raw = body if isinstance(body, bytes) else str(body).encode()
    if raw.count(b"{") + raw.count(b"[") > MCP_MAX_DEPTH and nested_deeper(message, MCP_MAX_DEPTH):
        raise BadMessage(INVALID_REQUEST, f"Invalid Request: the message nests objects and arrays more than "
                                          f"{MCP_MAX_DEPTH} levels deep.", request_id)
    if message.get("jsonrpc") != "2.0":
        raise BadMessage(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be exactly "2.0".', request_id)
    if "id" in message:
        if request_id is None and not (message["id"] is None and "error" in message and "method" not in message):
            raise BadMessage(INVALID_REQUEST, "Invalid Request: 'id' must be a string or an integer within "
                                              "±(2^53−1)" + ("; null is not allowed in requests." if message["id"]
                                                             is None else f", not {_kind(message['id'])}."))
        message["id"] = request_id
    if "method" in message:
        if not isinstance(message["method"], str):  # an unknown name, "" included, is the SDK's -32601
            raise BadMessage(INVALID_REQUEST, "Invalid Request: 'method' must be a string.", request_id)
        if "result" in message or "error" in message:
            raise BadMessage(INVALID_REQUEST, "Invalid Request: a request has no 'result' or 'error'.", request_id)
        if message.get("params") is not None and not isinstance(message["params"], dict):
            raise BadMessage(INVALID_PARAMS, "Invalid params: 'params' must be an object (MCP uses named "
                                             "parameters).", request_id)
        return message
    _check_response(message)
    return message


def _kind(value: Any) -> str:
    """What a JSON value that is not a valid id is, in words."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not value.is_integer():
        return "a number with a fraction"
    if isinstance(value, (int, float)):
        return "a number beyond that range"
    return {list: "an array", dict: "an object"}.get(type(value), "this")


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether `value` (parsed JSON) nests objects and arrays more than `limit` levels deep (without recursion)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return any(isinstance(item, (dict, list)) for item in level)


def _check_response(message: dict[str, Any]) -> None:
    """A client's response to a server request (accepted and dropped: this server sends no requests)."""
    if "id" not in message:
        raise BadMessage(INVALID_REQUEST, "Invalid Request: a message needs a 'method' (a request or a "
                                          "notification) or an 'id' with a 'result' or 'error' (a response).")
    if ("result" in message) == ("error" in message):
        raise BadMessage(INVALID_REQUEST, "Invalid Request: a response has exactly one of 'result' and 'error'.",
                         message["id"])
    if "result" in message and not isinstance(message["result"], dict):
        raise BadMessage(INVALID_REQUEST, "Invalid Request: a response's 'result' must be an object.", message["id"])
    error = message.get("error")
    if "error" in message and not (isinstance(error, dict) and _is_integer(error.get("code"))
                                   and isinstance(error.get("message"), str)):
        raise BadMessage(INVALID_REQUEST, "Invalid Request: 'error' must be an object with an integer 'code' "
                                          "and a string 'message'.", message["id"])

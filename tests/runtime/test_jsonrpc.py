"""The JSON-RPC envelope check: the code the spec names, the id when it is readable, one-line messages."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from runtime.mcp.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, BadMessage, error_body, parse_message


@pytest.mark.parametrize(("body", "code", "request_id"), [
    (b"{nope", PARSE_ERROR, None),
    (b"", PARSE_ERROR, None),
    (b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}', PARSE_ERROR, None),  # not representable: not JSON we can read
    (b'"ping"', INVALID_REQUEST, None),
    (b"[]", INVALID_REQUEST, None),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID_REQUEST, None),  # batches ended with MCP 2025-06-18
    (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":2.0,"id":"a","method":"ping"}', INVALID_REQUEST, "a"),
    (b'{"id":1,"method":"ping"}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":100000000000000000000000000000,"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":1,"method":5}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}', INVALID_PARAMS, 1),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}', INVALID_PARAMS, 1),
    (b'{"jsonrpc":"2.0","id":1}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":"2.0"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":1,"result":5}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"x"}}', INVALID_REQUEST, 1),
    (b'{"jsonrpc":"2.0","id":null,"result":{}}', INVALID_REQUEST, None),
])
def test_bad_messages_get_the_code_the_spec_names(body: bytes, code: int, request_id: Any) -> None:
    with pytest.raises(BadMessage) as caught:
        parse_message(body)
    assert (caught.value.code, caught.value.request_id) == (code, request_id)
    message = caught.value.message
    assert "\n" not in message and "pydantic" not in message and len(message) < 200


@pytest.mark.parametrize(("body", "expected_id"), [
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', 1),
    (b'{"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{}}', "abc"),
    (b'{"jsonrpc":"2.0","id":7.0,"method":"ping"}', 7),  # an integral number is an integer (JSON Schema)
    (b'{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}', -9007199254740991),
    (b'{"jsonrpc":"2.0","id":1,"method":"","params":null}', 1),  # an unknown method is the SDK's -32601
    (b'{"jsonrpc":"2.0","id":3,"result":{}}', 3),
    (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}', None),
])
def test_valid_messages_pass_with_the_id_normalised(body: bytes, expected_id: Any) -> None:
    message = parse_message(body)
    assert message["id"] == expected_id and type(message["id"]) is type(expected_id)


def test_a_notification_has_no_id() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == {
        "jsonrpc": "2.0", "method": "notifications/initialized"}


def test_error_body_keeps_a_null_id() -> None:
    assert orjson.loads(error_body(None, INVALID_REQUEST, "x", {"code": "bad_request"})) == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x", "data": {"code": "bad_request"}}}

"""Properties of the query parsers: any query string is either a valid query within the bounds or a
400 with a message and a hint; never another exception, never a value the contract does not allow."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from petgen.contract.limits import MCP_MAX_DEPTH
from runtime.builds.dist import Dist
from runtime.http.params import BadRequest, whole_number
from runtime.names import MAX_OFFSET, parse_list_query
from runtime.search import parse_search_query

PROPERTY = settings(max_examples=300, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# Query strings as clients send them: the parameter names (and near-misses), and values made of
# digits, signs, spaces, underscores, non-ASCII digits, percent escapes and anything else.
names = st.sampled_from(["category", "mood", "limit", "offset", "q", "catgory", "Limit", "", "limit[]", "gender",
                         "region", "relationship", "language"])
values = st.one_of(
    st.text(alphabet="0123456789+-_ .eE%٥５\u00a0", max_size=12),
    st.integers(min_value=-10, max_value=10 ** 12).map(str),
    st.text(max_size=20),
)
query_strings = st.one_of(
    st.lists(st.tuples(names, values), max_size=5).map(urlencode),
    st.text(max_size=60),
)


@pytest.fixture(scope="module")
def loaded(big_dist: Path) -> Dist:
    return Dist.load(big_dist)


@PROPERTY
@given(query_strings)
def test_list_query_is_valid_or_a_400(loaded: Dist, query_string: str) -> None:
    try:
        query = parse_list_query(query_string, loaded)
    except BadRequest as exc:
        assert exc.message and exc.hint
        return
    assert 1 <= query.limit <= 200 and 0 <= query.offset <= MAX_OFFSET
    assert query.filters.get("category") in (None, *loaded.categories)
    assert query.filters.get("mood") in (None, *loaded.moods)
    for name in ("relationship", "gender", "region", "language"):
        assert query.filters.get(name) in (None, *loaded.facets[name])


@PROPERTY
@given(query_strings)
def test_search_query_is_valid_or_a_400(query_string: str) -> None:
    try:
        q, limit = parse_search_query(query_string)
    except BadRequest as exc:
        assert exc.message and exc.hint
        return
    assert 2 <= len(q) <= 200 and q == " ".join(q.split()) and 1 <= limit <= 50


@PROPERTY
@given(st.text(max_size=25))
@example("0" * 18 + "5")  # was refused as out of range ("must be from 1 to 200, not 5"): 19 characters
def test_a_number_is_plain_ascii_digits_within_bounds(raw: str) -> None:
    plain = raw != "" and all("0" <= c <= "9" for c in raw)
    try:
        value = whole_number("limit", raw, 1, 200, 20)
    except BadRequest:
        assert not plain or not 1 <= int(raw) <= 200
    else:
        assert plain and value == int(raw)


@PROPERTY
@given(st.one_of(st.none(), st.sampled_from(["tiere", "suesses"])), st.integers(1, 200), st.integers(0, MAX_OFFSET))
def test_a_valid_query_round_trips(loaded: Dist, category: str | None, limit: int, offset: int) -> None:
    params = {"limit": limit, "offset": offset, **({"category": category} if category else {})}
    query = parse_list_query(urlencode(params), loaded)
    assert (query.filters.get("category"), query.limit, query.offset) == (category, limit, offset)


def test_header_map_decodes_only_the_named_headers_first_or_last() -> None:
    from runtime.http.params import header_map

    raw = [(b"host", b"a"), (b"prefer", b"streaming=true"), (b"x-other", b"\xff"), (b"prefer", b"later")]
    assert header_map(raw, frozenset({b"prefer", b"accept"})) == {"prefer": "streaming=true"}  # as Headers.get
    assert header_map(raw, frozenset({b"prefer", b"host"}), first=False) == {"host": "a", "prefer": "later"}


def test_read_body_joins_chunks_and_a_disconnect_is_starlettes() -> None:
    import asyncio

    from starlette.requests import ClientDisconnect

    from runtime.http.params import read_body

    def receiver(*messages: dict) -> Any:
        queue = list(messages)

        async def receive() -> dict:
            return queue.pop(0)
        return receive

    chunks = receiver({"type": "http.request", "body": b'{"query": ', "more_body": True},
                      {"type": "http.request", "body": b'"maus"}'})
    assert asyncio.run(read_body(chunks)) == b'{"query": "maus"}'
    gone = receiver({"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"})
    with pytest.raises(ClientDisconnect):
        asyncio.run(read_body(gone))


@pytest.mark.parametrize("depth", [MCP_MAX_DEPTH - 1, MCP_MAX_DEPTH, MCP_MAX_DEPTH + 1])
def test_nesting_is_checked_however_few_brackets_a_body_has(depth: int) -> None:
    """A message is walked for its depth only when it has more brackets than the limit: at the limit and one
    beyond, with no bracket to spare, the answer is the walk's."""
    from runtime.mcp.jsonrpc import BadMessage, parse_message

    body = b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": ' + b"[" * (depth - 2) + b"]" * (depth - 2) + b"}}"
    assert body.count(b"{") + body.count(b"[") == depth
    if depth > MCP_MAX_DEPTH:
        with pytest.raises(BadMessage, match="levels deep"):
            parse_message(body)
        with pytest.raises(BadMessage, match="levels deep"):
            parse_message(body.decode())
    else:
        assert parse_message(body)["id"] == 1

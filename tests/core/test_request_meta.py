"""A request's ``_meta`` is what the schema allows, or the request is refused (-32602).

``_meta`` is an object in every revision, and its ``progressToken`` a string or an
integer. A request carrying anything else is answered ``Invalid params`` before its
handler runs: it is never run with a token it could not be sent progress for, and a
conformance checker never sees another error (say, ``Resource not found``) in its place.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.testing import client_requests
from trimcp.wire import ErrorResponse, Response

from ._support import served


def _server(ran: list[str]) -> trimcp.Server:
    server = trimcp.Server("meta")

    @server.tool()
    async def work(ctx: trimcp.ToolContext) -> str:
        ran.append(repr(ctx.meta.get("progressToken")))
        return "ok"

    return server


@pytest.mark.parametrize(
    "meta",
    [None, [], "x", 1, {"progressToken": None}, {"progressToken": True}, {"progressToken": 1.5},
     {"progressToken": {}}, {"progressToken": []}],
)  # fmt: skip
async def test_a_meta_the_schema_rules_out_is_invalid_params(meta: Any) -> None:
    ran: list[str] = []
    async with served(_server(ran)) as (peer, _session):
        for request_id, method, params in [
            (1, "ping", {"_meta": meta}),
            (2, "tools/call", {"name": "work", "arguments": {}, "_meta": meta}),
        ]:
            reply = await peer.request(request_id, method, params)
            assert isinstance(reply, ErrorResponse), reply
            assert reply.error.code == -32602
            assert "_meta" in reply.error.message
    assert ran == []


@pytest.mark.parametrize(
    ("meta", "token"),
    [({}, "None"), ({"progressToken": "t"}, "'t'"), ({"progressToken": 7}, "7"),
     ({"progressToken": 7, "other": None}, "7")],
)  # fmt: skip
async def test_a_meta_the_schema_allows_is_served(meta: dict[str, Any], token: str) -> None:
    ran: list[str] = []
    async with served(_server(ran)) as (peer, _session):
        reply = await peer.request(1, "ping", {"_meta": meta})
        assert isinstance(reply, Response), reply
        params = {"name": "work", "arguments": {}, "_meta": meta}
        reply = await peer.request(2, "tools/call", params)
        assert isinstance(reply, Response), reply
    assert ran == [token]


_NOT_TOKENS = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), bad=_NOT_TOKENS)
def test_any_request_whose_progress_token_is_no_token_is_refused(
    data: st.DataObject, bad: Any
) -> None:
    message = data.draw(client_requests("2025-11-25", request_id=1, exclude=("initialize",)))
    params = dict(message.get("params") or {})
    params["_meta"] = {**params.get("_meta", {}), "progressToken": bad}

    async def run() -> None:
        ran: list[str] = []
        async with served(_server(ran)) as (peer, _session):
            reply = await peer.request(1, message["method"], params)
            assert isinstance(reply, ErrorResponse), reply
            # (a method this server does not serve is refused as such first)
            assert reply.error.code in (-32602, -32601), reply
        assert ran == []

    trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))

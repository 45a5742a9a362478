"""Property: whatever a stateless-era request carries, the server answers it exactly
once, with a schema-valid result or one of the era's errors, and keeps serving."""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.wire import ErrorResponse, Response, to_value

from ._support import ALL_CAPS, VERSION, demo_server, served, validate_value

PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
CI = "io.modelcontextprotocol/clientInfo"
LL = "io.modelcontextprotocol/logLevel"

junk = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.lists(st.integers(), max_size=2)
)
capabilities = st.fixed_dictionaries(
    {},
    optional={
        "sampling": st.just({}) | junk,
        "elicitation": st.sampled_from([{}, {"form": {}}, {"url": {}}]) | junk,
        "roots": st.just({}) | junk,
    },
)
metas = st.fixed_dictionaries(
    {},
    optional={
        PV: st.sampled_from([VERSION, "2025-11-25", "2099-01-01"]) | junk,
        CC: capabilities | junk,
        CI: st.just({"name": "p", "version": "1"}) | junk,
        LL: st.sampled_from(["debug", "info", "error"]) | junk,
        "traceparent": junk,
    },
)
targets = {
    "tools/call": st.fixed_dictionaries(
        {
            "name": st.sampled_from(
                ["greet", "ask_model", "roots", "all_at_once", "two_steps", "chatty", "nope"]
            )
        },
        optional={
            "arguments": st.just({"question": "q", "topic": "t"}) | junk,
            "inputResponses": st.dictionaries(
                st.sampled_from(["e", "s", "r", "answer", "first"]),
                junk | st.just({"action": "accept", "content": {"name": "x"}}),
                max_size=3,
            )
            | junk,
            "requestState": st.text(max_size=40) | junk,
        },
    ),
    "prompts/get": st.fixed_dictionaries({"name": st.sampled_from(["guided", "nope"]) | junk}),
    "resources/read": st.fixed_dictionaries(
        {"uri": st.sampled_from(["demo://static", "demo://x"]) | junk}
    ),
    "tools/list": st.fixed_dictionaries({}, optional={"cursor": st.text(max_size=6) | junk}),
    "server/discover": st.just({}),
    "ping": st.just({}),
    "no/such": st.just({}),
}


@st.composite
def stateless_requests(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    method = draw(st.sampled_from(sorted(targets)))
    body: dict[str, Any] = dict(draw(targets[method]))
    body["_meta"] = draw(metas | st.just({PV: VERSION, CC: dict(ALL_CAPS)}))
    return method, body


ERA_ERRORS = {-32600, -32601, -32602, -32021, -32022}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(stateless_requests(), min_size=1, max_size=6))
def test_every_request_gets_one_valid_answer(requests: list[tuple[str, dict[str, Any]]]) -> None:
    async def main() -> None:
        async with served(demo_server()) as (peer, checker):
            for n, (method, body) in enumerate(requests):
                reply = await peer.call(n, method, body)
                value = to_value(reply)
                if isinstance(reply, ErrorResponse):
                    assert reply.error.code in ERA_ERRORS, value
                else:
                    assert isinstance(reply, Response)
            # Whatever came before, the session still answers a well-formed request.
            ok = await peer.call("last", "server/discover", {"_meta": {PV: VERSION, CC: {}}})
            assert isinstance(ok, Response)
            for message, method in checker.sent:
                value = to_value(message)
                # Every error, notification and stateless-era result is schema-checked.
                if "result" not in value or "resultType" in value["result"]:
                    validate_value(value, method)

    trio.run(main)

"""Input rounds (MRTR): a tool body written once, reverse calls become rounds.

Each test drives the server as a stateless client would: call, read the
``InputRequiredResult``, answer its ``inputRequests``, retry with a new id carrying
``inputResponses`` and the ``requestState`` back. Every message is schema-checked.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

import trimcp
from trimcp.server._mrtr import MAX_INPUTS_PER_ROUND
from trimcp.wire import Notification, Request, Response

from ._support import ALL_CAPS, demo_server, error_of, params, result_of, served

ACCEPT = {"action": "accept", "content": {"name": "Ann"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}
ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}
ANSWERS = {
    "elicitation/create": ACCEPT,
    "sampling/createMessage": SAMPLED,
    "roots/list": ROOTS,
}


def call(name: str, arguments: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, **extra}
    if arguments is not None:
        body["arguments"] = arguments
    return params(body)


def answers_for(result: dict[str, Any]) -> dict[str, Any]:
    """The canned answer to each input request of an ``InputRequiredResult``."""
    return {key: ANSWERS[req["method"]] for key, req in result["inputRequests"].items()}


async def test_elicitation_round_then_complete() -> None:
    server = demo_server()
    async with served(server) as (peer, checker):
        first = result_of(await peer.call(1, "tools/call", call("greet")))
        assert first["resultType"] == "input_required"
        ((key, request),) = first["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Your name?"
        assert isinstance(first["requestState"], str)
        retry = call("greet", inputResponses={key: ACCEPT}, requestState=first["requestState"])
        done = result_of(await peer.call(2, "tools/call", retry))
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "Hello, Ann!"
    seen = checker.validate()
    assert seen["InputRequiredResult"] == 1
    assert seen["CallToolResult"] == 1


@pytest.mark.parametrize(
    ("tool", "arguments", "method", "expected"),
    [
        ("ask_model", {"question": "?"}, "sampling/createMessage", "model: 42"),
        ("roots", None, "roots/list", "file:///work"),
    ],
)
async def test_sampling_and_roots_rounds(
    tool: str, arguments: dict[str, Any] | None, method: str, expected: str
) -> None:
    async with served(demo_server()) as (peer, checker):
        first = result_of(await peer.call(1, "tools/call", call(tool, arguments)))
        assert [r["method"] for r in first["inputRequests"].values()] == [method]
        retry = call(
            tool, arguments, inputResponses=answers_for(first), requestState=first["requestState"]
        )
        done = result_of(await peer.call(2, "tools/call", retry))
    assert done["content"][0]["text"] == expected
    checker.validate()


async def test_several_inputs_in_one_round() -> None:
    async with served(demo_server()) as (peer, checker):
        first = result_of(await peer.call(1, "tools/call", call("all_at_once")))
        assert {k: r["method"] for k, r in first["inputRequests"].items()} == {
            "e": "elicitation/create",
            "s": "sampling/createMessage",
            "r": "roots/list",
        }
        retry = call(
            "all_at_once", inputResponses=answers_for(first), requestState=first["requestState"]
        )
        done = result_of(await peer.call(2, "tools/call", retry))
    assert done["content"][0]["text"] == "Ann|42|1"
    checker.validate()


async def test_several_rounds_with_fresh_state_each_time() -> None:
    server = demo_server()
    args = {"topic": "trio"}
    async with served(server) as (peer, checker):
        r1 = result_of(await peer.call(1, "tools/call", call("two_steps", args)))
        assert list(r1["inputRequests"]) == ["first"]
        r2 = result_of(
            await peer.call(
                2,
                "tools/call",
                call(
                    "two_steps",
                    args,
                    inputResponses={"first": ACCEPT},
                    requestState=r1["requestState"],
                ),
            )
        )
        assert list(r2["inputRequests"]) == ["second"]
        assert r2["requestState"] != r1["requestState"]
        bob = {"action": "accept", "content": {"name": "Bob"}}
        done = result_of(
            await peer.call(
                3,
                "tools/call",
                call(
                    "two_steps",
                    args,
                    inputResponses={"second": bob},
                    requestState=r2["requestState"],
                ),
            )
        )
    assert done["content"][0]["text"] == "Ann+Bob"
    assert server.runs["two_steps"] == 3  # type: ignore[attr-defined]
    assert checker.validate()["InputRequiredResult"] == 2


async def test_missing_and_unknown_responses_re_request() -> None:
    async with served(demo_server()) as (peer, checker):
        first = result_of(await peer.call(1, "tools/call", call("ask_model", {"question": "?"})))
        again = result_of(
            await peer.call(
                2,
                "tools/call",
                call(
                    "ask_model",
                    {"question": "?"},
                    inputResponses={"other": SAMPLED},
                    requestState=first["requestState"],
                ),
            )
        )
    assert again["resultType"] == "input_required"
    assert again["inputRequests"] == first["inputRequests"]
    checker.validate()


async def test_named_responses_are_taken_without_state_and_extras_ignored() -> None:
    async with served(demo_server()) as (peer, _):
        done = result_of(
            await peer.call(
                1,
                "tools/call",
                call(
                    "ask_model",
                    {"question": "?"},
                    inputResponses={"answer": SAMPLED, "junk": {"anything": 1}},
                ),
            )
        )
    assert done["content"][0]["text"] == "model: 42"


@pytest.mark.parametrize(
    "extra",
    [
        {"inputResponses": {"answer": 12345}},
        {"inputResponses": {"answer": {"role": "assistant"}}},  # no content, no model
        {"inputResponses": [SAMPLED]},
        {"requestState": 17},
    ],
)
async def test_invalid_responses_are_invalid_params(extra: dict[str, Any]) -> None:
    async with served(demo_server()) as (peer, checker):
        reply = await peer.call(1, "tools/call", call("ask_model", {"question": "?"}, **extra))
    assert error_of(reply)[0] == -32602
    checker.validate()


async def _first_state(
    peer: Any, name: str, arguments: dict[str, Any] | None = None
) -> tuple[str, str]:
    first = result_of(await peer.call("first", "tools/call", call(name, arguments)))
    (key,) = first["inputRequests"]
    return key, first["requestState"]


def _tamper(token: str) -> str:
    index = len(token) // 2
    return token[:index] + ("A" if token[index] != "A" else "B") + token[index + 1 :]


async def test_tampered_and_replayed_states_are_refused() -> None:
    async with served(demo_server()) as (peer, checker):
        key, state = await _first_state(peer, "two_steps", {"topic": "a"})
        cases = [
            call(
                "two_steps",
                {"topic": "a"},
                inputResponses={key: ACCEPT},
                requestState=_tamper(state),
            ),
            call(
                "two_steps", {"topic": "a"}, inputResponses={key: ACCEPT}, requestState=state + "-x"
            ),
            # Replayed onto the same tool with other arguments, and onto another tool.
            call("two_steps", {"topic": "b"}, inputResponses={key: ACCEPT}, requestState=state),
            call("greet", inputResponses={key: ACCEPT}, requestState=state),
        ]
        codes = [error_of(await peer.call(n, "tools/call", c))[0] for n, c in enumerate(cases)]
        # A state is bound to the method too: the same name on prompts/get fails.
        prompt = await peer.call(
            "p", "prompts/get", params({"name": "guided", "requestState": state})
        )
    assert codes == [-32602] * 4
    assert error_of(prompt)[0] == -32602
    checker.validate()


async def test_expired_state_is_refused() -> None:
    now = [1_000_000.0]
    sealer = trimcp.RequestStateSealer(ttl=60, clock=lambda: now[0])
    async with served(demo_server(request_state=sealer)) as (peer, _):
        key, state = await _first_state(peer, "greet")
        now[0] += 59
        ok = await peer.call(
            2, "tools/call", call("greet", inputResponses={key: ACCEPT}, requestState=state)
        )
        now[0] += 2
        late = await peer.call(
            3, "tools/call", call("greet", inputResponses={key: ACCEPT}, requestState=state)
        )
    assert result_of(ok)["resultType"] == "complete"
    code, _ = error_of(late)
    assert code == -32602


async def test_key_rotation() -> None:
    old, new = ("old", b"o" * 32), ("new", b"n" * 32)
    async with served(demo_server(request_state=trimcp.RequestStateSealer([old]))) as (peer, _):
        key, state = await _first_state(peer, "greet")
    retry = call("greet", inputResponses={key: ACCEPT}, requestState=state)
    rotated = demo_server(request_state=trimcp.RequestStateSealer([new, old]))
    async with served(rotated) as (peer, _):
        accepted = result_of(await peer.call(1, "tools/call", retry))
        # New states are sealed with the new key ...
        _, fresh = await _first_state(peer, "greet")
    assert accepted["resultType"] == "complete"
    assert fresh.split(".")[1] == "new"
    retired = demo_server(request_state=trimcp.RequestStateSealer([new]))
    async with served(retired) as (peer, _):
        refused = await peer.call(1, "tools/call", retry)
    assert error_of(refused)[0] == -32602


async def test_input_requests_follow_declared_capabilities() -> None:
    async with served(demo_server()) as (peer, _):
        reply = await peer.call(
            1, "tools/call", params({"name": "greet"}, capabilities={"sampling": {}})
        )
    assert error_of(reply) == (-32021, {"requiredCapabilities": {"elicitation": {}}})


async def test_prompts_get_has_rounds_too() -> None:
    async with served(demo_server()) as (peer, checker):
        first = result_of(await peer.call(1, "prompts/get", params({"name": "guided"})))
        assert list(first["inputRequests"]) == ["ctx"]
        done = result_of(
            await peer.call(
                2,
                "prompts/get",
                params(
                    {
                        "name": "guided",
                        "inputResponses": {"ctx": ACCEPT},
                        "requestState": first["requestState"],
                    }
                ),
            )
        )
    assert done["resultType"] == "complete"
    assert "Ann" in str(done["messages"])
    seen = checker.validate()
    assert seen["GetPromptResult"] == 1


async def test_the_same_body_makes_live_calls_in_the_handshake_era() -> None:
    server = demo_server()
    async with served(server) as (peer, _):
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": ALL_CAPS,
            "clientInfo": {"name": "c", "version": "1"},
        }
        result_of(await peer.call(0, "initialize", init))
        await peer.send(Notification(method="notifications/initialized"))
        await peer.send(Request(id=1, method="tools/call", params={"name": "all_at_once"}))
        asked: dict[str, Any] = {}
        while len(asked) < 3:
            message = await peer.receive()
            assert isinstance(message, Request), message
            asked[message.method] = message
        for request in asked.values():
            await peer.send(Response(id=request.id, result=ANSWERS[request.method]))
        done = result_of(await peer.answer(1))
    assert done["content"][0]["text"] == "Ann|42|1"
    assert "resultType" not in done


async def test_resources_read_has_rounds_and_no_cache_hints_until_complete() -> None:
    server = demo_server()

    @server.resource("demo://asked", name="Asked", mime_type="text/plain")
    async def asked(ctx: trimcp.ToolContext) -> str:
        _, content = await ctx.elicit("Which?", {"type": "object", "properties": {}}, key="which")
        return f"chosen {content}"

    async with served(server) as (peer, checker):
        first = result_of(await peer.call(1, "resources/read", params({"uri": "demo://asked"})))
        assert list(first["inputRequests"]) == ["which"]
        assert "ttlMs" not in first
        assert "cacheScope" not in first
        retry = {
            "uri": "demo://asked",
            "inputResponses": {"which": {"action": "accept", "content": {}}},
            "requestState": first["requestState"],
        }
        done = result_of(await peer.call(2, "resources/read", params(retry)))
        # The state of a read is bound to its uri.
        other = await peer.call(3, "resources/read", params({**retry, "uri": "demo://static"}))
    assert done["contents"][0]["text"] == "chosen {}"
    assert done["ttlMs"] == 0
    assert error_of(other)[0] == -32602
    seen = checker.validate()
    assert seen["ReadResourceResult"] == 1


async def test_handler_bugs_in_input_rounds_fail_the_call() -> None:
    server = demo_server()

    @server.tool()
    async def same_key_twice(ctx: trimcp.ToolContext) -> str:
        """Asks two things under one key."""
        await ctx.list_roots(key="k")
        await ctx.list_roots(key="k")
        return "unreachable"

    async with served(server) as (peer, checker):
        twice = result_of(
            await peer.call(1, "tools/call", call("same_key_twice", inputResponses={"k": ROOTS}))
        )
    assert twice["isError"] is True  # a handler bug is the tool's failure
    checker.validate()


async def test_more_inputs_than_a_round_carries_spill_into_later_rounds() -> None:
    server = demo_server()
    wanted = 2 * MAX_INPUTS_PER_ROUND + 5

    @server.tool()
    async def fan_out(ctx: trimcp.ToolContext) -> str:
        """Asks for the roots many times at once."""
        async with trio.open_nursery() as nursery:
            for n in range(wanted):
                nursery.start_soon(lambda n=n: ctx.list_roots(key=f"r{n}"))
        return "all answered"

    sizes: list[int] = []
    async with served(server) as (peer, checker):
        answered: dict[str, Any] = {}
        state: str | None = None
        for request_id in range(1, 10):
            extra: dict[str, Any] = {"inputResponses": answered} if answered else {}
            if state is not None:
                extra["requestState"] = state
            result = result_of(await peer.call(request_id, "tools/call", call("fan_out", **extra)))
            if result.get("resultType") != "input_required":
                break
            sizes.append(len(result["inputRequests"]))
            assert not set(result["inputRequests"]) & set(answered)  # never asked twice
            answered = answers_for(result)
            state = result["requestState"]
    assert sizes == [MAX_INPUTS_PER_ROUND, MAX_INPUTS_PER_ROUND, 5]
    assert result["content"][0]["text"] == "all answered"
    checker.validate()

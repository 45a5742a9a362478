"""Faults around requests over a byte stream (faults-and-limits rows B14-B20).

Duplicate and stray ids, stray cancellations, handlers that raise, ignore cancellation
or never return, and reverse calls nobody answers. Every test ends by checking that the
session still serves, and (through ``byte_session``) that its tables are empty at the end.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

from trimcp.dispatch import RequestTimeoutError
from trimcp.nursery import SessionLimits
from trimcp.server import Server, ToolContext
from trimcp.wire import INTERNAL_ERROR, INVALID_REQUEST, REQUEST_TIMEOUT

from ._bytes import byte_session, client_against_bytes, error_of

SECRET = "s3cr3t-token-do-not-leak"


def _server(limits: SessionLimits | None = None) -> tuple[Server, dict[str, Any]]:
    server = Server("faults", "1.0", limits=limits)
    log: dict[str, Any] = {"gates": {}, "ran": [], "errors": []}

    @server.tool()
    async def park(ctx: ToolContext, tag: str) -> str:
        gate = log["gates"].setdefault(tag, trio.Event())
        log["ran"].append(tag)
        await gate.wait()
        return tag

    @server.tool()
    async def forever() -> str:
        await trio.sleep_forever()
        return "never"

    @server.tool()
    async def stubborn(seconds: float) -> str:
        with trio.CancelScope(shield=True):
            await trio.sleep(seconds)
        log["ran"].append("stubborn done")
        return "stubborn"

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        try:
            await ctx.request("roots/list")
        except RequestTimeoutError as exc:
            log["errors"].append(exc)
            return "timed out"
        return "answered"

    @server.tool()
    async def explode(kind: str) -> str:
        if kind == "value":
            raise ValueError(f"cannot open db with password {SECRET}")
        if kind == "key":
            raise KeyError(SECRET)
        raise ExceptionGroup("many", [ValueError(SECRET), RuntimeError(SECRET)])

    return server, log


# ---------------------------------------------------------------- B14


async def test_b14_duplicate_in_flight_id_is_refused_and_the_first_completes(
    autojump_clock: Any,
) -> None:
    server, log = _server()
    async with byte_session(server) as peer:
        await peer.send(_call(1, "park", {"tag": "first"}))
        await trio.testing.wait_all_tasks_blocked()
        reply = await peer.call_tool(1, "park", {"tag": "second"})
        assert error_of(reply) == (1, INVALID_REQUEST)
        assert log["ran"] == ["first"]
        log["gates"]["first"].set()
        first = await peer.read()
        assert first["id"] == 1
        assert first["result"]["content"][0]["text"] == "first"
        assert await peer.quiet() == []
        # Reusing the id after completion is tolerated.
        log["gates"]["again"] = trio.Event()
        log["gates"]["again"].set()
        again = await peer.call_tool(1, "park", {"tag": "again"})
        assert again["result"]["content"][0]["text"] == "again"
        await peer.assert_alive()


async def test_b14_two_sessions_with_the_same_ids_never_mix(autojump_clock: Any) -> None:
    server, log = _server()
    async with byte_session(server) as one, byte_session(server) as two:
        await one.send(_call(1, "park", {"tag": "one"}))
        await two.send(_call(1, "park", {"tag": "two"}))
        await trio.testing.wait_all_tasks_blocked()
        log["gates"]["two"].set()
        got_two = await two.read()
        assert got_two["result"]["content"][0]["text"] == "two"
        assert await one.quiet() == []
        log["gates"]["one"].set()
        assert (await one.read())["result"]["content"][0]["text"] == "one"


def _call(id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


# ---------------------------------------------------------------- B15


async def test_b15_unknown_duplicate_and_late_responses_are_dropped_and_counted(
    autojump_clock: Any,
) -> None:
    server, _log = _server(SessionLimits(request_timeout=5))
    async with byte_session(server, capabilities={"roots": {}}) as peer:
        session = peer.session
        await peer.send({"jsonrpc": "2.0", "id": 4242, "result": {}})
        await peer.send({"jsonrpc": "2.0", "id": "nobody", "error": {"code": 1, "message": "x"}})
        await peer.send({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "x"}})
        assert await peer.quiet() == []
        assert session.dropped_answers == 3
        # Answered twice: the second answer finds nobody waiting.
        await peer.send(_call("a", "ask", {}))
        reverse = await peer.read()
        assert reverse["method"] == "roots/list"
        await peer.send({"jsonrpc": "2.0", "id": reverse["id"], "result": {"roots": []}})
        await peer.send({"jsonrpc": "2.0", "id": reverse["id"], "result": {"roots": []}})
        done = await peer.read()
        assert done["id"] == "a"
        assert done["result"]["content"][0]["text"] == "answered"
        assert await peer.quiet() == []
        assert session.dropped_answers == 4
        # Late: after the reverse call timed out and was cancelled.
        await peer.send(_call("b", "ask", {}))
        reverse = await peer.read()
        cancel = await peer.read()
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == reverse["id"]
        assert (await peer.read())["result"]["content"][0]["text"] == "timed out"
        await peer.send({"jsonrpc": "2.0", "id": reverse["id"], "result": {"roots": []}})
        assert await peer.quiet() == []
        assert session.dropped_answers == 5
        assert session.pending == 0
        await peer.assert_alive()


async def test_b15_the_client_drops_stray_answers_too(autojump_clock: Any) -> None:
    async with client_against_bytes(SessionLimits(request_timeout=5)) as (client, peer):
        session = client.session
        await peer.send({"jsonrpc": "2.0", "id": 999, "result": {}})
        await peer.send({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "m"}})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.ping)
            ping = await peer.read()
            answer = {"jsonrpc": "2.0", "id": ping["id"], "result": {}}
            await peer.send(answer)
            await peer.send(answer)  # duplicate
        await trio.testing.wait_all_tasks_blocked()
        assert session.dropped_answers == 3
        timed_out: list[RequestTimeoutError] = []

        async def ping_in_vain() -> None:
            try:
                await client.ping()
            except RequestTimeoutError as exc:
                timed_out.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ping_in_vain)
            late = await peer.read()
            assert (await peer.read())["method"] == "notifications/cancelled"
        assert len(timed_out) == 1
        await peer.send({"jsonrpc": "2.0", "id": late["id"], "result": {}})  # late
        await trio.testing.wait_all_tasks_blocked()
        assert session.dropped_answers == 4
        assert session.pending == 0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.ping)
            ping = await peer.read()
            await peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
        assert session.dropped_answers == 4


# ---------------------------------------------------------------- B16


async def test_b16_cancellations_for_unknown_completed_or_initialize_are_ignored(
    autojump_clock: Any,
) -> None:
    server, _log = _server()
    async with byte_session(server, initialize=False) as peer:
        # initialize and a cancel for it in one write: the cancel is read while the
        # request is in flight, and initialize must not be cancelled.
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "p", "version": "1"},
            },
        }
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "init"},
        }
        await peer.write((json.dumps(init) + "\n" + json.dumps(cancel) + "\n").encode())
        reply = await peer.read()
        assert reply["id"] == "init"
        assert "result" in reply
        await peer.notify("notifications/initialized")
        for request_id in ["init", 12345, "never-sent", None, True, {"x": 1}]:
            await peer.notify("notifications/cancelled", {"requestId": request_id})
        await peer.notify("notifications/cancelled")
        await peer.assert_alive()
        await peer.notify("notifications/cancelled", {"requestId": "alive-1"})  # completed
        assert await peer.quiet() == []
        await peer.assert_alive()


# ---------------------------------------------------------------- B17


@pytest.mark.parametrize("kind", ["value", "key", "group"])
async def test_b17_a_raising_handler_leaks_no_secret_and_no_traceback(
    kind: str, caplog: pytest.LogCaptureFixture, autojump_clock: Any
) -> None:
    server, _log = _server()
    async with byte_session(server) as peer:
        reply = await peer.call_tool(7, "explode", {"kind": kind})
        assert reply["id"] == 7
        assert reply["result"]["isError"] is True
        text = json.dumps(reply)
        assert SECRET not in text
        assert "Traceback" not in text
        assert not any(name in text for name in ("ValueError", "KeyError", "ExceptionGroup"))
        await peer.assert_alive()
    assert any(SECRET in (record.exc_text or "") for record in caplog.records)


async def test_b17_a_raising_engine_handler_is_a_generic_internal_error(
    autojump_clock: Any,
) -> None:
    server, _log = _server()

    async def broken(_ctx: Any, _params: Any) -> Any:
        raise RuntimeError(SECRET)

    server.registry.add_request("x/broken", broken)
    async with byte_session(server) as peer:
        reply = await peer.request(8, "x/broken")
        assert error_of(reply) == (8, INTERNAL_ERROR)
        assert SECRET not in json.dumps(reply)
        await peer.assert_alive()


# ---------------------------------------------------------------- B18


async def test_b18_a_handler_ignoring_cancellation_gets_no_response(autojump_clock: Any) -> None:
    """A shielded handler outlives its cancellation; its answer is never sent.

    Closing the session (here: the peer's EOF) cancels the handler and then waits for
    it, so a handler that shields itself for a bounded time delays the end by exactly
    that time. ``Server.shutdown()`` bounds its own wait and names such a handler in a
    warning (tests/core/test_shutdown.py).
    """
    server, log = _server()
    async with byte_session(server) as peer:
        await peer.send(_call("s", "stubborn", {"seconds": 30}))
        await trio.testing.wait_all_tasks_blocked()
        await peer.notify("notifications/cancelled", {"requestId": "s"})
        await trio.testing.wait_all_tasks_blocked()
        await peer.assert_alive()  # others proceed meanwhile
        await trio.sleep(31)
        assert log["ran"] == ["stubborn done"]
        assert await peer.quiet() == []  # no response for "s", ever
        assert peer.session.in_flight == 0
        # A second stubborn handler, then EOF: the close waits for it, bounded by its shield.
        await peer.send(_call("t", "stubborn", {"seconds": 20}))
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
    # Leaving the block hangs up and waits until the session has ended completely.
    assert 20 <= trio.current_time() - start <= 21
    assert log["ran"] == ["stubborn done", "stubborn done"]


# ---------------------------------------------------------------- B19


async def test_b19_handler_timeout_answers_request_timed_out(autojump_clock: Any) -> None:
    server, _log = _server(SessionLimits(handler_timeout=5))
    async with byte_session(server) as peer:
        start = trio.current_time()
        reply = await peer.call_tool(3, "forever", {})
        assert error_of(reply) == (3, REQUEST_TIMEOUT)
        assert 5 <= trio.current_time() - start < 6
        assert peer.session.in_flight == 0
        await peer.assert_alive()


async def test_b19_client_default_timeout_sends_cancelled(autojump_clock: Any) -> None:
    async with client_against_bytes(SessionLimits(request_timeout=7)) as (client, peer):
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            outcome: list[BaseException] = []

            async def call() -> None:
                try:
                    await client.call_tool("slow")
                except RequestTimeoutError as exc:
                    outcome.append(exc)

            nursery.start_soon(call)
            request = await peer.read()
            assert request["method"] == "tools/call"
            cancel = await peer.read()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request["id"]},
        }
        assert len(outcome) == 1
        assert 7 <= trio.current_time() - start < 8
        assert client.session.pending == 0


# ---------------------------------------------------------------- B20


async def test_b20_unanswered_reverse_call_times_out_cancels_and_frees_its_entry(
    autojump_clock: Any,
) -> None:
    server, log = _server(SessionLimits(request_timeout=60))
    async with byte_session(server, capabilities={"roots": {}}) as peer:
        start = trio.current_time()
        await peer.send(_call("q", "ask", {}))
        reverse = await peer.read()
        assert reverse["method"] == "roots/list"
        assert peer.session.pending == 1
        cancel = await peer.read()
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == reverse["id"]
        assert 60 <= trio.current_time() - start < 61
        answer = await peer.read()
        assert answer["id"] == "q"
        assert answer["result"]["content"][0]["text"] == "timed out"
        assert [type(e) for e in log["errors"]] == [RequestTimeoutError]
        assert peer.session.pending == 0
        await peer.assert_alive()

"""The core of the Streamable HTTP server at the ASGI level: POST (JSON and SSE),
sessions, the GET stream, DELETE, and reverse calls on the request's stream."""

from __future__ import annotations

import json
import re
from typing import Any

import trio

from ._asgi import INIT_PARAMS, AsgiClient, Exchange, rpc, running
from ._fixture import make_server


async def test_initialize_issues_a_visible_ascii_session_id() -> None:
    async with running(make_server()) as client:
        reply = await client.post(
            rpc(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            )
        )
        assert reply.status == 200
        assert reply.headers["content-type"] == "application/json"
        assert reply.json["id"] == 1
        assert reply.json["result"]["protocolVersion"] == "2025-11-25"
        session_id = reply.headers["mcp-session-id"]
        assert re.fullmatch(r"[\x21-\x7e]{32}", session_id)  # 192 bits of token_urlsafe


async def test_notifications_and_responses_get_202_without_body() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        reply = await client.post(rpc(None, "notifications/whatever"))
        assert (reply.status, reply.body) == (202, b"")
        answer = await client.post(b'{"jsonrpc":"2.0","id":99,"result":{}}')
        assert (answer.status, answer.body) == (202, b"")


async def test_request_answered_with_json_body() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        reply = await client.post(
            rpc(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        )
        assert reply.status == 200
        assert reply.headers["content-type"] == "application/json"
        assert reply.headers["mcp-session-id"] == client.session_id
        assert reply.json["result"]["content"][0]["text"] == "hi"
        listed = await client.post(rpc(3, "tools/list"))
        assert "echo" in {t["name"] for t in listed.json["result"]["tools"]}


async def test_notifications_before_the_result_make_an_sse_stream_with_priming_event() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        body = rpc(
            5,
            "tools/call",
            {
                "name": "chatty",
                "arguments": {"count": 3},
                "_meta": {"progressToken": "p"},
            },
        )
        reply = await client.post(body)
        assert reply.status == 200
        assert reply.headers["content-type"] == "text/event-stream"
        assert reply.body.startswith(b"id: ")
        first_event = reply.body.split(b"\n\n", 1)[0]
        assert first_event.endswith(b"data: ")
        assert reply.retry == 1000
        messages = reply.messages
        methods = [m.get("method") for m in messages]
        assert methods.count("notifications/progress") == 3
        assert methods.count("notifications/message") == 3
        assert messages[-1]["id"] == 5
        assert messages[-1]["result"]["content"][0]["text"] == "done"
        assert len(set(reply.event_ids)) == len(reply.event_ids) == 8


async def test_event_ids_are_unique_across_streams_of_a_session() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        ids: list[str] = []
        for n in range(3):
            reply = await client.post(
                rpc(
                    10 + n,
                    "tools/call",
                    {
                        "name": "chatty",
                        "arguments": {"count": 1},
                        "_meta": {"progressToken": n},
                    },
                )
            )
            ids += reply.event_ids
        assert len(ids) == len(set(ids)) == 12


async def test_standalone_get_stream_one_per_session() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        get = client.start("GET", b"", client.headers(accept="text/event-stream"))
        with trio.fail_after(5):
            await get.started.wait()
        assert get.status == 200
        assert get.headers["content-type"] == "text/event-stream"
        second = await client.request("GET", b"", client.headers(accept="text/event-stream"))
        assert second.status == 409
        assert second.json["error"]["code"] == -32000
        get.disconnect.set()
        with trio.fail_after(5):
            await get.complete.wait()
        third = client.start("GET", b"", client.headers(accept="text/event-stream"))
        with trio.fail_after(5):
            await third.started.wait()
        assert third.status == 200
        third.disconnect.set()


async def test_unrelated_messages_go_on_the_get_stream() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        get = client.start("GET", b"", client.headers(accept="text/event-stream"))
        with trio.fail_after(5):
            await get.started.wait()
        server.remove_tool("echo")  # notifications/tools/list_changed, related to nothing
        with trio.fail_after(5):
            messages = await get.wait_message(1)
        assert messages[0]["method"] == "notifications/tools/list_changed"
        get.disconnect.set()


async def test_unrelated_message_without_get_stream_is_dropped_and_counted() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        server.remove_tool("echo")
        await trio.testing.wait_all_tasks_blocked()
        (channel,) = client.app.manager._scopes
        assert channel.dropped == 1


async def test_delete_terminates_and_later_requests_get_404() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        assert len(server.sessions) == 1
        reply = await client.request("DELETE", b"", client.headers())
        assert reply.status == 200
        await trio.testing.wait_all_tasks_blocked()
        assert len(server.sessions) == 0
        assert len(client.app.manager) == 0
        after = await client.post(rpc(2, "tools/list"))
        assert after.status == 404
        assert after.json["error"]["code"] == -32001


async def test_delete_cancels_running_requests() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        call = client.start(
            "POST", rpc(7, "tools/call", {"name": "wait_release"}), client.headers()
        )
        await trio.testing.wait_all_tasks_blocked()
        reply = await client.request("DELETE", b"", client.headers())
        assert reply.status == 200
        with trio.fail_after(5):
            await server.test_state["slow_done"].wait()
            await call.complete.wait()
        assert call.status == 404
        # The request ended with the session: its error names it.
        assert call.json["id"] == 7
        assert call.json["error"]["code"] == -32001


async def test_delete_answers_each_request_of_a_batch_by_its_id() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize({**INIT_PARAMS, "protocolVersion": "2025-03-26"})
        assert client.version == "2025-03-26"  # the revision with JSON-RPC batches
        batch = (
            b"["
            + b",".join(rpc(n, "tools/call", {"name": "wait_release"}) for n in ("a", "b"))
            + b"]"
        )
        call = client.start("POST", batch, client.headers())
        await trio.testing.wait_all_tasks_blocked()
        reply = await client.request("DELETE", b"", client.headers())
        assert reply.status == 200
        with trio.fail_after(5):
            await call.complete.wait()
        assert call.status == 404
        assert [(m["id"], m["error"]["code"]) for m in call.json] == [("a", -32001), ("b", -32001)]


async def test_sampling_goes_on_the_requests_stream_and_the_answer_is_posted() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        call = client.start(
            "POST",
            rpc(
                3,
                "tools/call",
                {
                    "name": "ask",
                    "arguments": {"prompt": "hello"},
                },
            ),
            client.headers(),
        )
        with trio.fail_after(5):
            (request,) = await call.wait_message(1)
        assert request["method"] == "sampling/createMessage"
        assert request["params"]["messages"][0]["content"]["text"] == "hello"
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "hi there"},
                "model": "m",
            },
        }
        posted = await client.post(json.dumps(answer).encode())
        assert posted.status == 202
        with trio.fail_after(5):
            await call.complete.wait()
        result = call.messages[-1]
        assert result["id"] == 3
        assert result["result"]["content"][0]["text"] == "model said: hi there"


async def _elicitation_of_form(client: AsgiClient) -> tuple[Exchange, Any]:
    """Initialize, call ``form`` (id 4) and read the elicitation it makes."""
    await client.initialize()
    call = client.start("POST", rpc(4, "tools/call", {"name": "form"}), client.headers())
    with trio.fail_after(5):
        (request,) = await call.wait_message(1)
    assert request["method"] == "elicitation/create"
    return call, request


async def test_elicitation_over_the_requests_stream() -> None:
    async with running(make_server()) as client:
        call, request = await _elicitation_of_form(client)
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
        assert (await client.post(json.dumps(answer).encode())).status == 202
        with trio.fail_after(5):
            await call.complete.wait()
        assert call.messages[-1]["result"]["content"][0]["text"] == "accept: {'name': 'Ada'}"


async def test_cancelling_a_call_cancels_its_reverse_call_on_the_same_stream() -> None:
    """Invariant 4 over Streamable HTTP: the stream of a cancelled call stays open until
    the server has sent ``notifications/cancelled`` for the elicitation it made."""
    async with running(make_server()) as client:
        call, request = await _elicitation_of_form(client)
        cancel = await client.post(rpc(None, "notifications/cancelled", {"requestId": 4}))
        assert cancel.status == 202
        with trio.fail_after(5):
            await call.complete.wait()
        assert call.status == 200
        assert call.messages == [
            request,
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request["id"]},
            },
        ]
        (channel,) = client.app.manager._scopes
        assert not channel.in_flight(4)


async def test_cancelled_request_gets_no_result_and_stream_ends() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        call = client.start(
            "POST", rpc(8, "tools/call", {"name": "wait_release"}), client.headers()
        )
        await trio.testing.wait_all_tasks_blocked()
        cancel = await client.post(rpc(None, "notifications/cancelled", {"requestId": 8}))
        assert cancel.status == 202
        with trio.fail_after(5):
            await server.test_state["slow_done"].wait()
        await trio.testing.wait_all_tasks_blocked()
        (channel,) = client.app.manager._scopes
        assert not channel.in_flight(8)
        with trio.fail_after(5):
            await call.complete.wait()
        # The POST ends as an empty stream: no response for a cancelled request.
        assert call.status == 200
        assert call.messages == []


async def test_two_sessions_never_mix_same_ids() -> None:
    async with running(make_server()) as client:
        other = AsgiClient(client.app, client.nursery)
        await client.initialize()
        await other.initialize()
        assert client.session_id != other.session_id
        a = client.start(
            "POST",
            rpc(5, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
            client.headers(),
        )
        b = other.start(
            "POST",
            rpc(5, "tools/call", {"name": "echo", "arguments": {"text": "b"}}),
            other.headers(),
        )
        with trio.fail_after(5):
            await a.complete.wait()
            await b.complete.wait()
        assert a.json["result"]["content"][0]["text"] == "a"
        assert b.json["result"]["content"][0]["text"] == "b"


async def test_messages_of_an_ended_request_never_move_to_the_get_stream() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        get = client.start("GET", b"", client.headers(accept="text/event-stream"))
        with trio.fail_after(5):
            await get.started.wait()
        (channel,) = client.app.manager._scopes
        from trimcp.wire import Notification

        await channel.send(Notification(method="notifications/message"), related=12345)
        assert channel.dropped == 1
        assert get.messages == []
        get.disconnect.set()

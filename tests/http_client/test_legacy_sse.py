"""The 2024-11-05 HTTP+SSE client transport and the fallback to it: against trimcp's own
HTTP+SSE endpoint, against scripted servers for the failure paths, and against the
official Python SDK's ``mcp.server.sse`` (``test_sdk_legacy_sse.py``)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.nursery import HandlerContext
from trimcp.transports.http import StreamableHttp
from trimcp.transports.http._client_legacy import LegacySse, LegacySseError

from ._fake import INIT_RESULT, Exchange, FakeRequest, start_server, unconnected_channel
from .test_trimcp_server import build

WAIT = 20


async def _elicit(_ctx: HandlerContext, _p: trimcp.ElicitParams) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"name": "Bo"})


def _text(result: trimcp.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, trimcp.TextContent)
    return first.text


async def _session(transport: Any) -> tuple[str, list[str]]:
    seen: list[float] = []

    async def on_progress(progress: float, _total: float | None, _message: str | None) -> None:
        seen.append(progress)

    async with trimcp.open_client(transport, elicitation=_elicit) as client:
        assert client.transport_kind == "http+sse"
        answers = [
            _text(await client.call_tool("add", {"a": 2, "b": 3})),
            _text(await client.call_tool("steps", {"n": 3}, on_progress=on_progress)),
            _text(await client.call_tool("ask")),
        ]
        async with trio.open_nursery() as nursery:  # concurrent calls share the stream
            for i in range(5):
                nursery.start_soon(client.call_tool, "add", {"a": i, "b": i})
        assert seen == [1, 2, 3]
        return client.protocol_version, answers


async def test_fallback_and_explicit_mode_against_trimcp_own_endpoint(engine: str) -> None:
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            serve = partial(trimcp.serve_http, build(), port=0, engine=engine)
            port = await nursery.start(serve)
            url = f"http://127.0.0.1:{port}/sse"
            # POST /sse is 405 there: the client falls back to GET /sse + endpoint.
            version, answers = await _session(trimcp.streamable_http(url))
            assert answers == ["sum=5", "stepped", "hi Bo"]
            assert version == "2025-11-25"
            _, again = await _session(trimcp.legacy_sse(url))
            assert again == answers
            # The same server's Streamable HTTP endpoint is used as such.
            async with trimcp.open_client(
                trimcp.streamable_http(f"http://127.0.0.1:{port}/mcp")
            ) as client:
                assert client.transport_kind == "streamable-http"
            nursery.cancel_scope.cancel()


async def test_never_keeps_the_refusal_and_a_double_refusal_says_both() -> None:
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(trimcp.serve_http, build(), port=0))
            url = f"http://127.0.0.1:{port}/sse"
            with pytest.raises(trimcp.McpError) as info:
                async with trimcp.open_client(trimcp.streamable_http(url, legacy_sse="never")):
                    pass
            assert info.value.data == {"httpStatus": 405}
            with pytest.raises(trimcp.McpError, match="no HTTP\\+SSE transport either"):
                async with trimcp.open_client(
                    trimcp.streamable_http(f"http://127.0.0.1:{port}/elsewhere")
                ):
                    pass
            nursery.cancel_scope.cancel()


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after 20 ms of real idleness (real loopback I/O)."""
    return trio.testing.MockClock(autojump_threshold=0.02)


def _legacy_app(endpoint: str, *, end_on: str | None = None) -> Any:
    """A scripted 2024-11-05 server: POSTs to the GET URL are 405, the stream announces
    ``endpoint``, POSTs there are 202 and answered on the stream; a POST of ``end_on``
    ends the stream instead."""
    send, receive = trio.open_memory_channel[dict[str, Any] | None](16)

    async def app(request: FakeRequest, ex: Exchange) -> None:
        if request.method == "GET":
            await ex.start_sse()
            await ex.raw(f"event: endpoint\ndata: {endpoint}\n\n".encode())
            async for message in receive:
                if message is None:
                    await ex.end()
                    return
                await ex.raw(f"event: message\ndata: {json.dumps(message)}\n\n".encode())
            return
        if request.target.startswith("/mcp"):
            await ex.respond(405)
            return
        message = request.message
        await ex.respond(202)
        if end_on is not None and message.get("method") == end_on:
            await send.send(None)
        elif message.get("method") == "initialize":
            await send.send({"jsonrpc": "2.0", "id": message["id"], "result": INIT_RESULT})

    return app


async def test_an_endpoint_on_another_origin_is_refused(clock: trio.testing.MockClock) -> None:
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            for endpoint in ("http://evil.example/m", "//127.0.0.2:1/m", "https://127.0.0.1/m"):
                fake = await start_server(nursery, _legacy_app(endpoint))
                with pytest.raises(trimcp.McpError, match="not on the server's own origin"):
                    async with trimcp.open_client(trimcp.streamable_http(fake.url)):
                        pass
                assert [r.method for r in fake.requests] == ["POST", "POST", "GET"]
            nursery.cancel_scope.cancel()


async def test_the_stream_ending_fails_every_waiting_call(clock: trio.testing.MockClock) -> None:
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            fake = await start_server(nursery, _legacy_app("/messages?s=1", end_on="tools/call"))
            transport = trimcp.legacy_sse(fake.url)
            async with trimcp.open_client(transport, era="handshake") as client:
                with pytest.raises(trimcp.ConnectionClosedError, match="ended the HTTP\\+SSE"):
                    await client.call_tool("anything")
            posts = [r for r in fake.requests if r.method == "POST"]
            assert all(r.target == "/messages?s=1" for r in posts)
            nursery.cancel_scope.cancel()


async def test_no_endpoint_event_in_time_is_a_clear_failure(
    clock: trio.testing.MockClock,
) -> None:
    async def silent(request: FakeRequest, ex: Exchange) -> None:
        if request.method == "GET":
            await ex.start_sse()
            await trio.sleep_forever()
        await ex.respond(404)

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            fake = await start_server(nursery, silent)
            transport = StreamableHttp(url=fake.url, connect_timeout=0.5)
            with pytest.raises(trimcp.McpError, match="no endpoint event within connect_timeout"):
                async with trimcp.open_client(transport):
                    pass
            nursery.cancel_scope.cancel()


def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="legacy_sse"):
        StreamableHttp(url="http://127.0.0.1:1/mcp", legacy_sse="sometimes")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.builds(
            "{}://{}{}/{}".format,
            st.sampled_from(["http", "https", "HTTP", "ftp", ""]),
            st.sampled_from(["127.0.0.1", "127.0.0.1.", "localhost", "evil.example", "[::1]"]),
            st.sampled_from(["", ":80", ":8000", ":0", ":99999"]),
            st.text(max_size=10),
        ),
    )
)
def test_an_endpoint_resolves_to_the_own_origin_or_is_refused(data: str) -> None:
    """Whatever the ``endpoint`` event says, messages go to the URL's own scheme, host
    and port, or nowhere."""
    legacy = LegacySse(unconnected_channel("http://127.0.0.1:8000/sse"))
    try:
        origin = legacy._resolve(data)
    except LegacySseError:
        return
    assert (origin.scheme, origin.host, origin.port) == ("http", "127.0.0.1", 8000)
    assert origin.target.startswith("/")

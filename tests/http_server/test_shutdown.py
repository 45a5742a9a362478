"""``Server.shutdown()`` over the network: ``serve_http`` on both engines, the ASGI app
under hypercorn's own ``serve``, and ``serve_websocket``. Real sockets on 127.0.0.1
only; every wait is bounded and driven by events (the grace is never waited out: the
handlers finish, or the grace is 0).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Final

import pytest
import trio
import trio.lowlevel

import trimcp

from ..stateless._http import Reply, call, open_post, request, stateless_headers
from ..stateless._support import validate_value

WAIT: Final = 10.0
SUB: Final = "io.modelcontextprotocol/subscriptionId"


def _server() -> tuple[trimcp.Server, dict[str, trio.Event]]:
    server = trimcp.Server("shutdown-http", version="1.0", declare_tools=True)
    events = {"held": trio.Event(), "release": trio.Event(), "forever": trio.Event()}

    @server.tool()
    async def held() -> str:
        """Answers once the test releases it."""
        events["held"].set()
        await events["release"].wait()
        return "released"

    @server.tool()
    async def forever() -> str:
        """Never answers by itself."""
        events["forever"].set()
        await trio.sleep_forever()
        return "unreachable"

    return server, events


@asynccontextmanager
async def _running(
    serve: Callable[..., Awaitable[None]],
) -> AsyncIterator[tuple[int, list[str]]]:
    """Start ``serve`` (a serve function taking ``task_status``); the block must end it
    by a shutdown, and ``returned`` says that it did."""
    returned: list[str] = []

    async def run(task_status: trio.TaskStatus[int]) -> None:
        await serve(task_status=task_status)
        returned.append("returned")

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            port: int = await nursery.start(run)
            yield port, returned
    assert returned == ["returned"]


async def _shutdown_in(nursery: trio.Nursery, server: trimcp.Server, grace: float) -> None:
    requested = server.shutdown_control.round.requested
    nursery.start_soon(partial(server.shutdown, grace=grace))
    await requested.wait()


def _listen(id: str) -> dict[str, Any]:
    return request(id, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})


async def _graceful_exchange(
    server: trimcp.Server, events: dict[str, trio.Event], port: int
) -> None:
    """A listen and a held call open; shutdown: the listen ends with its result, a new
    request gets 503, the held call's answer still arrives once released."""
    body = _listen("L")
    headers = stateless_headers("subscriptions/listen", body["params"])
    async with open_post(port, body, headers) as listen, trio.open_nursery() as nursery:
        ack = await listen.next_message()
        assert ack is not None
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        answers: list[Reply] = []

        async def call_held() -> None:
            answers.append(await call(port, "h", "tools/call", {"name": "held"}))

        nursery.start_soon(call_held)
        await events["held"].wait()
        await _shutdown_in(nursery, server, grace=WAIT * 3)
        ended = await listen.rest()
        assert [m.get("id") for m in ended.messages] == ["L"]
        assert ended.last["result"]["_meta"][SUB] == "L"
        assert validate_value(ended.last, "subscriptions/listen") == "SubscriptionsListenResult"
        refused = await call(port, "n", "tools/list")
        assert refused.status == 503
        assert refused.headers["retry-after"]
        assert refused.last["id"] == "n"
        assert refused.last["error"]["code"] == -32000
        assert "shutting down" in refused.last["error"]["message"]
        assert answers == []
        events["release"].set()
    (answered,) = answers
    assert answered.last["id"] == "h"
    assert answered.last["result"]["content"][0]["text"] == "released"
    validate_value(answered.last, "tools/call")


async def test_serve_http_shuts_down_gracefully(engine: str) -> None:
    server, events = _server()
    serve = partial(trimcp.serve_http, server, host="127.0.0.1", port=0, engine=engine)
    async with _running(serve) as (port, returned):
        await _graceful_exchange(server, events, port)
    assert returned == ["returned"]


async def test_serve_http_cancels_at_the_grace_without_a_response() -> None:
    server, events = _server()
    serve = partial(trimcp.serve_http, server, host="127.0.0.1", port=0)
    async with _running(serve) as (port, _returned), trio.open_nursery() as nursery:
        replies: list[Reply] = []

        async def call_forever() -> None:
            replies.append(await call(port, "f", "tools/call", {"name": "forever"}))

        nursery.start_soon(call_forever)
        await events["forever"].wait()
        await _shutdown_in(nursery, server, grace=0)
    # No answer for the call: its POST ends with the transport's 503, naming the call.
    (cut,) = replies
    assert cut.status == 503
    assert [m["id"] for m in cut.messages] == ["f"]
    assert cut.messages[0]["error"]["code"] == -32000


async def test_asgi_app_under_hypercorn_with_the_shutdown_trigger() -> None:
    """The app of ``asgi_app`` mounted in hypercorn's own ``serve``: the documented
    ``shutdown_trigger`` stops hypercorn once the sessions have ended."""
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    server, events = _server()
    app = trimcp.asgi_app(server)
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    hypercorn: Any = hypercorn_serve

    async def serve(*, task_status: trio.TaskStatus[int]) -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(app.run)
            async with trio.open_nursery() as http:
                trigger = server.shutdown_control.wait_done
                binds = await http.start(partial(hypercorn, app, config, shutdown_trigger=trigger))
                task_status.started(int(binds[0].rsplit(":", 1)[1]))
            nursery.cancel_scope.cancel()  # hypercorn has stopped: so do the app's sessions

    async with _running(serve) as (port, _returned):
        await _graceful_exchange(server, events, port)


async def _held_call_through_shutdown(
    nursery: trio.Nursery,
    server: trimcp.Server,
    events: dict[str, trio.Event],
    client: trimcp.Client,
    *,
    while_refusing: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """A call held in its handler when the shutdown starts gets its result; a call made
    during the shutdown fails with the server's ``-32000``."""
    answers: list[str] = []
    answered = trio.Event()

    async def call_held() -> None:
        result = await client.call_tool("held", {})
        answers.append(result.content[0].text)  # type: ignore[union-attr]
        answered.set()

    nursery.start_soon(call_held)
    await events["held"].wait()
    await _shutdown_in(nursery, server, grace=WAIT * 3)
    with pytest.raises(trimcp.McpError) as refused:
        await client.list_tools()
    assert refused.value.code == -32000
    if while_refusing is not None:
        await while_refusing()
    events["release"].set()
    await answered.wait()
    assert answers == ["released"]


async def test_serve_websocket_stops_accepting_and_returns() -> None:
    server, events = _server()
    serve = partial(trimcp.serve_websocket, server, host="127.0.0.1", port=0)
    async with _running(serve) as (port, _returned), trio.open_nursery() as nursery:

        async def not_listening() -> None:
            with pytest.raises(OSError):
                await trio.open_tcp_stream("127.0.0.1", port)

        url = f"ws://127.0.0.1:{port}/mcp"
        async with trimcp.open_client(trimcp.websocket(url), era="handshake") as client:
            await _held_call_through_shutdown(
                nursery, server, events, client, while_refusing=not_listening
            )


async def test_handshake_era_client_over_http() -> None:
    """trimcp's own HTTP client: the call running in the grace gets its result, a call
    made during the shutdown fails with the server's error."""
    server, events = _server()
    serve = partial(trimcp.serve_http, server, host="127.0.0.1", port=0)
    async with _running(serve) as (port, _returned), trio.open_nursery() as nursery:
        url = f"http://127.0.0.1:{port}/mcp"
        async with trimcp.open_client(trimcp.streamable_http(url), era="handshake") as client:
            await _held_call_through_shutdown(nursery, server, events, client)

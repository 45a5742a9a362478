"""Change notifications to a WebSocket peer that stopped reading stay bounded.

The peer here is a raw wsproto client over a lockstep stream (no socket): every byte the
server writes waits until the client reads it, so a client that stops reading holds the
server's writes exactly as a full socket buffer would.
"""

from __future__ import annotations

import trio
import trio.testing
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request

import trimcp
from trimcp.transports.http import HostPolicy
from trimcp.transports.websocket import WebSocketChannel, accept_websocket
from trimcp.transports.websocket._limits import WebSocketLimits

from ..core._support import live_tasks
from ._raw import INIT, RawWebSocket


async def test_list_changed_to_a_peer_that_stopped_reading_is_bounded() -> None:
    server = trimcp.Server("ws-notes", declare_tools=True)
    server_end, client_end = trio.testing.lockstep_stream_pair()
    ws = WSConnection(ConnectionType.CLIENT)
    client = RawWebSocket(client_end, ws)  # type: ignore[arg-type]
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                messages = await accept_websocket(
                    server_end,
                    path="/mcp",
                    host_policy=HostPolicy(enabled=False),
                    local_host="127.0.0.1",
                    limits=WebSocketLimits(),
                )
                assert messages is not None
                await server.serve_channel(WebSocketChannel(messages))

            nursery.start_soon(serve)
            await client_end.send_all(
                ws.send(Request(host="127.0.0.1", target="/mcp", subprotocols=["mcp"]))
            )
            while not any(isinstance(e, AcceptConnection) for e in client.events):
                await client._fill()
            client.events.clear()
            await client.send_json(INIT)
            assert (await client.receive_json())["id"] == 0
            await client.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await trio.testing.wait_all_tasks_blocked()
            (session,) = server.sessions
            assert session.state.ready
            baseline = len(live_tasks())

            async def tool() -> str:
                return "x"

            # The client reads nothing from here on.
            for _ in range(2000):
                server.tool(name="flapping")(tool)
                server.remove_tool("flapping")
            await trio.testing.wait_all_tasks_blocked()
            assert len(live_tasks()) - baseline <= 1  # one writer, held by the peer
            assert session.queued_notifications <= 1  # the rest said nothing new
            # Once the client reads again, the change arrives: coalesced, not lost.
            note = await client.receive_json()
            assert note == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            await trio.testing.wait_all_tasks_blocked()
            assert session.queued_notifications == 0
            assert session.dropped_notifications == 0
            # A change after that one went out is announced again.
            server.tool(name="flapping")(tool)
            assert (await client.receive_json())["method"] == note["method"]
            nursery.cancel_scope.cancel()

"""Authorization on the WebSocket client: credentials on the upgrade request, and a
refused handshake answered like an HTTP challenge, then made again."""

from __future__ import annotations

from functools import partial

import pytest
import trio
import trio.testing

import trimcp
from trimcp import auth

from ._world import World

WAIT = 30


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.02)


def demo_server() -> trimcp.Server:
    server = trimcp.Server("ws-demo", version="1")

    @server.tool()
    async def hello(ctx: trimcp.ToolContext) -> str:
        return "hi"

    return server


async def _gateway(
    world: World, upstream_port: int, seen: list[str | None], stream: trio.SocketStream
) -> None:
    """Let an upgrade through to the real server only with a token the AS issued."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = await stream.receive_some(4096)
        if not chunk:
            return
        head += chunk
    lines = head.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    seen.append(headers.get("authorization"))
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    if scheme != "Bearer" or token not in world.issued:
        link = f"{world.rs_origin}/.well-known/oauth-protected-resource/mcp"
        await stream.send_all(
            b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n"
            + f'WWW-Authenticate: Bearer resource_metadata="{link}"\r\n\r\n'.encode()
        )
        await stream.aclose()
        return
    upstream = await trio.open_tcp_stream("127.0.0.1", upstream_port)
    await upstream.send_all(head)

    async def pump(source: trio.abc.Stream, sink: trio.abc.Stream) -> None:
        try:
            while data := await source.receive_some(65536):
                await sink.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(sink)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pump, stream, upstream)
        nursery.start_soon(pump, upstream, stream)


async def test_the_upgrade_request_is_authorized(clock: trio.testing.MockClock) -> None:
    world = World(link=False)
    seen: list[str | None] = []
    async with trio.open_nursery() as nursery:
        await world.start(nursery)
        upstream = await nursery.start(trimcp.serve_websocket, demo_server())
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(_gateway, world, upstream, seen), 0, host="127.0.0.1")
        )
        port = listeners[0].socket.getsockname()[1]
        world.prm_resource = f"http://127.0.0.1:{port}/mcp"  # the gateway is the resource
        oauth = auth.OAuth(auth.AuthorizationCode(redirect=auth.fetch_redirect))
        transport = trimcp.websocket(f"ws://127.0.0.1:{port}/mcp", auth=oauth)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:
                result = await client.call_tool("hello", {})
        nursery.cancel_scope.cancel()
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    (token,) = world.issued
    assert seen == [None, f"Bearer {token}"]
    assert world.authorize[0]["resource"] == f"http://127.0.0.1:{port}/mcp"


async def test_a_refused_authorization_fails_the_handshake(
    clock: trio.testing.MockClock,
) -> None:
    world = World(link=False, refuse_grants=True)
    async with trio.open_nursery() as nursery:
        await world.start(nursery)
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(_gateway, world, 1, []), 0, host="127.0.0.1")
        )
        port = listeners[0].socket.getsockname()[1]
        world.prm_resource = f"http://127.0.0.1:{port}/mcp"
        oauth = auth.OAuth(auth.AuthorizationCode(redirect=auth.fetch_redirect))
        transport = trimcp.websocket(f"ws://127.0.0.1:{port}/mcp", auth=oauth)

        async def connect() -> None:
            with trio.fail_after(WAIT):
                async with trimcp.open_client(transport, era="handshake"):
                    pass

        with pytest.raises(trimcp.WebSocketHandshakeError, match="authorization failed") as caught:
            await connect()
        nursery.cancel_scope.cancel()
    assert caught.value.status == 401

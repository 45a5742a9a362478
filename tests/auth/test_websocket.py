"""A protected server over WebSocket: the ASGI endpoint on both engines, and the lean
WebSocket server."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, RejectConnection, RejectData, Request

import trimcp
from trimcp.dispatch import McpError
from trimcp.transports.websocket import WebSocketHandshakeError

from ._issuer import Issuer
from ._server import protected_server


@asynccontextmanager
async def serving(server: trimcp.Server, kind: str) -> AsyncIterator[tuple[int, Issuer]]:
    async with trio.open_nursery() as nursery:
        if kind == "lean":
            serve: Callable[..., Awaitable[None]] = trimcp.serve_websocket
            options: dict[str, Any] = {}
        else:
            serve, options = trimcp.serve_http, {"engine": kind}
        port = await nursery.start(
            lambda task_status: serve(server, port=0, task_status=task_status, **options)
        )
        yield port
        nursery.cancel_scope.cancel()


async def refusal(port: int, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[str, str]]:
    """A raw handshake that the server refuses: its status and headers."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    ws = WSConnection(ConnectionType.CLIENT)
    await stream.send_all(
        ws.send(Request(host=f"127.0.0.1:{port}", target="/mcp", subprotocols=["mcp"],
                        extra_headers=headers))
    )  # fmt: skip
    try:
        while True:
            data = await stream.receive_some(65536)
            assert data, "the server closed without an answer"
            ws.receive_data(data)
            for event in ws.events():
                assert not isinstance(event, AcceptConnection)
                if isinstance(event, RejectConnection):
                    found = {k.decode().lower(): v.decode() for k, v in event.headers}
                    return event.status_code, found
                assert isinstance(event, RejectData)
    finally:
        await stream.aclose()


KINDS = ["h11", "hypercorn", "lean"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_handshake_without_a_token_is_401_with_its_challenge(kind: str) -> None:
    issuer = Issuer()
    with trio.fail_after(20):
        async with serving(protected_server(issuer), kind) as port:
            status, headers = await refusal(port, [])
            assert status == 401
            assert headers["www-authenticate"] == (
                f'Bearer resource_metadata="http://127.0.0.1:{port}'
                '/.well-known/oauth-protected-resource/mcp"'
            )
            bad = [(b"authorization", b"Bearer " + issuer.token(exp=1).encode())]
            status, headers = await refusal(port, bad)
            assert status == 401
            assert 'error="invalid_token"' in headers["www-authenticate"]


@pytest.mark.parametrize("kind", KINDS)
async def test_the_connection_is_its_callers(kind: str) -> None:
    issuer = Issuer()
    with trio.fail_after(20):
        async with serving(protected_server(issuer), kind) as port:
            url = f"ws://127.0.0.1:{port}/mcp"
            aud = f"http://127.0.0.1:{port}/mcp"
            token = issuer.token(aud=aud)
            headers = {"Authorization": f"Bearer {token}"}
            async with trimcp.open_client(trimcp.websocket(url, headers=headers)) as client:
                result = await client.call_tool("whoami", {})
                assert result.content[0].text.startswith("alice|client-1|mcp:tools")  # type: ignore[union-attr]
                # No HTTP status per message on a WebSocket: a JSON-RPC error instead.
                with pytest.raises(McpError) as caught:
                    await client.call_tool("write", {"text": "x"})
                assert caught.value.code == -32000
                assert caught.value.data == {"error": "insufficient_scope", "scope": "files:write"}
            wrong = {"Authorization": f"Bearer {issuer.token()}"}  # another resource's token
            with pytest.raises(WebSocketHandshakeError) as refused:
                async with trimcp.open_client(trimcp.websocket(url, headers=wrong)):
                    pass
            assert refused.value.status == 401


async def test_the_connection_closes_when_its_token_expires(
    clock: trio.testing.MockClock,
) -> None:
    """A WebSocket cannot present fresh credentials: at the token's expiry it closes
    with 1008, and the client reconnects with a new token."""
    issuer = Issuer()
    app = trimcp.asgi_app(protected_server(issuer))
    token = issuer.token(exp=int(time.time()) + 90)
    scope = {
        "type": "websocket",
        "path": "/mcp",
        "scheme": "ws",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Bearer {token}".encode())],
        "subprotocols": ["mcp"],
        "server": ("127.0.0.1", 8000),
        "extensions": {"websocket.http.response": {}},
    }
    sent: list[dict[str, Any]] = []
    inbound = [{"type": "websocket.connect"}]
    closed = trio.Event()

    async def receive() -> dict[str, Any]:
        if inbound:
            return inbound.pop(0)
        await closed.wait()
        return {"type": "websocket.disconnect", "code": 1008}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "websocket.close":
            closed.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        with trio.fail_after(600):
            await app(scope, receive, send)
        nursery.cancel_scope.cancel()
    assert sent[0]["type"] == "websocket.accept"
    assert sent[-1] == {
        "type": "websocket.close",
        "code": 1008,
        "reason": "the access token expired",
    }
    # Expired at its exp plus nothing: the connection's deadline is the token's own.
    assert 89 <= trio.current_time() <= 91

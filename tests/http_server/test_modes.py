"""Stateless mode, ASGI lifespan, and the layering of the transport."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import trio

import trimcp

from ._asgi import BASE, INIT_PARAMS, AsgiClient, rpc, running
from ._fixture import make_server


async def test_stateless_mode_serves_each_post_alone() -> None:
    server = make_server()
    async with running(server, stateless=True) as client:
        init = await client.request("POST", rpc(1, "initialize", INIT_PARAMS), dict(BASE))
        assert init.status == 200
        assert "mcp-session-id" not in init.headers
        headers = dict(BASE, **{"mcp-protocol-version": "2025-11-25"})
        call = await client.request(
            "POST", rpc(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}), headers
        )
        assert call.status == 200, call.body
        assert call.json["result"]["content"][0]["text"] == "hi"
        streamed = await client.request(
            "POST",
            rpc(
                3,
                "tools/call",
                {
                    "name": "chatty",
                    "arguments": {"count": 2},
                    "_meta": {"progressToken": 1},
                },
            ),
            headers,
        )
        assert [m.get("method") for m in streamed.messages].count("notifications/progress") == 2
        note = await client.request("POST", rpc(None, "notifications/initialized"), headers)
        assert note.status == 202
        await trio.testing.wait_all_tasks_blocked()
        assert len(client.app.manager) == 0
        assert not server.sessions
        get = await client.request("GET", b"", dict(BASE, accept="text/event-stream"))
        assert get.status == 405
        assert get.headers["allow"] == "POST"
        delete = await client.request("DELETE", b"", headers)
        assert delete.status == 405
        bad = await client.request(
            "POST", rpc(4, "ping"), dict(BASE, **{"mcp-protocol-version": "1999-01-01"})
        )
        assert bad.status == 400


async def test_stateless_mode_ignores_session_ids() -> None:
    async with running(make_server(), stateless=True) as client:
        headers = dict(BASE, **{"mcp-session-id": "whatever"})
        reply = await client.request("POST", rpc(2, "ping"), headers)
        assert reply.status == 200
        assert reply.json["result"] == {}


async def test_lifespan_runs_and_ends_the_sessions() -> None:
    server = make_server()
    app = trimcp.asgi_app(server)
    to_app_send, to_app = trio.open_memory_channel[dict[str, Any]](4)
    from_app_send, from_app = trio.open_memory_channel[dict[str, Any]](4)

    async def send(message: Any) -> None:
        await from_app_send.send(message)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app, {"type": "lifespan"}, to_app.receive, send)
            await to_app_send.send({"type": "lifespan.startup"})
            assert (await from_app.receive())["type"] == "lifespan.startup.complete"
            client = AsgiClient(app, nursery)
            await client.initialize()
            assert len(server.sessions) == 1
            await to_app_send.send({"type": "lifespan.shutdown"})
            assert (await from_app.receive())["type"] == "lifespan.shutdown.complete"
            await trio.testing.wait_all_tasks_blocked()
            assert not server.sessions
            assert len(app.manager) == 0


async def test_transport_never_imports_the_server_layer() -> None:
    folder = Path(trimcp.__file__).parent / "transports" / "http"
    for path in folder.glob("_*.py"):
        if path.name.startswith("_client"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("trimcp.server", "trimcp.client")), path


async def test_session_ids_are_fresh_and_long() -> None:
    async with running(make_server()) as client:
        ids = set()
        for _ in range(20):
            reply = await client.request("POST", rpc(1, "initialize", INIT_PARAMS), dict(BASE))
            ids.add(reply.headers["mcp-session-id"])
        assert len(ids) == 20
        assert all(len(i) >= 22 for i in ids)  # >= 128 bits in URL-safe base64


async def test_websocket_upgrades_are_refused_before_accept() -> None:
    app = trimcp.asgi_app(make_server())
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await app({"type": "websocket", "path": "/mcp", "headers": []}, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]

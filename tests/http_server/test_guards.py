"""The guards every request passes before any work is done (rows B27, B29-B32, B34-B38,
B41, B45, B48, B49 of the faults table), at the ASGI level."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trimcp.transports.http import HostPolicy, HttpServerLimits

from ._asgi import BASE, INIT_PARAMS, AsgiClient, rpc, running
from ._fixture import make_server

INIT = rpc(1, "initialize", INIT_PARAMS)


def headers(**extra: str) -> dict[str, str]:
    out = dict(BASE)
    for key, value in extra.items():
        key = key.replace("_", "-")
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


# ---------------------------------------------------------------- B31 / B32 DNS rebinding
@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("evil.example.com", 403),
        ("evil.example.com:8000", 403),
        ("localhost.evil:8000", 403),
        ("localhost:8000", 200),
        ("127.0.0.1:8000", 200),
        ("[::1]:8000", 200),
        ("localhost", 200),
    ],
)
async def test_host_on_loopback(host: str, status: int) -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", INIT, headers(host=host))
        assert reply.status == status
        if status == 403:
            assert reply.json["error"]["code"] == -32000
            assert "mcp-session-id" not in reply.headers
            assert len(client.app.manager) == 0


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        (None, 200),
        ("http://localhost:8000", 200),
        ("http://127.0.0.1:3000", 200),
        ("https://[::1]", 200),
        ("null", 403),
        ("http://evil.example", 403),
        ("http://localhost.evil", 403),
        ("http://localhost.evil:8000", 403),
        ("file://localhost", 403),
    ],
)
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_origin_matrix(method: str, origin: str | None, status: int) -> None:
    async with running(make_server()) as client:
        await client.initialize()
        body = rpc(2, "ping") if method == "POST" else b""
        extra = {} if origin is None else {"origin": origin}
        exchange = client.start(method, body, client.headers(**extra))
        with trio.fail_after(5):
            await exchange.started.wait()
        assert exchange.status == status
        exchange.disconnect.set()


async def test_non_loopback_checks_origin_against_an_allowed_host() -> None:
    async with running(make_server(), allowed_hosts=["mcp.example.com"]) as client:
        far = ("10.0.0.5", 8000)
        ok = await client.request("POST", INIT, headers(host="mcp.example.com"), server=far)
        assert ok.status == 200
        same = await client.request(
            "POST",
            INIT,
            headers(host="mcp.example.com", origin="https://mcp.example.com"),
            server=far,
        )
        assert same.status == 200
        cross = await client.request(
            "POST",
            INIT,
            headers(host="mcp.example.com", origin="https://evil.example"),
            server=far,
        )
        assert cross.status == 403


async def test_policy_allowlist_and_opt_out() -> None:
    policy = HostPolicy(allowed_hosts={"mcp.internal"}, allowed_origins={"https://app.example"})
    async with running(make_server(), host_policy=policy) as client:
        reply = await client.request(
            "POST", INIT, headers(host="mcp.internal:9000", origin="https://app.example")
        )
        assert reply.status == 200
    async with running(make_server(), host_policy=HostPolicy(enabled=False)) as client:
        reply = await client.request("POST", INIT, headers(host="evil", origin="http://evil"))
        assert reply.status == 200


# ---------------------------------------------------------------- B34 / B49 media types
@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("application/json", 200),
        ("application/json; charset=utf-8", 200),
        ("Application/JSON", 200),
        ("text/plain", 415),
        ("application/jsonx", 415),
        (None, 415),
    ],
)
async def test_content_type(content_type: str | None, status: int) -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", INIT, headers(content_type=content_type))
        assert reply.status == status
        if status == 415:
            assert reply.json["id"] is None


@pytest.mark.parametrize(
    ("accept", "status"),
    [
        ("application/json, text/event-stream", 200),
        ("text/event-stream, application/json;q=0.9", 200),
        ("*/*", 200),
        ("application/json", 406),
        ("text/event-stream", 406),
        (None, 406),
    ],
)
async def test_post_accept(accept: str | None, status: int) -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", INIT, headers(accept=accept))
        assert reply.status == status


async def test_get_accept_needs_event_stream() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        reply = await client.request("GET", b"", client.headers(accept="application/json"))
        assert reply.status == 406


# ---------------------------------------------------------------- B35-B37 session ids
@pytest.mark.parametrize("session_id", ["has space", "ctl\x01char", "x" * 129, "\u00e9t\u00e9", ""])
async def test_malformed_session_id_is_400(session_id: str) -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", rpc(2, "ping"), headers(mcp_session_id=session_id))
        assert reply.status == 400


async def test_unknown_session_is_404_and_missing_is_400() -> None:
    async with running(make_server()) as client:
        unknown = await client.request("POST", rpc(2, "ping"), headers(mcp_session_id="nope"))
        assert unknown.status == 404
        missing = await client.request("POST", rpc(2, "ping"), headers())
        assert missing.status == 400
        assert missing.json["id"] == 2
        get = await client.request("GET", b"", headers(accept="text/event-stream"))
        assert get.status == 400
        delete = await client.request("DELETE", b"", headers())
        assert delete.status == 400


# ---------------------------------------------------------------- B48 protocol version
async def test_protocol_version_header() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        ok = await client.post(rpc(2, "ping"))
        assert ok.status == 200
        absent = await client.request(
            "POST", rpc(3, "ping"), headers(mcp_session_id=client.session_id)
        )
        assert absent.status == 200  # 2025-03-26 assumed
        bogus = await client.post(rpc(4, "ping"), mcp_protocol_version="1999-01-01")
        assert bogus.status == 400
        assert bogus.json["id"] == 4
        mismatch = await client.post(rpc(5, "ping"), mcp_protocol_version="2025-06-18")
        assert mismatch.status == 400


async def test_protocol_version_header_tolerated_on_initialize() -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", INIT, headers(mcp_protocol_version="2025-11-25"))
        assert reply.status == 200


# ---------------------------------------------------------------- B27 / B29 / B30 / B45 framing
async def test_declared_oversized_body_is_413_before_reading() -> None:
    async with running(make_server()) as client:
        exchange = client.start(
            "POST",
            [None],
            headers(content_length=str(1 << 30)),  # type: ignore[list-item]
        )
        with trio.fail_after(5):
            await exchange.complete.wait()
        assert exchange.status == 413
        assert exchange.headers["connection"] == "close"
        assert len(client.app.manager) == 0


async def test_streamed_oversized_body_is_413_while_reading() -> None:
    limits = HttpServerLimits(max_body_size=1000)
    async with running(make_server(), limits=limits) as client:
        chunks = [b"{" + b" " * 400] * 3 + [None]
        exchange = client.start(
            "POST",
            chunks,
            headers(transfer_encoding="chunked"),  # type: ignore[arg-type]
        )
        with trio.fail_after(5):
            await exchange.complete.wait()
        assert exchange.status == 413


async def test_slow_body_gets_408(autojump_clock: trio.testing.MockClock) -> None:
    async with running(make_server()) as client:
        exchange = client.start(
            "POST",
            [b"{", None],
            headers(content_length="100"),  # type: ignore[list-item]
        )
        with trio.fail_after(31):
            await exchange.complete.wait()
        assert exchange.status == 408
        assert exchange.headers["connection"] == "close"


async def test_oversized_header_block_is_431() -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", INIT, headers(x_big="a" * 17000))
        assert reply.status == 431


@pytest.mark.parametrize(
    "extra",
    [
        [("content-length", "10"), ("transfer-encoding", "chunked")],
        [("content-length", "10"), ("content-length", "11")],
        [("content-length", "10, 10")],
        [("content-length", "-1")],
    ],
)
async def test_smuggling_shapes_are_400_and_close(extra: list[tuple[str, str]]) -> None:
    async with running(make_server()) as client:
        items = [(k, v) for k, v in BASE.items()] + extra
        reply = await client.request("POST", INIT, items)
        assert reply.status == 400
        assert reply.headers["connection"] == "close"


# ---------------------------------------------------------------- body content
async def test_parse_error_is_400_with_null_id() -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", b'{"jsonrpc":"2.0",', headers())
        assert reply.status == 400
        assert reply.json["id"] is None
        assert reply.json["error"]["code"] == -32700
        assert len(client.app.manager) == 0


async def test_invalid_request_echoes_readable_id() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        reply = await client.post(b'{"jsonrpc":"2.0","id":7,"method":5}')
        assert reply.status == 400
        assert reply.json["id"] == 7
        assert reply.json["error"]["code"] == -32600


async def test_batches_refused_after_2025_03_26() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        reply = await client.post(b"[" + rpc(2, "ping") + b"," + rpc(3, "ping") + b"]")
        assert reply.status == 400
        assert reply.json["error"]["code"] == -32600


async def test_batches_in_a_2025_03_26_session() -> None:
    async with running(make_server()) as client:
        params = dict(INIT_PARAMS, protocolVersion="2025-03-26")
        await client.initialize(params)
        assert client.version == "2025-03-26"
        reply = await client.post(b"[" + rpc(2, "ping") + b"," + rpc(3, "tools/list") + b"]")
        assert reply.status == 200
        assert sorted(item["id"] for item in reply.json) == [2, 3]
        notes = await client.post(b"[" + rpc(None, "notifications/x") + b"]")
        assert notes.status == 202


async def test_duplicate_in_flight_id_is_400_and_first_completes() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        first = client.start(
            "POST", rpc(9, "tools/call", {"name": "wait_release"}), client.headers()
        )
        await trio.testing.wait_all_tasks_blocked()
        second = await client.post(rpc(9, "ping"))
        assert second.status == 400
        assert second.json["id"] == 9
        server.test_state["release"].set()
        with trio.fail_after(5):
            await first.complete.wait()
        assert first.json["result"]["content"][0]["text"] == "released"


# ---------------------------------------------------------------- methods and paths
async def test_other_methods_get_405_with_allow() -> None:
    async with running(make_server()) as client:
        reply = await client.request("PUT", b"", headers())
        assert reply.status == 405
        assert reply.headers["allow"] == "GET, POST, DELETE"


async def test_get_disabled_gets_405_with_allow() -> None:
    async with running(make_server(), standalone_get=False) as client:
        await client.initialize()
        reply = await client.request("GET", b"", client.headers(accept="text/event-stream"))
        assert reply.status == 405
        assert reply.headers["allow"] == "POST, DELETE"


async def test_other_paths_get_404() -> None:
    async with running(make_server()) as client:
        reply = await client.request("POST", INIT, headers(), path="/other")
        assert reply.status == 404


# ---------------------------------------------------------------- B38 session table
async def test_session_cap_gives_503_with_retry_after() -> None:
    async with running(make_server(), limits=HttpServerLimits(max_sessions=3)) as client:
        for _ in range(3):
            await AsgiClient(client.app, client.nursery).initialize()
        full = await client.request("POST", INIT, headers())
        assert full.status == 503
        assert full.headers["retry-after"] == "5"
        assert full.json["id"] == 1


async def test_idle_sessions_are_reaped(autojump_clock: trio.testing.MockClock) -> None:
    server = make_server()
    limits = HttpServerLimits(session_idle_timeout=60, max_sessions=2)
    async with running(server, limits=limits) as client:
        for _ in range(2):
            await AsgiClient(client.app, client.nursery).initialize()
        assert len(client.app.manager) == 2
        await trio.sleep(30)
        assert len(client.app.manager) == 2
        await trio.sleep(40)
        assert len(client.app.manager) == 0
        assert client.app.manager.reaped == 2
        assert len(server.sessions) == 0
        assert (await client.request("POST", INIT, headers())).status == 200


async def test_open_stream_keeps_a_session_from_being_reaped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limits = HttpServerLimits(session_idle_timeout=60)
    async with running(make_server(), limits=limits) as client:
        await client.initialize()
        get = client.start("GET", b"", client.headers(accept="text/event-stream"))
        await trio.sleep(600)
        assert len(client.app.manager) == 1
        get.disconnect.set()
        await trio.sleep(100)
        assert len(client.app.manager) == 0


async def test_not_running_gives_503() -> None:
    import trimcp

    app = trimcp.asgi_app(make_server())
    async with trio.open_nursery() as nursery:
        client = AsgiClient(app, nursery)
        reply = await client.request("POST", INIT, headers())
        assert reply.status == 503


def _one_slot_server() -> tuple[Any, HttpServerLimits]:
    """A server with one in-flight slot and one admission place, and a transport queue
    of one message, waiting five seconds for room."""
    import trimcp

    server = make_server()
    server.limits = trimcp.SessionLimits(max_in_flight=1, max_queued=1)
    return server, HttpServerLimits(inbound_queue=1, inbound_wait=5)


async def _fill(client: Any) -> list[Any]:
    """Five calls that wait for a release: one running, one in the session's admission
    step, one in its queue, one in the session reader's hand, one in the transport's
    inbound queue."""
    calls = [
        client.start("POST", rpc(10 + n, "tools/call", {"name": "wait_release"}), client.headers())
        for n in range(5)
    ]
    await trio.testing.wait_all_tasks_blocked()
    return calls


async def test_in_flight_flood_gets_503_once_the_session_stops_reading(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, limits = _one_slot_server()
    async with running(server, limits=limits) as client:
        await client.initialize()
        calls = await _fill(client)
        busy = await client.post(rpc(20, "ping"))
        assert busy.status == 503
        assert busy.headers["retry-after"] == "1"
        assert busy.json["id"] == 20
        (channel,) = client.app.manager._scopes
        assert not channel.in_flight(20)
        server.test_state["release"].set()
        with trio.fail_after(10):
            for call in calls:
                await call.complete.wait()
        assert all(c.json["result"]["content"][0]["text"] == "released" for c in calls)
        ok = await client.post(rpc(21, "ping"))
        assert ok.status == 200


def _noting_waits(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The ids of messages a POST delivered after waiting for room in the queue."""
    from trimcp.transports.http import _asgi_post

    waited: list[object] = []
    note = _asgi_post._note_waited

    def noting(channel: Any, message: Any) -> None:
        waited.append(message.id)
        note(channel, message)

    monkeypatch.setattr(_asgi_post, "_note_waited", noting)
    return waited


async def test_a_post_that_waited_for_room_is_delivered_once_there_is(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    waited = _noting_waits(monkeypatch)
    server, limits = _one_slot_server()
    async with running(server, limits=limits) as client:
        await client.initialize()
        calls = await _fill(client)
        waiting = client.start("POST", rpc(20, "ping"), client.headers())
        await trio.testing.wait_all_tasks_blocked()
        assert not waiting.complete.is_set()
        await trio.sleep(1)  # within inbound_wait: room comes before the deadline
        server.test_state["release"].set()
        with trio.fail_after(10):
            await waiting.complete.wait()
            for call in calls:
                await call.complete.wait()
        assert waiting.status == 200
        assert waiting.json["id"] == 20
        assert "result" in waiting.json
        assert 20 in waited  # it did wait for room, and was noted once delivered


async def test_a_whole_in_flight_window_of_posts_never_waits_for_room(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default queue from POSTs holds the default in-flight window: as many calls
    as ``max_in_flight`` arriving in one scheduler round are all queued at once (a
    smaller queue made most of them wait for room and resume once more)."""
    import trimcp

    waited = _noting_waits(monkeypatch)
    window = trimcp.SessionLimits().max_in_flight
    assert HttpServerLimits().inbound_queue >= window
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        calls = [
            client.start(
                "POST", rpc(100 + n, "tools/call", {"name": "wait_release"}), client.headers()
            )
            for n in range(window)
        ]
        await trio.testing.wait_all_tasks_blocked()
        assert waited == []
        assert not any(call.complete.is_set() for call in calls)
        server.test_state["release"].set()
        with trio.fail_after(10):
            for call in calls:
                await call.complete.wait()
        assert sorted(call.json["id"] for call in calls) == list(range(100, 100 + window))
        assert all(call.json["result"]["content"][0]["text"] == "released" for call in calls)
        assert waited == []

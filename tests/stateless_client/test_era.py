"""Era detection: ``open_client(era=...)`` against stateless, dual-era and legacy servers."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import trimcp
from trimcp.protocol import HANDSHAKE_VERSIONS, PROTOCOL_VERSION_META
from trimcp.wire import Request

from ._peer import DISCOVER, Err, ScriptedPeer, check_client_message

WAIT = 10


def dual_server(versions: tuple[str, ...] | None = None) -> trimcp.Server:
    server = (
        trimcp.Server("dual", version="2")
        if versions is None
        else trimcp.Server("legacy", version="1", supported_versions=versions)
    )

    @server.tool()
    async def add(a: int, b: int) -> str:
        return f"sum={a + b}"

    return server


async def test_auto_speaks_stateless_to_a_dual_era_server() -> None:
    with trio.fail_after(WAIT):
        async with trimcp.open_client(dual_server().in_memory(), era="auto") as client:
            assert client.stateless
            assert client.protocol_version == "2026-07-28"
            assert client.server_info is not None
            assert client.server_info.name == "dual"
            answer = await client.call_tool("add", {"a": 2, "b": 3})
            assert answer.content[0] == trimcp.TextContent(text="sum=5")


async def test_auto_falls_back_to_initialize_for_a_handshake_only_server() -> None:
    with trio.fail_after(WAIT):
        server = dual_server(HANDSHAKE_VERSIONS)
        async with trimcp.open_client(server.in_memory(), era="auto") as client:
            assert not client.stateless
            assert client.protocol_version == "2025-11-25"
            answer = await client.call_tool("add", {"a": 1, "b": 1})
            assert answer.content[0] == trimcp.TextContent(text="sum=2")


@pytest.mark.parametrize(
    ("era", "versions", "hooked"),
    [("auto", None, True), ("auto", HANDSHAKE_VERSIONS, False), ("handshake", None, False)],
)
async def test_the_send_hook_stays_only_in_the_stateless_era(
    era: str, versions: tuple[str, ...] | None, hooked: bool
) -> None:
    """The handshake era stamps nothing: once it is settled, messages skip the hook
    (and still reach the server as they were)."""
    with trio.fail_after(WAIT):
        async with trimcp.open_client(dual_server(versions).in_memory(), era=era) as client:  # type: ignore[arg-type]
            assert client.stateless is hooked
            assert (client.session._prepare is not None) is hooked
            answer = await client.call_tool("add", {"a": 2, "b": 2})
            assert answer.content[0] == trimcp.TextContent(text="sum=4")


async def test_stateless_only_refuses_a_handshake_only_server() -> None:
    with trio.fail_after(WAIT):
        server = dual_server(HANDSHAKE_VERSIONS)
        with pytest.raises(trimcp.McpError, match="not a stateless-era server"):
            async with trimcp.open_client(server.in_memory(), era="stateless"):
                pass


async def test_handshake_sends_no_probe() -> None:
    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"},
            }
        return {}

    peer = ScriptedPeer(script)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(peer, era="handshake") as client:
            assert client.protocol_version == "2025-11-25"
    assert not peer.requests("server/discover")


@pytest.mark.parametrize(
    "answer",
    [
        Err(-32601, "Method not found"),
        Err(-32600, "Not initialized"),
        Err(-32602, "Invalid params"),
        {},  # a result that is not a DiscoverResult
        {"supportedVersions": ["2025-11-25"]},  # no stateless version in common
    ],
)
async def test_any_non_modern_answer_means_legacy(answer: dict | Err) -> None:  # type: ignore[type-arg]
    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "server/discover":
            return answer
        if request.method == "initialize":
            return {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "old", "version": "1"},
            }
        return {}

    peer = ScriptedPeer(script)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(peer, era="auto") as client:
            assert not client.stateless
            assert client.protocol_version == "2025-06-18"
    assert [m.method for m in peer.requests("initialize")] == ["initialize"]
    # the initialize carries no stateless _meta: the probe's stamp was dropped
    params = peer.requests("initialize")[0].params or {}
    assert PROTOCOL_VERSION_META not in (params.get("_meta") or {})


async def test_a_silent_server_is_legacy_after_the_probe_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "server/discover":
            return None  # never answers
        if request.method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "quiet", "version": "1"},
            }
        return {}

    peer = ScriptedPeer(script)
    async with trimcp.open_client(peer, era="auto", discover_timeout=3) as client:
        assert not client.stateless
        assert trio.current_time() >= 3


async def test_unsupported_version_is_retried_with_a_mutual_one() -> None:
    calls: list[int] = []

    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "server/discover":
            calls.append(1)
            if len(calls) == 1:
                return Err(
                    -32022,
                    "Unsupported protocol version",
                    {"supported": ["2026-07-28"], "requested": "x"},
                )
            return DISCOVER
        return {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}

    peer = ScriptedPeer(script)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(peer, era="auto", name="n", version="9") as client:
            assert client.stateless
            assert client.server_info is not None
            assert client.server_info.name == "scripted"
            assert await client.list_all_tools() == []
    probes = peer.requests("server/discover")
    assert len(probes) == 2
    assert probes[0].id != probes[1].id
    for message in peer.received:
        check_client_message(message)
        meta = (message.params or {})["_meta"]  # type: ignore[union-attr]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "n", "version": "9"}
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {}


async def test_a_modern_refusal_is_raised_not_fallen_back_from() -> None:
    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        return Err(-32020, "Header mismatch")

    peer = ScriptedPeer(script)
    with trio.fail_after(WAIT), pytest.raises(trimcp.McpError) as caught:
        async with trimcp.open_client(peer, era="auto"):
            pass
    assert caught.value.code == -32020
    assert not peer.requests("initialize")


async def test_meta_carries_capabilities_and_log_level() -> None:
    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "server/discover":
            return {**DISCOVER, "capabilities": {"tools": {}, "logging": {}}}
        return {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}

    async def sample(
        _ctx: trimcp.HandlerContext, _p: trimcp.CreateMessageParams
    ) -> trimcp.CreateMessageResult:
        raise AssertionError("not called")

    peer = ScriptedPeer(script)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            peer, era="stateless", sampling=sample, roots=[trimcp.Root(uri="file:///r")]
        ) as client:
            await client.set_logging_level("warning")
            await client.list_tools()
    last = peer.requests("tools/list")[-1]
    check_client_message(last)
    meta = (last.params or {})["_meta"]
    assert meta["io.modelcontextprotocol/logLevel"] == "warning"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"sampling": {}, "roots": {}}
    assert not peer.requests("logging/setLevel")


async def test_ping_and_subscriptions_in_the_stateless_era() -> None:
    """ping() is a server/discover round trip there (the era has no ping); subscribing
    is refused locally with the way forward, before anything is sent."""
    server = dual_server()

    @server.resource("notes://a")
    async def note() -> str:
        return "a"

    sent: list[str] = []

    async def record(message: object, call_next: object) -> None:
        if isinstance(message, Request):
            sent.append(message.method)
        await call_next(message)  # type: ignore[operator]

    server.middlewares.server_recv.add(record)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory()) as client:
            assert client.stateless  # the default era is "auto"
            await client.ping()
            assert sent[-1] == "server/discover"
            with pytest.raises(trimcp.McpError) as info:
                await client.subscribe_resource("notes://a")
            assert info.value.code == -32601
            assert "listen(resource_uris" in info.value.message
            assert "resources/subscribe" not in sent
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            await client.ping()
            assert sent[-1] == "ping"


def _legacy_initialize(request: Request) -> dict | None:  # type: ignore[type-arg]
    if request.method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy", "version": "1"},
        }
    return None


async def test_a_probe_given_up_is_followed_by_initialize_alone(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A handshake-era server expects nothing but initialize (and pings) first: the
    silent probe is not cancelled, the next message is initialize."""

    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "server/discover":
            return None
        return _legacy_initialize(request) or {}

    peer = ScriptedPeer(script)
    async with trimcp.open_client(peer, era="auto", discover_timeout=3) as client:
        assert not client.stateless
        await client.ping()
    methods = [getattr(m, "method", None) for m in peer.received]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert "notifications/cancelled" not in methods


async def test_initialize_refused_with_32022_after_a_late_probe_probes_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A dual-era server that fixes a connection's era with its first request served
    the probe too late for us; it refuses initialize naming its stateless versions, and
    the client probes once more instead of failing."""
    locked: list[str] = []

    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "server/discover":
            if not locked:
                locked.append("modern")
                await trio.sleep(5)  # slow to start: past the client's probe timeout
            return DISCOVER
        if request.method == "initialize":
            supported = {"supported": ["2026-07-28"], "requested": "2025-11-25"}
            return Err(-32022, "Unsupported protocol version", supported)
        return {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}

    peer = ScriptedPeer(script)
    async with trimcp.open_client(peer, era="auto", discover_timeout=3) as client:
        assert client.stateless
        assert client.protocol_version == "2026-07-28"
        assert await client.list_all_tools() == []
    assert [m.method for m in peer.received if isinstance(m, Request)][:3] == [
        "server/discover",
        "initialize",
        "server/discover",
    ]


@pytest.mark.parametrize(
    ("error", "falls_back"),
    [
        (Err(-32022, "Unsupported", {"supported": ["2025-11-25", "2025-06-18"]}), True),
        (Err(-32022, "Unsupported", {"supported": ["2099-01-01"]}), False),
        (Err(-32603, "HTTP 401 Unauthorized", {"httpStatus": 401}), False),
        (Err(-32603, "HTTP 403 Forbidden", {"httpStatus": 403}), False),
        (Err(-32603, "HTTP 503 Service Unavailable", {"httpStatus": 503}), False),
        (Err(-32603, "HTTP 404 Not Found", {"httpStatus": 404}), True),
        (Err(-32600, "HTTP 400: Bad Request: Missing session ID", {"httpStatus": 400}), True),
    ],
)
async def test_which_refusals_of_the_probe_mean_the_handshake_era(
    error: Err, falls_back: bool
) -> None:
    async def script(request: Request) -> dict | Err | None:  # type: ignore[type-arg]
        if request.method == "server/discover":
            return error
        return _legacy_initialize(request) or {}

    peer = ScriptedPeer(script)
    with trio.fail_after(WAIT):
        if falls_back:
            async with trimcp.open_client(peer, era="auto") as client:
                assert client.protocol_version == "2025-11-25"
        else:
            with pytest.raises(trimcp.McpError) as caught:
                async with trimcp.open_client(peer, era="auto"):
                    pass
            assert caught.value.code == error.code
            assert not peer.requests("initialize")

"""Stateless-era requests carry their version, Mcp-Method and Mcp-Name on HTTP."""

from __future__ import annotations

import base64

import pytest
import trio
import trio.testing

from trimcp.transports.http import StreamableHttp
from trimcp.transports.http._client_modern import encode_header_value, modern_headers
from trimcp.wire import Notification, Request

from ._fake import mcp_app, start_server

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


@pytest.mark.parametrize(
    ("value", "plain"),
    [("add", True), ("file:///a b.txt", True), ("héllo", False), (" x", False),
     ("a\tb", False), ("=?base64?eA==?=", False)],
)  # fmt: skip
def test_header_values_are_encoded_when_unsafe(value: str, plain: bool) -> None:
    encoded = encode_header_value(value)
    if plain:
        assert encoded == value
    else:
        assert encoded.startswith("=?base64?")
        assert encoded.endswith("?=")
        assert base64.b64decode(encoded[9:-2]).decode() == value


def test_modern_headers_only_for_stateless_requests() -> None:
    call = Request(id=1, method="tools/call", params={"name": "add", "_meta": META})
    assert modern_headers(call) == (
        "2026-07-28",
        [("Mcp-Method", "tools/call"), ("Mcp-Name", "add")],
    )
    read = Request(id=2, method="resources/read", params={"uri": "mem://ü", "_meta": META})
    version, headers = modern_headers(read) or ("", [])
    assert version == "2026-07-28"
    assert headers[1][0] == "Mcp-Name"
    assert headers[1][1].startswith("=?base64?")
    assert modern_headers(Request(id=3, method="tools/list", params={"_meta": META})) == (
        "2026-07-28",
        [("Mcp-Method", "tools/list")],
    )
    assert modern_headers(Request(id=4, method="tools/call", params={"name": "x"})) is None
    assert modern_headers(Notification(method="notifications/x")) is None


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.02)


async def test_channel_sends_them_without_session(clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app())
        transport = StreamableHttp(url=server.url, listen=False)
        with trio.fail_after(10):
            async with transport.connect() as channel:
                channel.session_id = "old"
                channel.negotiated("2025-11-25")
                call = Request(id=1, method="tools/call", params={"name": "add", "_meta": META})
                await channel.send(call)
                answer = await channel.receive()
        nursery.cancel_scope.cancel()
    assert getattr(answer, "id", None) == 1
    (post,) = server.of("POST")
    assert post.headers["mcp-protocol-version"] == "2026-07-28"
    assert post.headers["mcp-method"] == "tools/call"
    assert post.headers["mcp-name"] == "add"
    assert "mcp-session-id" not in post.headers

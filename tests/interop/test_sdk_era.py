"""``open_client(era="auto")`` against real official-SDK servers over stdio.

* A handshake-only SDK server (its handshake-era loop): the ``server/discover`` probe
  is harmless to it. It answers the probe with an error at once, the client falls back
  to ``initialize`` without waiting for the probe timeout, and the server logs no
  warning or error about anything the client sent.
* The SDK's dual-era server fixes a connection's era with the first request it reads.
  Started slower than the client's probe timeout, it reads the probe only after the
  client gave up on it: it then refuses ``initialize`` with ``-32022``, and the client
  probes again and speaks the stateless era instead of failing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import trio

import trimcp

HERE = Path(__file__).parent
HANDSHAKE_ONLY = str(HERE / "sdk_handshake_server.py")
DUAL_ERA = str(HERE / "sdk_server.py")


async def test_the_probe_is_harmless_to_a_handshake_only_sdk_server(
    tmp_path: os.PathLike[str],
) -> None:
    log = Path(tmp_path, "server.log")
    command = trimcp.stdio_command(sys.executable, HANDSHAKE_ONLY, str(log))
    with trio.fail_after(30):
        async with trimcp.open_client(command, era="auto", discover_timeout=20) as client:
            assert not client.stateless
            assert client.protocol_version == "2025-11-25"
            assert client.server_info is not None
            assert client.server_info.name == "sdk-handshake-only"
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0] == trimcp.TextContent(text="5")
            await client.ping()
    assert await trio.Path(log).read_text() == ""  # nothing the client sent drew a warning


async def test_a_dual_era_sdk_server_slower_than_the_probe_timeout_ends_stateless() -> None:
    command = trimcp.stdio_command(sys.executable, DUAL_ERA)
    with trio.fail_after(30):
        # Starting a Python process takes far longer than 10 ms: the probe times out.
        async with trimcp.open_client(command, era="auto", discover_timeout=0.01) as client:
            assert client.stateless
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert result.structured_content == {"result": 3}

"""Property: the era probe is harmless to a handshake-era server.

Whatever a server makes of ``server/discover`` (any error, any result, silence), a
client with ``era="auto"`` sends it nothing but the probe (at most twice) before
``initialize``, never ``notifications/cancelled``, and ends in exactly one of: the
stateless era (a ``DiscoverResult`` naming a version it speaks), the handshake era, or
an error raised to the caller without ``initialize`` having been sent.
"""

from __future__ import annotations

from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.wire import Request

from ..stateless_client._peer import DISCOVER, Err, ScriptedPeer

codes = st.sampled_from([-32700, -32600, -32601, -32602, -32603, -32000, -32020, -32021, -32022])
versions = st.lists(st.sampled_from(["2025-11-25", "2025-06-18", "2026-07-28", "2099-01-01"]))
data = st.one_of(
    st.none(),
    st.fixed_dictionaries({"supported": versions}),
    st.fixed_dictionaries({"httpStatus": st.sampled_from([400, 401, 403, 404, 405, 500])}),
)
errors = st.builds(Err, code=codes, message=st.just("no"), data=data)
results = st.one_of(
    st.just(DISCOVER),
    st.fixed_dictionaries({"supportedVersions": versions}),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
answers = st.one_of(st.none(), errors, results)

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "serverInfo": {"name": "legacy", "version": "1"},
}


async def _open(first: Any, second: Any) -> tuple[ScriptedPeer, str]:
    probes: list[int] = []

    async def script(request: Request) -> Any:
        if request.method == "server/discover":
            probes.append(1)
            return first if len(probes) == 1 else second
        if request.method == "initialize":
            return INIT
        return {}

    peer = ScriptedPeer(script)
    try:
        async with trimcp.open_client(peer, era="auto", discover_timeout=2) as client:
            outcome = "stateless" if client.stateless else "handshake"
    except trimcp.McpError:
        outcome = "raised"
    return peer, outcome


@settings(max_examples=200, deadline=None, database=None)
@given(answers, answers)
def test_the_probe_is_harmless(first: Any, second: Any) -> None:
    clock = trio.testing.MockClock(autojump_threshold=0)
    peer, outcome = trio.run(_open, first, second, clock=clock)
    methods = [getattr(m, "method", None) for m in peer.received]
    opening = methods[: methods.index("initialize")] if "initialize" in methods else methods
    assert set(opening) <= {"server/discover"}
    assert 1 <= len(opening) <= 2
    assert "notifications/cancelled" not in methods
    if outcome == "raised":
        assert "initialize" not in methods
    elif outcome == "handshake":
        assert methods.count("initialize") == 1
    else:
        assert "initialize" not in methods

"""The stateless era's sealed request states across processes: a server given no keys
of its own seals with the shared store's key ring, so an input round begun on one
process ends on another."""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any

import attrs
import trio
import trio.testing

import trimcp
from trimcp.store import RedisStore

from ._services import RedisServer

DAY = 86400.0


@attrs.frozen
class _Nights:
    nights: int


def _server(keys: list[tuple[str, bytes]] | None = None) -> trimcp.Server:
    sealer = trimcp.RequestStateSealer(keys=keys)
    server = trimcp.Server("booking", request_state=sealer)

    @server.tool()
    async def book(ctx: trimcp.ToolContext, city: str) -> str:
        _, answer = await ctx.elicit(f"How many nights in {city}?", _Nights, key="nights")
        return f"booked {answer.nights} nights in {city}" if answer else "not booked"

    return server


async def _user(ctx: trimcp.HandlerContext, params: trimcp.ElicitParams) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"nights": 3})


_CALL = {"name": "book", "arguments": {"city": "Lyon"}}


async def test_a_round_begun_on_one_process_ends_on_another(
    redis_server: RedisServer, prefix: str
) -> None:
    servers = [_server(), _server(), _server(keys=[("own", b"a key of this process alone")])]
    async with trio.open_nursery() as nursery:
        ports = [
            await nursery.start(
                partial(
                    trimcp.serve_http,
                    server,
                    port=0,
                    store=RedisStore(redis_server.url, prefix=prefix),
                )
            )
            for server in servers
        ]
        one, two, own = (
            trimcp.open_client(
                trimcp.streamable_http(f"http://127.0.0.1:{port}/mcp"),
                era="stateless",
                elicitation=_user,
            )
            for port in ports
        )
        with trio.fail_after(20):
            async with one as to_one, two as to_two, own as to_own:
                first = await to_one.request("tools/call", _CALL)
                assert first["resultType"] == "input_required"
                retry: dict[str, Any] = {
                    **_CALL,
                    "inputResponses": {"nights": {"action": "accept", "content": {"nights": 3}}},
                    "requestState": first["requestState"],
                }
                second = await to_two.request("tools/call", retry)
                assert second["content"][0]["text"] == "booked 3 nights in Lyon"
                # Keys given to a server are its own: the ring does not replace them.
                try:
                    await to_own.request("tools/call", retry)
                except trimcp.McpError as exc:
                    refused: trimcp.McpError | None = exc
                else:
                    refused = None
                assert refused is not None
                assert refused.code == -32602
                assert "requestState refused" in refused.message
                assert "unknown key" in refused.message
        keys = [server.era.sealer for server in servers]
        assert not keys[0].explicit
        assert keys[2].explicit
        nursery.cancel_scope.cancel()


async def test_the_ring_rotates_and_a_new_key_seals_once_every_process_has_it(
    redis_server: RedisServer, prefix: str
) -> None:
    store = RedisStore(redis_server.url, prefix=prefix)
    async with trio.open_nursery() as nursery:
        await nursery.start(store.run)
        t0 = 1_800_000_000.0
        first = await store.request_state_keys(now=t0)
        assert len(first) == 1
        (k1,) = first
        assert await store.request_state_keys(now=t0 + 3600) == [k1]  # nothing new
        rotated = await store.request_state_keys(now=t0 + DAY)
        assert len(rotated) == 2
        assert rotated[0] == k1  # the new key is not ripe: the old one still seals
        k2 = rotated[1]
        # Another process reading a little later gets the same ring, the same order.
        assert await store.request_state_keys(now=t0 + DAY + 60) == [k1, k2]
        assert await store.request_state_keys(now=t0 + DAY + 120) == [k2, k1]
        again = await store.request_state_keys(now=t0 + 2 * DAY)
        assert len(again) == 2
        assert again[0] == k2  # k3 not ripe yet; k1 is gone
        assert k1 not in again
        for key_id, key in again:
            assert len(key) == 32
            assert key_id
        sealer = trimcp.RequestStateSealer()
        sealer.use_keys(again)
        token = sealer.seal({"m": "x"}, {"a": 1})
        assert token.split(".")[1] == k2[0]
        nursery.cancel_scope.cancel()


async def test_the_keys_are_read_again_every_period_for_as_long_as_the_server_runs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    from trimcp.server._http import KEY_REFRESH, _share_keys
    from trimcp.transports.http import StoreUnavailable

    reads: list[float] = []
    used: list[list[tuple[str, bytes]]] = []

    class _Store:
        async def request_state_keys(self) -> list[tuple[str, bytes]]:
            await trio.lowlevel.checkpoint()
            reads.append(trio.current_time())
            if len(reads) == 3:
                raise StoreUnavailable("Redis is away")  # the keys held are kept
            return [(f"k{len(reads)}", b"x" * 32)]

    class _Sealer:
        def use_keys(self, keys: list[tuple[str, bytes]]) -> None:
            used.append(keys)

    async with trio.open_nursery() as nursery:
        await nursery.start(_share_keys, _Store(), _Sealer())
        assert len(used) == 1  # read before the server serves
        await trio.sleep(5 * KEY_REFRESH + 1)
        nursery.cancel_scope.cancel()
    assert len(reads) == 6
    assert [b - a for a, b in itertools.pairwise(reads)] == [KEY_REFRESH] * 5
    assert [keys[0][0] for keys in used] == ["k1", "k2", "k4", "k5", "k6"]

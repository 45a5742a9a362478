"""Response caching: what the results' ttlMs/cacheScope hints allow, bounded."""

from __future__ import annotations

from functools import partial

import trio
import trio.testing

import trimcp
from trimcp.middleware import ResponseCache
from trimcp.server import CachePolicy

from ._servers import tool_server


async def _read(client: trimcp.Client) -> str:
    result = await client.read_resource("memo://today")
    return str(result.contents[0].text)  # type: ignore[union-attr]


async def test_results_without_hints_are_not_cached() -> None:
    server = tool_server()
    cache = ResponseCache()
    cache.install(server.middlewares)
    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        assert [await _read(client) for _ in range(3)] == ["read 1", "read 2", "read 3"]
    assert cache.hits == 0
    assert len(cache) == 0


async def test_a_default_ttl_caches_privately_until_it_expires(autojump_clock: object) -> None:
    server = tool_server()
    cache = ResponseCache(default_ttl_ms=1000)
    cache.install(server.middlewares)
    async with (
        trimcp.open_client(server.in_memory(), era="handshake") as client,
        trimcp.open_client(server.in_memory(), era="handshake") as other,
    ):
        assert await _read(client) == "read 1"
        assert await _read(client) == "read 1"  # from the cache
        assert await _read(other) == "read 2"  # private: per session
        await trio.sleep(1.5)
        assert await _read(client) == "read 3"  # expired
        raw = await client.request("resources/read", {"uri": "memo://today"})
        assert raw["ttlMs"] == 1000  # what is left is said on a cached answer
    assert cache.hits == 2


async def test_stateless_hints_public_entries_are_shared(autojump_clock: object) -> None:
    server = tool_server(cache=CachePolicy(ttl_ms=60_000, scope="public"))
    cache = ResponseCache()
    cache.install(server.middlewares)
    async with (
        trimcp.open_client(server.in_memory(), era="stateless") as one,
        trimcp.open_client(server.in_memory(), era="stateless") as two,
    ):
        assert await _read(one) == "read 1"
        assert await _read(two) == "read 1"  # public: shared across sessions
        tools = [t.name for t in await two.list_all_tools()]
        assert [t.name for t in await one.list_all_tools()] == tools
    assert cache.hits == 2


async def test_private_hints_are_kept_per_caller(autojump_clock: object) -> None:
    server = tool_server(cache=CachePolicy(ttl_ms=60_000, scope="private"))
    cache = ResponseCache(key=lambda _session, _request: "one caller")
    cache.install(server.middlewares)
    async with (
        trimcp.open_client(server.in_memory(), era="stateless") as one,
        trimcp.open_client(server.in_memory(), era="stateless") as two,
    ):
        assert await _read(one) == "read 1"
        assert await _read(two) == "read 1"  # same caller key


async def test_change_notifications_invalidate(autojump_clock: object) -> None:
    server = tool_server(declare_tools=True)
    cache = ResponseCache(default_ttl_ms=60_000)
    cache.install(server.middlewares)
    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        assert len(await client.list_all_tools()) == 4
        assert len(cache) == 1

        @server.tool()
        async def extra() -> str:
            return "new"

        await trio.testing.wait_all_tasks_blocked()
        assert len(cache) == 0  # tools/list_changed went out
        assert len(await client.list_all_tools()) == 5
        assert await _read(client) == "read 1"
        assert await _read(client) == "read 1"
        await client.subscribe_resource("memo://today")
        server.notify_resource_updated("memo://today")
        await trio.testing.wait_all_tasks_blocked()
        assert await _read(client) == "read 2"


async def test_the_cache_is_bounded(autojump_clock: object) -> None:
    server = tool_server()

    @server.resource_template("memo://day/{n}", name="day")
    async def day(n: str) -> str:
        return f"day {n}"

    cache = ResponseCache(default_ttl_ms=60_000, max_entries=3)
    cache.install(server.middlewares)
    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        for n in range(10):
            await client.read_resource(f"memo://day/{n}")
        assert len(cache) == 3


async def test_private_entries_are_never_shared_between_stateless_http_posts() -> None:
    """Stateless-era POSTs borrow pooled sessions: a private entry one caller left must
    not answer another caller whose POST lands on the same session."""
    server = tool_server(cache=CachePolicy(ttl_ms=60_000, scope="private"))
    cache = ResponseCache()
    cache.install(server.middlewares)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(trimcp.serve_http, server, port=0))
        url = f"http://127.0.0.1:{port}/mcp"
        with trio.fail_after(20):
            async with trimcp.open_client(trimcp.streamable_http(url), era="stateless") as one:
                first = await _read(one)
            async with trimcp.open_client(trimcp.streamable_http(url), era="stateless") as two:
                second = await _read(two)
        nursery.cancel_scope.cancel()
    assert first != second
    assert cache.hits == 0

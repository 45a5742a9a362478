"""Tokens over time: refresh before expiry and on 401, one refresh for concurrent calls,
step-up on 403 insufficient_scope and its limit, storage, authorization server moves."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

import trimcp
from trimcp import auth
from trimcp.transports.http import StreamableHttp

from ._world import World
from .test_code_flow import code_grant, refused, run

WAIT = 30


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.02)


def refreshes(world: World) -> int:
    return sum(1 for form, _ in world.token if form.get("grant_type") == "refresh_token")


async def test_concurrent_calls_share_one_refresh_before_expiry(
    clock: trio.testing.MockClock,
) -> None:
    now = [1_000.0]
    world = World(refresh=True, expires_in=600)

    async def body(client: trimcp.Client) -> None:
        await client.call_tool("add", {"a": 1, "b": 1})
        first = {h for h in world.mcp_auth if h}
        now[0] += 600 - 30  # inside the 60 s refresh margin
        async with trio.open_nursery() as nursery:
            for i in range(8):
                nursery.start_soon(client.call_tool, "add", {"a": i, "b": 1})
        later = world.mcp_auth[-8:]
        assert len(set(later)) == 1
        assert later[0] not in first

    await run(world, body=body, clock=lambda: now[0])
    assert refreshes(world) == 1
    form = next(f for f, _ in world.token if f.get("grant_type") == "refresh_token")
    assert form["resource"] == world.url
    assert form["client_id"] == "client-1"
    assert len(world.authorize) == 1  # no second user step


async def test_a_401_on_a_revoked_token_refreshes_once(clock: trio.testing.MockClock) -> None:
    world = World(refresh=True)

    async def body(client: trimcp.Client) -> None:
        await client.call_tool("add", {"a": 1, "b": 1})
        world.issued.clear()  # every token revoked: the next calls get 401
        async with trio.open_nursery() as nursery:
            for i in range(5):
                nursery.start_soon(client.call_tool, "add", {"a": i, "b": 1})

    await run(world, body=body)
    assert refreshes(world) == 1
    assert len(world.authorize) == 1


async def test_failed_refresh_falls_back_to_a_new_authorization(
    clock: trio.testing.MockClock,
) -> None:
    world = World(refresh=True)

    async def body(client: trimcp.Client) -> None:
        await client.call_tool("add", {"a": 1, "b": 1})
        world.issued.clear()
        world.refuse_refresh = True
        await client.call_tool("add", {"a": 2, "b": 1})

    await run(world, body=body)
    assert refreshes(world) == 1
    assert len(world.authorize) == 2


async def test_step_up_asks_for_the_union_of_scopes(clock: trio.testing.MockClock) -> None:
    world = World(challenge_scope="mcp:basic", needs={"tools/call": ["mcp:write"]})
    await run(world)
    assert [q.get("scope") for q in world.authorize] == ["mcp:basic", "mcp:basic mcp:write"]


async def test_step_up_stops_after_three_authorizations(clock: trio.testing.MockClock) -> None:
    world = World(always_403=True, challenge_scope="mcp:admin")
    message = await refused(world)
    assert len(world.authorize) == 3
    assert "3 authorizations" in message


async def test_max_attempts_is_configurable(clock: trio.testing.MockClock) -> None:
    world = World(always_403=True)
    await refused(world, max_attempts=1)
    assert len(world.authorize) == 1


async def test_transport_bounds_resends_per_request(clock: trio.testing.MockClock) -> None:
    """Whatever the layer answers, one request is re-sent max_auth_retries times."""

    class Always:
        calls = 0

        def attach(self, url: str) -> object:
            return self

        async def __aenter__(self) -> Always:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        async def headers(self, request: object) -> list[tuple[str, str]]:
            return [("Authorization", "Bearer nope")]

        async def challenged(self, request: object, sent: object, response: object) -> bool:
            self.calls += 1
            return True

        def observe(self, request: object, response: object) -> None:
            pass

        async def settled(self) -> bool:
            return True

    layer = Always()
    world = World()
    async with trio.open_nursery() as nursery:
        await world.start(nursery)
        transport = StreamableHttp(url=world.url, listen=False, auth=layer, max_auth_retries=2)

        async def connect() -> None:
            with trio.fail_after(WAIT):
                async with trimcp.open_client(transport, era="stateless"):
                    pass

        with pytest.raises(trimcp.McpError, match="still refused after 2"):
            await connect()
        nursery.cancel_scope.cancel()
    assert layer.calls == 2
    assert len(world.mcp_auth) == 3


async def test_tokens_are_stored_and_reused(clock: trio.testing.MockClock) -> None:
    storage = auth.MemoryTokenStorage()
    world = World()
    oauth = auth.OAuth(code_grant(), storage=storage)
    async with trio.open_nursery() as nursery:
        await world.start(nursery)
        for _ in range(2):  # two connections, one authorization
            transport = trimcp.streamable_http(world.url, listen=False, auth=oauth)
            with trio.fail_after(WAIT):
                async with trimcp.open_client(transport, era="auto") as client:
                    await client.list_tools()
        nursery.cancel_scope.cancel()
    assert len(world.authorize) == 1
    assert len(world.registered) == 1
    stored = await storage.get_tokens(world.url)
    assert stored is not None
    assert stored.issuer == world.as_url
    assert "tok-" not in repr(stored)  # no secret in a repr
    client = await storage.get_client(world.as_url)
    assert client is not None
    assert "secret" not in repr(client)


async def test_a_new_authorization_server_means_a_new_registration(
    clock: trio.testing.MockClock,
) -> None:
    first, second = World(), World(client_prefix="other")
    second.issued = first.issued  # the resource server accepts both servers' tokens

    async def body(client: trimcp.Client) -> None:
        await client.call_tool("add", {"a": 1, "b": 1})
        first.issued.clear()  # the old server's tokens stop working ...
        first.prm_as = second.as_url  # ... and the resource names the new one
        await client.call_tool("add", {"a": 2, "b": 1})

    async with trio.open_nursery() as nursery:
        await second.start(nursery)
        await run(first, body=body)
        nursery.cancel_scope.cancel()
    assert len(first.registered) == 1
    assert len(second.registered) == 1
    assert second.authorize[0]["client_id"] == "other-1"
    assert all(form.get("client_id") != "client-1" for form, _ in second.token)


async def test_no_token_in_logs_or_errors(
    clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    world = World(always_403=True, refresh=True)
    message = await refused(world)
    secrets = [*world.issued, *(f"r-{t}" for t in world.issued), "secret-1"]
    secrets += [form.get("code_verifier", "") for form, _ in world.token]
    text = caplog.text + message
    assert world.issued
    assert not [s for s in secrets if s and s in text]


async def test_a_probe_timed_out_during_authorization_is_sent_again(
    clock: trio.testing.MockClock,
) -> None:
    """A user slower than discover_timeout does not make a modern server look legacy."""

    async def slow_user(url: str) -> str:
        await trio.sleep(25)
        return await auth.fetch_redirect(url)

    world = World(stateless=True)
    era: list[bool] = []

    async def body(client: trimcp.Client) -> None:
        era.append(client.stateless)

    await run(world, code_grant(redirect=slow_user), body=body)
    assert era == [True]
    assert world.rs is not None
    probes = [r.headers.get("authorization") for r in world.rs.of("POST", "server/discover")]
    assert probes[0] is None
    assert probes[-1] is not None
    assert world.rs.of("POST", "initialize") == []
    assert len(world.authorize) == 1


async def test_headers_are_a_checkpoint_on_every_path(clock: trio.testing.MockClock) -> None:
    world = World()

    async def body(client: trimcp.Client) -> None:
        session = client.session.channel.gate.session  # type: ignore[attr-defined]
        info = trimcp.transports.http.HttpRequestInfo("POST", world.url, None)
        for _ in range(2):  # a held token, then the same one again
            with trio.testing.assert_checkpoints():
                assert await session.headers(info)
        with trio.testing.assert_checkpoints():
            assert await session.settled()

    await run(world, body=body)


async def test_stored_tokens_are_refreshed_by_a_new_process(
    clock: trio.testing.MockClock,
) -> None:
    """Tokens and a registration from an earlier run: refreshed, no user step."""
    world = World(refresh=True)
    storage = auth.MemoryTokenStorage()

    async def no_user(url: str) -> str:
        raise AssertionError("no user step expected")

    async with trio.open_nursery() as nursery:
        await world.start(nursery)
        world.issued["old"] = []
        kept = auth.ClientInfo(client_id="kept", issuer=world.as_url)
        await storage.set_client(world.as_url, kept)
        old = auth.Tokens(
            access_token="old",
            refresh_token="r-old",
            expires_at=1.0,  # long expired
            issuer=world.as_url,
            resource=world.url,
        )
        await storage.set_tokens(world.url, old)
        oauth = auth.OAuth(code_grant(redirect=no_user), storage=storage)
        transport = trimcp.streamable_http(world.url, listen=False, auth=oauth)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="auto") as client:
                await client.call_tool("add", {"a": 1, "b": 1})
        nursery.cancel_scope.cancel()
    assert refreshes(world) == 1
    assert world.authorize == []
    form, _ = world.token[0]
    assert form["refresh_token"] == "r-old"
    assert form["client_id"] == "kept"
    assert form["resource"] == world.url
    assert set(world.mcp_auth) == {"Bearer tok-1"}

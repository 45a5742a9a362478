"""Session floods (B38): bare ``initialize`` sessions expire fast, each client (address or
principal) has a budget of sessions, and a full table gives way to newcomers."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.transports.http import HttpServerLimits
from trimcp.transports.http._auth import AuthRefusal, AuthRequest
from trimcp.transports.http._fairness import address_key
from trimcp.transports.http._guards import HttpError
from trimcp.transports.http._sessions_manager import SessionManager

from ._asgi import BASE, INIT_PARAMS, AsgiClient, Exchange, rpc, running
from ._fixture import make_server

INIT = rpc(1, "initialize", INIT_PARAMS)


async def bare_initialize(client: AsgiClient, address: str, **kw: Any) -> Exchange:
    """An ``initialize`` POST from ``address`` that is never followed by ``initialized``."""
    exchange = client.start("POST", INIT, dict(BASE), client=(address, 40000), **kw)
    with trio.fail_after(10):
        await exchange.complete.wait()
    return exchange


async def established(client: AsgiClient, address: str, **kw: Any) -> AsgiClient:
    """A session from ``address`` that finished its handshake."""
    session = AsgiClient(client.app, client.nursery)
    reply = await bare_initialize(session, address, **kw)
    assert reply.status == 200, reply.body
    session.session_id = reply.headers["mcp-session-id"]
    done = session.start(
        "POST", rpc(None, "notifications/initialized"), session.headers(), client=(address, 1), **kw
    )
    with trio.fail_after(10):
        await done.complete.wait()
    assert done.status == 202
    return session


async def test_sessions_that_never_finish_their_handshake_expire_fast(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running(make_server()) as client:
        bare = await bare_initialize(client, "10.0.0.1")
        assert bare.status == 200
        kept = await established(client, "10.0.0.2")
        assert len(client.app.manager) == 2
        await trio.sleep(HttpServerLimits().handshake_timeout + 1)
        assert len(client.app.manager) == 1  # only the one that said initialized
        gone = client.start(
            "POST",
            rpc(2, "ping"),
            {**BASE, "mcp-session-id": bare.headers["mcp-session-id"]},
        )
        await gone.complete.wait()
        assert gone.status == 404
        assert (await kept.post(rpc(3, "ping"))).status == 200


async def test_one_address_cannot_take_the_whole_table() -> None:
    limits = HttpServerLimits(max_sessions_per_client=4)
    async with running(make_server(), limits=limits) as client:
        statuses = [(await bare_initialize(client, "10.0.0.1")).status for _ in range(10)]
        assert statuses == [200] * 4 + [429] * 6
        refused = await bare_initialize(client, "10.0.0.1")
        assert refused.headers["retry-after"] == str(limits.retry_after)
        assert refused.json["id"] == 1
        assert refused.json["error"]["code"] == -32000
        # Another address is unaffected; so is the same /64 counted as one client.
        assert (await bare_initialize(client, "10.0.0.2")).status == 200
        for n in range(4):
            assert (await bare_initialize(client, f"2001:db8::{n + 1}")).status == 200
        assert (await bare_initialize(client, "2001:db8::99")).status == 429
        assert (await bare_initialize(client, "2001:db8:0:1::1")).status == 200


async def test_a_flood_from_many_addresses_still_lets_a_newcomer_in() -> None:
    """Bare initializes from 16 addresses fill the whole table: a client that comes next
    is served, by the oldest handshake of the heaviest flooder giving way."""
    limits = HttpServerLimits(max_sessions=128, max_sessions_per_client=16)
    async with running(make_server(), limits=limits) as client:
        manager = client.app.manager
        for n in range(128):
            reply = await bare_initialize(client, f"10.1.{n % 16}.1")
            assert reply.status == 200
        assert len(manager) == 128
        newcomer = await established(client, "192.0.2.7")
        assert (await newcomer.post(rpc(2, "ping"))).status == 200
        assert len(manager) == 128
        # A table full of sessions that did finish their handshake is full for real.
        for n in range(127):
            await established(client, f"10.2.{n // 16}.1")
        late = await bare_initialize(client, "192.0.2.8")
        assert late.status == 503
        assert newcomer.session_id in manager._sessions


@attrs.frozen
class _Caller:
    identity: str
    expires_at: float | None = None


class _NamesTheCaller:
    """An authorization layer that believes whatever ``Authorization`` names."""

    def metadata(self, request: AuthRequest) -> bytes | None:
        return None

    async def authenticate(self, request: AuthRequest) -> _Caller:
        await trio.lowlevel.checkpoint()
        name = (request.headers.get("authorization") or "").removeprefix("Bearer ")
        if not name:
            raise AuthRefusal(401, "Unauthorized")
        return _Caller(name)

    def authorize(self, caller: object, request: AuthRequest, message: object) -> None:
        return None


async def test_authenticated_callers_are_budgeted_per_caller_not_per_address() -> None:
    limits = HttpServerLimits(max_sessions_per_client=2)
    async with running(make_server(), limits=limits, auth=_NamesTheCaller()) as client:

        async def initialize(address: str, who: str) -> int:
            headers = {**BASE, "authorization": f"Bearer {who}"}
            exchange = client.start("POST", INIT, headers, client=(address, 40000))
            with trio.fail_after(10):
                await exchange.complete.wait()
            assert exchange.status is not None
            return exchange.status

        # Alice from two addresses shares one budget ...
        assert await initialize("10.0.0.1", "alice") == 200
        assert await initialize("10.0.0.2", "alice") == 200
        assert await initialize("10.0.0.3", "alice") == 429
        # ... and Bob behind Alice's address has his own.
        assert await initialize("10.0.0.1", "bob") == 200
        assert await initialize("10.0.0.1", "bob") == 200
        assert await initialize("10.0.0.1", "bob") == 429


async def test_legacy_sessions_count_and_expire_the_same_way(
    autojump_clock: trio.testing.MockClock,
) -> None:
    from .test_legacy_sse import running as legacy_running

    limits = HttpServerLimits(max_sessions_per_client=2)
    async with legacy_running(make_server(), limits=limits) as client:
        streams = [client.start("GET", "/sse") for _ in range(3)]
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(s.status for s in streams) == [200, 200, 429]
        await trio.sleep(limits.handshake_timeout + 1)
        for stream in streams:
            assert stream.complete.is_set()  # no initialized: the session and its stream ended
        assert not len(client.app.manager)


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("10.0.0.1", "address:10.0.0.1"),
        ("2001:db8::1", "address:2001:db8::/64"),
        ("[2001:db8::ffff:1]", "address:2001:db8::/64"),
        ("::ffff:10.0.0.1", "address:10.0.0.1"),
        ("client.local", "address:client.local"),
    ],
)
def test_address_keys(host: str, key: str) -> None:
    assert address_key(host) == key


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("cie"), st.integers(0, 3)), max_size=80))
def test_the_table_stays_fair(ops: list[tuple[str, int]]) -> None:
    """Whatever clients do: none holds more than its budget, the table never overflows, a
    refusal for a full table means no handshake could give way, and a client under its
    budget is refused only then."""
    limits = HttpServerLimits(max_sessions=6, max_sessions_per_client=3)

    async def serve(channel: Any) -> None:
        await trio.sleep_forever()

    async def run() -> None:
        manager = SessionManager(serve, limits, None)
        async with trio.open_nursery() as nursery:
            await nursery.start(manager.run)
            owned: dict[int, list[Any]] = {n: [] for n in range(4)}
            for op, who in ops:
                key = f"address:10.0.0.{who}"
                if op == "c":
                    handshaking = bool(manager._handshaking)
                    before = len(owned[who])
                    status = 200
                    try:
                        owned[who].append(manager.create(client=key))
                    except HttpError as exc:
                        status = exc.status
                    assert status in (200, 429, 503)
                    if status == 429:
                        assert before >= 3
                    if status == 503:
                        assert not handshaking
                elif op == "i" and owned[who]:
                    hook = owned[who][-1].on_initialized
                    if hook is not None:
                        hook()
                elif op == "e" and owned[who]:
                    manager.terminate(owned[who].pop(0))
                for n in owned:
                    owned[n] = [c for c in owned[n] if not c.closed]
                    assert len(owned[n]) <= 3
                assert len(manager) <= 6
                assert sum(manager._clients.values()) == len(manager)
                await trio.lowlevel.checkpoint()
            nursery.cancel_scope.cancel()

    trio.run(run)

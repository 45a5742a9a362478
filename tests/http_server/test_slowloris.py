"""Slow clients against the h11 engine (B30): the connection table sheds connections that
are still waiting for a request head, deadlines shrink under pressure, a client over its
budget is turned away, and slow heads get 408. Real sockets on 127.0.0.1 only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.transports.http import HttpServerLimits, serve_h11
from trimcp.transports.http._connections import ConnectionTable, Ticket

from ._fixture import make_server
from .test_raw import INIT, exchange, post

SLOW_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"


@asynccontextmanager
async def h11_server(limits: HttpServerLimits) -> AsyncIterator[tuple[int, ConnectionTable]]:
    app = trimcp.asgi_app(make_server(), limits=limits)
    table = ConnectionTable(limits)
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        port = await nursery.start(
            lambda task_status: serve_h11(
                app, host="127.0.0.1", port=0, limits=limits, table=table, task_status=task_status
            )
        )
        yield port, table
        nursery.cancel_scope.cancel()


async def until(condition: Callable[[], bool]) -> None:
    """Wait (at most 5 s) for the server to reach a state: real sockets give no event."""
    with trio.fail_after(5):
        while not condition():  # noqa: ASYNC110
            await trio.sleep(0.005)


async def read_all(stream: trio.SocketStream) -> bytes:
    received = b""
    try:
        while chunk := await stream.receive_some(65536):
            received += chunk
    except trio.BrokenResourceError:
        pass
    return received


async def test_a_slow_head_gets_408_and_close() -> None:
    limits = HttpServerLimits(header_timeout=0.2)
    async with h11_server(limits) as (port, _):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(SLOW_HEAD)
            with trio.fail_after(5):
                reply = await read_all(stream)
        assert reply.startswith(b"HTTP/1.1 408")
        assert b'"code":-32600' in reply
        assert b"connection: close" in reply.lower()


async def test_a_client_is_served_while_slow_connections_fill_the_table() -> None:
    """Long deadlines, a table of 8: only giving way to newcomers keeps clients served."""
    limits = HttpServerLimits(max_connections=8, keep_alive_timeout=60, header_timeout=60)
    async with h11_server(limits) as (port, table):
        slow: list[trio.SocketStream] = []
        for n in range(24):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            if n % 2:
                await stream.send_all(SLOW_HEAD)  # a head begun, never finished
            slow.append(stream)
        await until(lambda: table.shed >= 16)
        with trio.fail_after(5):
            reply = await exchange(port, post(INIT))
        assert reply.startswith(b"HTTP/1.1 200"), reply[:100]
        assert table.active <= 8
        # Shed connections whose head had begun were told why; the others just closed.
        with trio.fail_after(5):
            endings = [await read_all(s) for s in slow[:8]]
        assert any(e.startswith(b"HTTP/1.1 408") for e in endings)
        assert all(e == b"" or e.startswith(b"HTTP/1.1 408") for e in endings)
        for stream in slow:
            await stream.aclose()


async def test_a_client_over_its_budget_is_turned_away_under_pressure() -> None:
    limits = HttpServerLimits(max_connections=10, pressure=0.5, max_connections_per_client=3)
    async with h11_server(limits) as (port, table):
        held = [await trio.open_tcp_stream("127.0.0.1", port) for _ in range(5)]
        await until(lambda: table.active == 5)
        with trio.fail_after(5):
            extra = await trio.open_tcp_stream("127.0.0.1", port)
            async with extra:
                reply = await read_all(extra)
        assert reply.startswith(b"HTTP/1.1 503")
        assert b"retry-after: 1" in reply
        assert b"too many connections from this client" in reply
        assert table.turned_away == 1
        for stream in held:
            await stream.aclose()
        await until(lambda: not table.active)
        # Below the pressure mark the same client is served again.
        assert (await exchange(port, post(INIT))).startswith(b"HTTP/1.1 200")


# ---------------------------------------------------------------- the table itself
def test_deadlines_shrink_with_the_load() -> None:
    limits = HttpServerLimits(max_connections=10, pressure=0.5, pressure_timeout=1.0)
    table = ConnectionTable(limits)
    tickets = [table.admit("a") for _ in range(5)]
    assert tickets[0] is not None
    assert tickets[0].timeout(began=False) == limits.keep_alive_timeout
    assert tickets[0].timeout(began=True) == limits.header_timeout
    for _ in range(3):
        table.admit("b")
    assert table.scaled(10.0) == pytest.approx(4.0)  # load 0.8: 40 % left of the range
    for _ in range(2):
        table.admit("c")
    assert table.scaled(10.0) == 1.0  # full: the floor
    assert table.scaled(0.5) == 0.5  # never longer than asked


async def test_shedding_takes_the_oldest_waiting_connection_of_the_heaviest_client() -> None:
    limits = HttpServerLimits(max_connections=4)
    table = ConnectionTable(limits)
    scopes = [trio.CancelScope() for _ in range(4)]
    tickets: list[Ticket] = []
    for key, scope in zip(["a", "b", "b", "a"], scopes, strict=True):
        ticket = table.admit(key)
        assert ticket is not None
        ticket.waiting(scope)
        tickets.append(ticket)
    tickets[3].working()  # serving a request: never shed
    with trio.fail_after(1):
        await table.make_room()
    assert tickets[1].shed  # "b" had two waiting, and this is its oldest
    assert scopes[1].cancel_called
    assert not any(t.shed for t in (tickets[0], tickets[2], tickets[3]))
    assert table.active == 3
    table.admit("c")
    for ticket in (tickets[0], tickets[2]):
        ticket.working()
    async with trio.open_nursery() as nursery:  # nothing to shed: wait for a release
        nursery.start_soon(table.make_room)
        await trio.testing.wait_all_tasks_blocked()
        assert table.active == 4
        tickets[3].release()
    assert table.active == 3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("awrm"), st.integers(0, 2)), max_size=60))
def test_the_connection_table_stays_within_its_bounds(ops: list[tuple[str, int]]) -> None:
    """Whatever connections do, the table never exceeds its cap, counts balance, only a
    waiting connection is ever shed, and a client is turned away only under pressure
    and over its budget."""
    limits = HttpServerLimits(max_connections=5, pressure=0.6, max_connections_per_client=2)

    async def run() -> None:
        table = ConnectionTable(limits)
        live: list[tuple[Ticket, trio.CancelScope]] = []
        for op, who in ops:
            if op == "a" and table.active < limits.max_connections:
                pressure, held = table.under_pressure, table.clients(str(who))
                ticket = table.admit(str(who))
                if ticket is None:
                    assert pressure
                    assert held >= 2
                else:
                    live.append((ticket, trio.CancelScope()))
            elif op == "w" and live:
                ticket, scope = live[who % len(live)]
                ticket.waiting(scope)
            elif op == "r" and live:
                live.pop(who % len(live))[0].release()
            elif op == "m":
                waiting = {t for t, _ in live if t in table._waiting}
                with trio.move_on_after(0):  # no release can come: only shedding helps
                    await table.make_room()
                for ticket, _ in live:
                    assert not ticket.shed or ticket in waiting
            live = [(t, s) for t, s in live if not t.released]
            assert table.active == len(live) <= limits.max_connections
            assert sum(table._clients.values()) == table.active

    trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))

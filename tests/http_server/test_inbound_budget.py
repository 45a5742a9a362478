"""The inbound budget: bytes of request bodies being received, per client and in all.

Bodies trickled by slow clients are held while they arrive; without a budget a thousand
connections could make the server hold a thousand bodies of ``max_body_size`` each."""

from __future__ import annotations

from contextlib import ExitStack

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.transports.http import HttpServerLimits
from trimcp.transports.http._guards import HttpError
from trimcp.transports.http._inbound import BUSY, BodyReservation, InboundBudget

from ._asgi import INIT_PARAMS, AsgiClient, Exchange, rpc, running
from ._fixture import make_server

LIMITS = HttpServerLimits(inbound_client_bytes=1000, inbound_total_bytes=1500)


def _address(n: int) -> tuple[str, int]:
    return (f"10.0.0.{n}", 40000 + n)


def _stalled(client: AsgiClient, address: int, sent: int) -> Exchange:
    """A POST that declares 2000 bytes, sends ``sent`` of them, then goes quiet."""
    headers = client.headers(content_length="2000")
    chunks: list[bytes | None] = [b" " * sent, None]
    return client.start("POST", chunks, headers, client=_address(address))


async def _finished(exchange: Exchange) -> Exchange:
    with trio.fail_after(5):
        await exchange.complete.wait()
    return exchange


def _refused_busy(exchange: Exchange) -> None:
    assert exchange.status == 503
    assert exchange.headers["retry-after"] == "1"
    assert exchange.headers.get("connection") == "close"
    error = exchange.json["error"]
    assert error["code"] == -32000
    assert error["message"] == BUSY


async def test_a_client_over_its_share_is_refused_and_others_go_on() -> None:
    async with running(make_server(), limits=LIMITS) as client:
        inbound = client.app.manager.inbound
        first = _stalled(client, 1, 600)
        await trio.testing.wait_all_tasks_blocked()
        assert inbound.held_by("address:10.0.0.1") == 600
        # The same client trickling a second body goes past its 1000 bytes: refused.
        second = await _finished(_stalled(client, 1, 600))
        _refused_busy(second)
        assert inbound.used == 600  # the refused body's bytes went back at once
        # Another client is untouched: its whole body fits beside the first.
        body = rpc(1, "initialize", INIT_PARAMS)
        other = await _finished(client.start("POST", body, client.headers(), client=_address(2)))
        assert other.status == 200, other.body
        assert inbound.used == 600
        # A third client stalling too would take the server past 1500 bytes: refused.
        third = await _finished(_stalled(client, 3, 1000))
        _refused_busy(third)
        # The first client gives up: everything is back, and it may send again.
        first.disconnect.set()
        await _finished(first)
        assert inbound.used == 0
        assert inbound.held_by("address:10.0.0.1") == 0
        again = await _finished(client.start("POST", body, client.headers(), client=_address(1)))
        assert again.status == 200, again.body
        assert inbound.used == 0


async def test_a_refused_body_leaves_the_session_usable() -> None:
    async with running(make_server(), limits=LIMITS) as client:
        await client.initialize()
        held = _stalled(client, 1, 900)
        await trio.testing.wait_all_tasks_blocked()
        call = rpc(7, "tools/call", {"name": "echo", "arguments": {"text": "x" * 300}})
        busy = await _finished(client.start("POST", call, client.headers(), client=_address(1)))
        _refused_busy(busy)
        held.disconnect.set()
        await _finished(held)
        assert client.app.manager.inbound.used == 0
        answered = await _finished(client.start("POST", call, client.headers(), client=_address(1)))
        assert answered.status == 200
        reply = answered.messages[-1] if answered.messages else answered.json
        assert reply["id"] == 7
        assert reply["result"]["content"][0]["text"] == "x" * 300


# ---------------------------------------------------------------- the budget itself
_CLIENTS = st.sampled_from(["a", "b", "c", None])
#: Sizes, with the limits' edges among them (per client 1000, in all 1500).
_SIZES = st.one_of(st.integers(0, 1200), st.sampled_from([0, 250, 500, 750, 1000]))
_STEPS = st.lists(
    st.one_of(
        st.builds(lambda c: ("open", c, 0), _CLIENTS),
        st.builds(lambda i, n: ("take", i, n), st.integers(0, 5), _SIZES),
        st.builds(lambda i: ("close", i, 0), st.integers(0, 5)),
        st.builds(lambda c, n: ("check", c, n), _CLIENTS, _SIZES),
    ),
    max_size=60,
)


@attrs.define
class _Body:
    client: str | None
    stack: ExitStack
    reservation: BodyReservation


@settings(max_examples=300, deadline=None)
@given(_STEPS)
def test_the_budget_never_holds_more_than_its_limits_and_gives_everything_back(
    steps: list[tuple[str, object, int]],
) -> None:
    budget = InboundBudget(total=1500, per_client=1000)
    bodies: list[_Body] = []
    for kind, arg, size in steps:
        if kind == "open":
            client = arg if isinstance(arg, str) else None
            stack = ExitStack()
            bodies.append(_Body(client, stack, stack.enter_context(budget.receiving(client))))
        elif kind == "take" and bodies:
            body = bodies[int(str(arg)) % len(bodies)]
            before = (budget.held_by(body.client), budget.used)
            fits = before[0] + size <= 1000 and before[1] + size <= 1500
            refused = None
            try:
                body.reservation.take(size)
            except HttpError as exc:
                refused = exc
            assert (refused is None) == fits
            if refused is not None:
                assert refused.status == 503
                assert (budget.held_by(body.client), budget.used) == before
        elif kind == "close" and bodies:
            bodies.pop(int(str(arg)) % len(bodies)).stack.close()
        elif kind == "check":
            # A body received whole is only checked: refused exactly when taking its
            # bytes would be, and nothing is held after either way.
            client = arg if isinstance(arg, str) else None
            before = (budget.held_by(client), budget.used)
            with ExitStack() as stack:
                taken = stack.enter_context(budget.receiving(client))
                try:
                    taken.take(size)
                    would_take = True
                except HttpError:
                    would_take = False
            refused = None
            try:
                budget.check(client, size)
            except HttpError as exc:
                refused = exc
            assert (refused is None) == would_take
            assert refused is None or (refused.status, refused.message) == (503, BUSY)
            assert (budget.held_by(client), budget.used) == before
        assert budget.used == sum(b.reservation.held for b in bodies) <= 1500
        for client in {b.client for b in bodies}:
            assert budget.held_by(client) <= 1000
    for body in bodies:
        body.stack.close()
    assert budget.used == 0
    assert budget.held_by(None) == 0


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        HttpServerLimits(inbound_total_bytes=0)


def test_a_body_received_whole_is_checked_up_to_the_limits_exactly() -> None:
    budget = InboundBudget(total=1500, per_client=1000)
    with budget.receiving("a") as held:
        held.take(500)
        budget.check("b", 1000)  # the server's budget to the byte
        budget.check("a", 500)  # the client's share to the byte
        for client, size in (("b", 1001), ("a", 501)):
            with pytest.raises(HttpError) as refused:
                budget.check(client, size)
            assert refused.value.status == 503
        assert (budget.used, budget.held_by("a"), budget.held_by("b")) == (500, 500, 0)

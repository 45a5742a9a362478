"""The session lifecycle as one table: the barrier of ``initialize``, draining, and
clear errors for transitions the table does not have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.nursery import (
    TRANSITIONS,
    Event,
    Lifecycle,
    LifecycleError,
    Phase,
    Role,
    SessionState,
)
from trimcp.nursery._lifecycle import diagram
from trimcp.wire import (
    INVALID_REQUEST,
    ErrorResponse,
    LocalProtocolError,
    Message,
    Notification,
    Request,
    Response,
)

from ._support import init_params, raw_pair, served


def _server() -> trimcp.Server:
    server = trimcp.Server("table")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


async def _burst(server: trimcp.Server, messages: list[Message]) -> dict[object, Message]:
    """Serve ``server`` to a peer that sends ``messages`` in one go; the answers by id."""
    peer, channel = raw_pair()
    for message in messages:
        peer.send_channel.send_nowait(message)
    answers: dict[object, Message] = {}
    expected = sum(isinstance(m, Request) for m in messages)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_channel, channel)
        with trio.fail_after(10):
            while len(answers) < expected:
                message = await peer.receive()
                answers[getattr(message, "id", None)] = message
        await peer.close()
    return answers


async def test_a_pipelined_handshake_is_judged_after_initialize_completes() -> None:
    """initialize, initialized, tools/list and a call read in one burst: every request
    is judged once initialize is done (Trio orders a scheduler batch at random, so
    the race this guards against shows within a few rounds)."""
    burst: list[Message] = [
        Request(id=0, method="initialize", params=init_params()),
        Notification(method="notifications/initialized"),
        Request(id=1, method="tools/list"),
        Request(id=2, method="tools/call", params={"name": "echo", "arguments": {"text": "x"}}),
    ]
    for _ in range(16):
        answers = await _burst(_server(), burst)
        assert all(isinstance(a, Response) for a in answers.values()), answers
        assert [t["name"] for t in answers[1].result["tools"]] == ["echo"]  # type: ignore[union-attr]


async def test_requests_before_initialize_and_a_second_initialize_are_refused() -> None:
    answers = await _burst(
        _server(),
        [
            Request(id="early", method="tools/list"),
            Request(id="ping", method="ping"),
            Request(id=0, method="initialize", params=init_params()),
            Request(id="again", method="initialize", params=init_params()),
        ],
    )
    early, again = answers["early"], answers["again"]
    assert isinstance(early, ErrorResponse)
    assert (early.error.code, early.error.message) == (
        INVALID_REQUEST,
        "Invalid Request: the session is not initialized",
    )
    assert answers["ping"] == Response(id="ping", result={})
    assert isinstance(answers[0], Response)
    assert isinstance(again, ErrorResponse)
    assert again.error.message == "Invalid Request: the session is already initialized"


async def test_a_failed_initialize_leaves_the_session_new() -> None:
    async with served(_server(), initialize=False) as (peer, session):
        reply = await peer.request(0, "initialize", {"protocolVersion": 5})
        assert isinstance(reply, ErrorResponse)
        assert session.state.phase is Phase.NEW
        await peer.request(1, "initialize", init_params())
        assert session.state.phase is Phase.INITIALIZED
        await peer.send(Notification(method="notifications/initialized"))
        await peer.settle()
        assert session.state.phase is Phase.OPERATING


async def test_the_phases_a_session_goes_through() -> None:
    seen: list[Phase] = []
    async with served(_server(), initialize=False) as (peer, session):
        seen.append(session.state.phase)
        await peer.initialize()
        await peer.settle()
        seen.append(session.state.phase)
        trimcp.nursery.refuse_requests(session)
        seen.append(session.state.phase)
        reply = await peer.request(9, "ping")
        assert isinstance(reply, ErrorResponse)
        assert (reply.error.code, reply.error.message) == (-32000, "Server is shutting down")
    seen.append(session.state.phase)
    assert seen == [Phase.NEW, Phase.OPERATING, Phase.DRAINING, Phase.CLOSED]


def test_an_unknown_transition_is_a_clear_error() -> None:
    state = SessionState()
    server = Lifecycle(Role.SERVER, state)
    with pytest.raises(LocalProtocolError, match="initialize answered is not allowed while"):
        server.handle(Event.INITIALIZE_ANSWERED)  # nothing was initializing
    assert state.phase is Phase.NEW
    server.handle(Event.CLOSE)
    with pytest.raises(LifecycleError) as info:
        server.handle(Event.REQUEST)
    assert info.value.code == INVALID_REQUEST
    assert "request while the server session is closed" in info.value.message
    client = Lifecycle(Role.CLIENT, SessionState())
    with pytest.raises(LocalProtocolError, match=r"initialized is not allowed while the client"):
        client.handle(Event.INITIALIZED)


def test_the_table_covers_every_phase_and_the_diagram_is_made_from_it() -> None:
    for role, rows in TRANSITIONS.items():
        assert set(rows) <= set(Phase), role
        for phase, row in rows.items():
            if phase is not Phase.CLOSED:
                assert Event.CLOSE in row, (role, phase)
    lines = diagram(Role.SERVER)
    assert "new --initialize [BARRIER]--> initializing" in lines
    assert "initializing --initialize answered [ACCEPT]--> initialized" in lines
    assert "initialized --notifications/initialized [ACCEPT]--> operating" in lines
    assert "new --server/discover answered [ACCEPT]--> stateless" in diagram(Role.CLIENT)


async def test_the_client_walks_its_side_of_the_table() -> None:
    async with trimcp.open_client(_server().in_memory(), era="handshake") as client:
        assert client.state.phase is Phase.OPERATING
    assert client.state.phase is Phase.CLOSED
    async with trimcp.open_client(_server().in_memory()) as client:
        assert client.state.phase is Phase.STATELESS
        assert client.state.stateless


async def test_stateless_requests_skip_the_handshake(autojump_clock: Any) -> None:
    """A request carrying its own version is the era layer's to judge, before any
    initialize and without moving the session's phase."""
    from ..stateless._support import params

    async with served(_server(), initialize=False) as (peer, session):
        reply = await peer.request(
            1, "tools/call", params({"name": "echo", "arguments": {"text": "s"}})
        )
        assert isinstance(reply, Response), reply
        assert session.state.phase is Phase.NEW


def test_the_readme_shows_the_table_as_it_is() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = "```\n" + "\n".join(diagram(Role.SERVER)) + "\n```\n"
    assert block in readme, "regenerate the README's lifecycle diagram from diagram()"

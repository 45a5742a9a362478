"""Shared tools of the engine-core tests: raw peers, served servers, leak checks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from trimcp.dispatch import Middlewares, Registry
from trimcp.nursery import Role, Session, SessionLimits, open_session
from trimcp.server import Server
from trimcp.transports import MemoryChannel, memory_channel_pair
from trimcp.wire import Message, Notification, Request, RequestId, Response

#: Generous bound (seconds) for anything a test waits for on the real clock.
WAIT = 30
#: The same bound under the autojump clock, where protocol timeouts of minutes pass at once.
VIRTUAL_WAIT = 10_000


def wait_bound() -> float:
    """How long a test may wait for something before it is declared hung."""
    clock = trio.lowlevel.current_clock()
    return VIRTUAL_WAIT if isinstance(clock, trio.testing.MockClock) else WAIT


def init_params(
    version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "raw-peer", "version": "1.0"},
    }


class Peer:
    """The far end of a memory pair, driven by hand: raw wire messages in and out.

    Given its ``end`` of a :func:`memory_channel_pair`, it reads through it, so that a
    session's sender waiting for room in the buffer is woken as the peer reads; its
    ``send_channel`` and ``receive_channel`` are that end's bare Trio channels.
    """

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[Message],
        receive_channel: trio.MemoryReceiveChannel[Message],
        end: MemoryChannel | None = None,
    ) -> None:
        self.send_channel = send_channel
        self.receive_channel = receive_channel
        self.end = end

    async def send(self, message: Message) -> None:
        await self.send_channel.send(message)

    async def receive(self) -> Message:
        with trio.fail_after(wait_bound()):
            if self.end is not None:
                return await self.end.receive()
            return await self.receive_channel.receive()

    async def settle(self) -> None:
        """Let every task run until all are blocked."""
        await trio.testing.wait_all_tasks_blocked()

    def drain(self) -> list[Message]:
        """Everything already received, without waiting."""
        out: list[Message] = []
        receive_nowait = (self.end or self.receive_channel).receive_nowait
        while True:
            try:
                out.append(receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                return out

    async def quiet_drain(self) -> list[Message]:
        """Settle, then everything received so far."""
        await self.settle()
        return self.drain()

    async def request(self, id: int | str, method: str, params: Any = None) -> Message:
        """Send a request and return the next message (which must answer it)."""
        await self.send(Request(id=id, method=method, params=params))
        reply = await self.receive()
        assert getattr(reply, "id", None) == id, reply
        return reply

    async def initialize(
        self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
    ) -> Response:
        reply = await self.request("init", "initialize", init_params(version, capabilities))
        assert isinstance(reply, Response), reply
        await self.send(Notification(method="notifications/initialized"))
        return reply

    async def close(self) -> None:
        await self.send_channel.aclose()
        await self.receive_channel.aclose()


def raw_pair(max_buffer: int = 64, *, timed: bool = True) -> tuple[Peer, MemoryChannel]:
    """A hand-driven peer and the channel a session runs on: the two ends of a
    :func:`memory_channel_pair` (whose sends the session's deadline timer can
    interrupt), or with ``timed=False`` a channel over bare Trio channels (each
    outbound call then bounded by a cancel scope of its own)."""
    if not timed:
        to_session, session_in = trio.open_memory_channel[Message](max_buffer)
        session_out, from_session = trio.open_memory_channel[Message](max_buffer)
        return Peer(to_session, from_session), MemoryChannel(session_out, session_in)
    end, channel = memory_channel_pair(max_buffer=max_buffer)
    # The end's own Trio channels (private), for tests that send or read them bare.
    return Peer(end._send, end._receive, end), channel


def assert_session_clean(session: Session) -> None:
    assert session.in_flight == 0
    assert session.pending == 0
    assert session.background_tasks == 0


@asynccontextmanager
async def served(
    server: Server,
    *,
    initialize: bool = True,
    version: str = "2025-11-25",
    capabilities: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[Peer, Session]]:
    """Serve ``server`` to a raw peer; on exit close the peer and check nothing is left."""
    peer, channel = raw_pair()
    async with trio.open_nursery() as nursery:
        session: Session = await nursery.start(server.serve_channel, channel)
        if initialize:
            await peer.initialize(version, capabilities)
        try:
            yield peer, session
        finally:
            await peer.close()
    assert session.is_closed
    assert_session_clean(session)


def _walk(task: trio.lowlevel.Task) -> Iterator[trio.lowlevel.Task]:
    yield task
    for nursery in task.child_nurseries:
        for child in nursery.child_tasks:
            yield from _walk(child)


def live_tasks() -> set[trio.lowlevel.Task]:
    """Every task of this Trio run, from the root task down."""
    return set(_walk(trio.lowlevel.current_root_task()))


@asynccontextmanager
async def no_leaked_tasks() -> AsyncIterator[None]:
    """Fail if a task started inside the block is still alive after it."""
    before = live_tasks()
    yield
    await trio.testing.wait_all_tasks_blocked()
    leaked = live_tasks() - before
    assert not leaked, [t.name for t in leaked]


def server_session(server: Server) -> Session:
    """The one session ``server`` is serving."""
    (session,) = server.sessions
    return session


@asynccontextmanager
async def raw_session(
    registry: Registry,
    *,
    role: Role = Role.SERVER,
    limits: SessionLimits | None = None,
    middlewares: Middlewares | None = None,
    timed: bool = True,
) -> AsyncIterator[tuple[Peer, Session]]:
    """A bare engine session (no lifecycle) on ``registry``, facing a raw peer
    (``timed``: see :func:`raw_pair`)."""
    peer, channel = raw_pair(timed=timed)
    async with open_session(
        channel, role=role, registry=registry, limits=limits, middlewares=middlewares
    ) as session:
        yield peer, session
    assert session.is_closed
    assert_session_clean(session)


class RecordingChannel:
    """Wraps a channel and records every ``(message, related)`` the session sends."""

    def __init__(self, inner: MemoryChannel) -> None:
        self.inner = inner
        self.sent: list[tuple[Message, RequestId | None]] = []

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        self.sent.append((message, related))
        await self.inner.send(message, related=related)

    async def receive(self) -> Message:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def negotiated(self, protocol_version: str) -> None:
        self.inner.negotiated(protocol_version)


class RecordingTransport:
    """A client transport serving ``server`` in-process through a :class:`RecordingChannel`.

    ``sessions`` collects the server sessions it started, ``channel`` is the last one.
    """

    def __init__(self, server: Server) -> None:
        self.server = server
        self.channel: RecordingChannel | None = None
        self.sessions: list[Session] = []

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[MemoryChannel]:
        from trimcp.transports import memory_channel_pair

        client_end, server_end = memory_channel_pair()
        self.channel = RecordingChannel(server_end)
        async with trio.open_nursery() as nursery:
            session = await nursery.start(self.server.serve_channel, self.channel)
            self.sessions.append(session)
            try:
                yield client_end
            finally:
                nursery.cancel_scope.cancel()


class RawServerTransport:
    """A client transport whose server end is a hand-driven :class:`Peer`."""

    def __init__(self) -> None:
        self.peer, self._channel = raw_pair()

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[MemoryChannel]:
        yield self._channel

    async def answer_initialize(self, version: str = "2025-11-25") -> Request:
        """Answer the client's ``initialize`` and swallow ``notifications/initialized``."""
        request = await self.peer.receive()
        assert isinstance(request, Request), request
        assert request.method == "initialize"
        await self.peer.send(
            Response(
                id=request.id,
                result={
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw-server", "version": "1"},
                },
            )
        )
        note = await self.peer.receive()
        assert isinstance(note, Notification), note
        assert note.method == "notifications/initialized"
        return request

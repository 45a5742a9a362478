"""The in-memory transport: two channels joined by bounded Trio memory channels.

Messages cross as the (frozen) message objects themselves, with no encoding, so an
in-memory pair measures the engine rather than JSON. Each direction buffers at most
``max_buffer`` messages; a full buffer makes the sender wait (backpressure), in arrival
order, until the receiving end takes a message; ``interrupt_send`` withdraws a waiting
sender's message (a call's deadline passed meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import outcome
import trio

from trimcp.wire import Message, RequestId

from ._parked import ParkedTasks

__all__ = ["DEFAULT_MEMORY_BUFFER", "MemoryChannel", "memory_channel_pair"]

#: Messages buffered per direction of a memory pair.
DEFAULT_MEMORY_BUFFER = 32


@final
class _Room(ParkedTasks[None]):
    """Senders of one direction waiting for room in its buffer, in arrival order."""

    __slots__ = ()


@final
class MemoryChannel:
    """One end of a memory pair; implements :class:`trimcp.nursery.MessageChannel`."""

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[Message],
        receive_channel: trio.MemoryReceiveChannel[Message],
        out_room: _Room | None = None,
        in_room: _Room | None = None,
    ) -> None:
        self._send = send_channel
        self._receive = receive_channel
        #: Senders waiting for room in the buffer this end sends into / receives from:
        #: both ends of a :func:`memory_channel_pair` keep them. An end made over bare
        #: Trio channels (a test's peer reads them directly) waits in Trio's send.
        self._out_room = out_room
        self._in_room = in_room or _Room()
        #: See :meth:`_interrupt`; ``None`` on an end that waits in Trio's send.
        self.interrupt_send: Callable[[trio.lowlevel.Task, BaseException], bool] | None = (
            self._interrupt if out_room is not None else None
        )
        #: The revision the session negotiated (memory pairs need nothing from it).
        self.protocol_version: str | None = None

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        room = self._out_room
        if room is None:
            await self._send.send(message)
            return
        await trio.lowlevel.checkpoint_if_cancelled()
        if room.waiters:  # others wait for room already: after them
            await room.park(None)
        while True:
            try:
                self._send.send_nowait(message)
            except trio.WouldBlock:
                await room.park(None)
                continue
            break
        if room.waiters:
            # Room may be left for the next one (a receiver freed several places).
            room.wake_first()
        await trio.lowlevel.cancel_shielded_checkpoint()

    def send_nowait(self, message: Message) -> None:
        """Put ``message`` in the buffer now; :class:`trio.WouldBlock` when it is full
        or others wait for room before it (see :class:`~trimcp.nursery.MessageChannel`)."""
        room = self._out_room
        if room is None or room.waiters:
            raise trio.WouldBlock
        self._send.send_nowait(message)

    def _interrupt(self, task: trio.lowlevel.Task, error: BaseException) -> bool:
        """Withdraw the message ``task`` waits to put in the buffer, and make its send
        raise ``error``; ``False`` if it is not waiting for room."""
        room = self._out_room
        if room is None or task not in room.waiters:
            return False
        del room.waiters[task]
        trio.lowlevel.reschedule(task, outcome.Error(error))
        return True

    async def receive(self) -> Message:
        message = await self._receive.receive()
        if self._in_room.waiters:
            self._in_room.wake_first()
        return message

    def receive_nowait(self) -> Message:
        """The next message already queued; :class:`trio.WouldBlock` if none is."""
        message = self._receive.receive_nowait()
        if self._in_room.waiters:
            self._in_room.wake_first()
        return message

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()
        if self._out_room is not None:
            self._out_room.wake_all()  # they find the channel closed
        self._in_room.wake_all()  # they find nobody receiving

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version


def memory_channel_pair(
    *, max_buffer: int = DEFAULT_MEMORY_BUFFER
) -> tuple[MemoryChannel, MemoryChannel]:
    """Return two connected channels: what one sends, the other receives."""
    a_send, b_receive = trio.open_memory_channel[Message](max_buffer)
    b_send, a_receive = trio.open_memory_channel[Message](max_buffer)
    a_to_b, b_to_a = _Room(), _Room()
    return (
        MemoryChannel(a_send, a_receive, a_to_b, b_to_a),
        MemoryChannel(b_send, b_receive, b_to_a, a_to_b),
    )

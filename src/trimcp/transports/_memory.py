"""The in-memory transport: two channels joined by bounded Trio memory channels.

Messages cross as the (frozen) message objects themselves, with no encoding, so an
in-memory pair measures the engine rather than JSON. Each direction buffers at most
``max_buffer`` messages; a full buffer makes the sender wait (backpressure).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import final

import trio

from trimcp.wire import Message, RequestId

__all__ = ["DEFAULT_MEMORY_BUFFER", "MemoryChannel", "memory_channel_pair"]

#: Messages buffered per direction of a memory pair.
DEFAULT_MEMORY_BUFFER = 32


@final
class MemoryChannel:
    """One end of a memory pair; implements :class:`trimcp.nursery.MessageChannel`."""

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[Message],
        receive_channel: trio.MemoryReceiveChannel[Message],
    ) -> None:
        self._send = send_channel
        self._receive = receive_channel
        #: The revision the session negotiated (memory pairs need nothing from it).
        self.protocol_version: str | None = None

    def send(self, message: Message, *, related: RequestId | None = None) -> Awaitable[None]:
        # The channel's own send, handed back: a waiting sender keeps no frame here.
        return self._send.send(message)

    async def receive(self) -> Message:
        return await self._receive.receive()

    def receive_nowait(self) -> Message:
        """The next message already queued; :class:`trio.WouldBlock` if none is."""
        return self._receive.receive_nowait()

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version


def memory_channel_pair(
    *, max_buffer: int = DEFAULT_MEMORY_BUFFER
) -> tuple[MemoryChannel, MemoryChannel]:
    """Return two connected channels: what one sends, the other receives."""
    a_send, b_receive = trio.open_memory_channel[Message](max_buffer)
    b_send, a_receive = trio.open_memory_channel[Message](max_buffer)
    return MemoryChannel(a_send, a_receive), MemoryChannel(b_send, b_receive)

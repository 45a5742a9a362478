"""A send stream whose writes can be held "in the pipe" (test helper).

``send_all`` records what it was given and blocks while the gate is shut, so a test can
hold a write while other senders queue, get cancelled, or a deadline passes.
"""

from __future__ import annotations

import trio


class GatedSendStream(trio.abc.SendStream):
    """Records each ``send_all``; blocks in it while the gate is shut."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.open = trio.Event()
        self.open.set()
        self.writing = 0

    def shut(self) -> None:
        self.open = trio.Event()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.writing += 1
        try:
            await self.open.wait()
            self.writes.append(bytes(data))
        finally:
            self.writing -= 1

    async def wait_send_all_might_not_block(self) -> None:
        await self.open.wait()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()

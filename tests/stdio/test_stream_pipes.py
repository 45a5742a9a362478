"""``StreamChannel`` over real pipes: a write that finds the reader gone ends the input."""

from __future__ import annotations

import os

import pytest
import trio

from trimcp.transports import StreamChannel
from trimcp.wire import Notification


async def test_broken_output_ends_a_blocked_receive() -> None:
    out_read, out_write = os.pipe()
    in_read, in_write = os.pipe()
    channel = StreamChannel(trio.lowlevel.FdStream(out_write), trio.lowlevel.FdStream(in_read))
    ended = trio.Event()
    try:
        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:

                async def reader() -> None:
                    with pytest.raises((trio.ClosedResourceError, trio.BrokenResourceError)):
                        await channel.receive()
                    ended.set()

                nursery.start_soon(reader)
                await trio.testing.wait_all_tasks_blocked()
                os.close(out_read)  # the peer stops reading our output
                with pytest.raises(trio.BrokenResourceError):
                    await channel.send(Notification(method="notifications/message", params={}))
                await ended.wait()
            with pytest.raises(trio.BrokenResourceError):
                await channel.receive()
    finally:
        os.close(in_write)
        await channel.aclose()

"""The channel hands over answers already delivered without a checkpoint, so the
session takes the answers that arrived together in one scheduler step."""

from __future__ import annotations

import pytest
import trio

from trimcp.transports.http import HttpClientChannel
from trimcp.wire import Notification, Response

from ._fake import unconnected_channel


def _channel() -> HttpClientChannel:
    return unconnected_channel("http://127.0.0.1:8000/mcp")


async def test_what_was_delivered_is_taken_in_order_without_a_checkpoint() -> None:
    channel = _channel()
    with pytest.raises(trio.WouldBlock):
        channel.receive_nowait()
    burst = [Response(id=n, result={"n": n}) for n in range(3)]
    await channel.deliver([*burst, Notification(method="notifications/message")])
    with trio.testing.assert_no_checkpoints():
        taken = [channel.receive_nowait() for _ in range(4)]
    assert taken[:3] == burst
    assert isinstance(taken[3], Notification)
    with pytest.raises(trio.WouldBlock):
        channel.receive_nowait()


async def test_at_its_end_receive_says_how_it_ended() -> None:
    channel = _channel()
    await channel.deliver(Response(id=1, result={}))
    channel.break_channel("the server went away")
    assert channel.receive_nowait() == Response(id=1, result={})
    with pytest.raises(trio.WouldBlock):  # the end is receive()'s to report
        channel.receive_nowait()
    with pytest.raises(trio.BrokenResourceError, match="went away"):
        await channel.receive()

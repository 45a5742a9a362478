"""Text frames written by trimcp (``_framing``) are byte for byte those wsproto writes,
and read back as the message sent; a connection no longer open refuses them."""

from __future__ import annotations

from unittest import mock

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from wsproto import ConnectionType
from wsproto.connection import Connection
from wsproto.events import TextMessage

from trimcp.transports.websocket import WebSocketChannel, WebSocketLimits
from trimcp.transports.websocket._framing import KEYS_PER_DRAW, MaskingKeys, text_frame
from trimcp.wire import Notification

from ._raw import in_memory

#: Lengths around the 7-bit, 16-bit and 64-bit length encodings.
_TEXTS = st.one_of(
    st.text(max_size=300),
    st.integers(min_value=65530, max_value=65540).map(lambda n: "é" * (n // 2) + "x" * (n % 2)),
)


@given(text=_TEXTS, key=st.binary(min_size=4, max_size=4), client=st.booleans())
def test_text_frames_are_the_bytes_wsproto_writes(text: str, key: bytes, client: bool) -> None:
    side = ConnectionType.CLIENT if client else ConnectionType.SERVER
    with mock.patch("wsproto.frame_protocol.os.urandom", return_value=key):
        expected = Connection(side).send(TextMessage(data=text))
    assert text_frame(text.encode("utf-8"), key if client else None) == expected


@given(text=_TEXTS)
def test_a_masked_frame_reads_back_as_the_text_sent(text: str) -> None:
    server = Connection(ConnectionType.SERVER)
    server.receive_data(text_frame(text.encode("utf-8"), MaskingKeys().next()))
    events = list(server.events())
    assert len(events) == 1
    assert isinstance(events[0], TextMessage)
    assert events[0].data == text
    assert events[0].message_finished


def test_masking_keys_are_four_random_bytes_drawn_in_blocks() -> None:
    draws: list[int] = []

    def urandom(n: int) -> bytes:
        draws.append(n)
        return bytes((len(draws) + i) % 256 for i in range(n))

    keys = MaskingKeys()
    with mock.patch("trimcp.transports.websocket._framing.os.urandom", urandom):
        taken = [keys.next() for _ in range(KEYS_PER_DRAW + 1)]
    assert draws == [4 * KEYS_PER_DRAW, 4 * KEYS_PER_DRAW]
    assert all(len(key) == 4 for key in taken)
    assert len(set(taken[:KEYS_PER_DRAW])) == KEYS_PER_DRAW  # each key used once


async def test_the_channel_sends_encoded_messages_as_masked_text_frames() -> None:
    messages, server, stream = in_memory(WebSocketLimits())
    channel = WebSocketChannel(messages)
    await channel.send(Notification(method="notifications/progress", params={"note": "é"}))
    server.receive_data(await stream.receive_some(65536))
    (event,) = server.events()
    assert isinstance(event, TextMessage)
    assert event.data == '{"jsonrpc":"2.0","method":"notifications/progress","params":{"note":"é"}}'


async def test_text_is_refused_once_the_closing_handshake_began() -> None:
    messages, _, _ = in_memory(WebSocketLimits())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(messages.close)  # sends its close frame, waits for the peer's
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.ClosedResourceError):
            await messages.send_utf8(b"{}")
        with pytest.raises(trio.ClosedResourceError):
            await messages.send_text("{}")
        nursery.cancel_scope.cancel()

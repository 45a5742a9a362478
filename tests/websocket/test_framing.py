"""Text frames written by trimcp (``_framing``) are byte for byte those wsproto writes,
and read back as the message sent; a connection no longer open refuses them."""

from __future__ import annotations

import itertools
from unittest import mock

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from wsproto import ConnectionType
from wsproto.connection import Connection
from wsproto.events import CloseConnection, Ping, Pong, TextMessage

from trimcp.transports.websocket import WebSocketChannel, WebSocketLimits
from trimcp.transports.websocket._framing import (
    KEYS_PER_DRAW,
    FrameReader,
    MaskingKeys,
    at_frame_boundary,
    text_frame,
)
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


async def test_text_is_refused_once_the_peer_began_the_closing_handshake() -> None:
    """The peer's close frame, read ahead but not yet taken, already closes the
    sending side (wsproto's state is no longer open)."""
    messages, server, stream = in_memory(WebSocketLimits())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(messages.read_ahead)
        await messages.send_utf8(b"{}")  # open: this one goes
        await stream.send_all(server.send(CloseConnection(code=1000)))
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.ClosedResourceError, match="remote_closing"):
            await messages.send_utf8(b"{}")
        nursery.cancel_scope.cancel()


def _frames_of(side: ConnectionType, events: list[object]) -> bytes:
    """What a wsproto peer on ``side`` writes for ``events`` (text, pings, pongs ...)."""
    peer = Connection(side)
    return b"".join(peer.send(event) for event in events)  # type: ignore[arg-type]


def _read(reader: FrameReader, side: ConnectionType, data: bytes, cuts: list[int]) -> list[object]:
    """Everything ``data`` (cut into reads at ``cuts``) yields: text messages the reader
    took, wsproto's events for the rest (its text as each message's whole text)."""
    ws = Connection(side)
    out: list[object] = []
    part = ""
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(data)), len(data)]
    for lo, hi in itertools.pairwise(bounds):
        for item in reader.feed(data[lo:hi]):
            if isinstance(item, str):
                out.append(item)
                continue
            ws.receive_data(item)
            for event in ws.events():
                if not isinstance(event, TextMessage):
                    out.append(event)
                elif event.message_finished:
                    out.append(part + event.data)
                    part = ""
                else:
                    part += event.data
    return out


_EVENTS = st.lists(
    st.one_of(
        st.text(max_size=200).map(lambda text: TextMessage(data=text)),
        st.binary(max_size=125).map(lambda payload: Ping(payload=payload)),
        st.binary(max_size=125).map(lambda payload: Pong(payload=payload)),
    ),
    max_size=8,
)


@given(
    events=_EVENTS, cuts=st.lists(st.integers(0, 3000), max_size=6), peer_is_client=st.booleans()
)
def test_the_reader_yields_what_wsproto_would_however_the_bytes_are_cut(
    events: list[TextMessage | Ping | Pong], cuts: list[int], peer_is_client: bool
) -> None:
    peer, ours = (
        (ConnectionType.CLIENT, ConnectionType.SERVER)
        if peer_is_client
        else (ConnectionType.SERVER, ConnectionType.CLIENT)
    )
    data = _frames_of(peer, list(events))
    reader = FrameReader(masked=peer_is_client, max_payload=4096)
    got = _read(reader, ours, data, cuts)
    expected = [e.data if isinstance(e, TextMessage) else e for e in events]
    assert got == expected
    assert reader.active  # text, pings and pongs never hand the connection over


@given(
    before=st.lists(st.text(max_size=50), max_size=3),
    after=st.lists(st.text(max_size=50), max_size=3),
    cuts=st.lists(st.integers(0, 600), max_size=4),
)
def test_a_fragmented_message_hands_the_rest_of_the_connection_to_wsproto(
    before: list[str], after: list[str], cuts: list[int]
) -> None:
    events = [
        *(TextMessage(data=text) for text in before),
        TextMessage(data='{"a":', message_finished=False),
        Ping(payload=b"p"),  # a control frame inside a fragmented message
        TextMessage(data="1}", message_finished=True),
        *(TextMessage(data=text) for text in after),
    ]
    data = _frames_of(ConnectionType.CLIENT, events)
    reader = FrameReader(masked=True, max_payload=4096)
    got = _read(reader, ConnectionType.SERVER, data, cuts)
    assert not reader.active
    joined = [e for e in got if not isinstance(e, Ping)]
    assert joined == [*before, '{"a":1}', *after]


@pytest.mark.parametrize(
    ("frame", "why"),
    [
        (b"\x81\x02\xc3\x28", "text that is not UTF-8"),
        (b"\x82\x01x", "a binary message"),
        (b"\xc1\x01x", "a reserved bit"),
        (b"\x81\x81abcdx", "a masked frame from a server"),
        (b"\x81\x7e\x10\x00" + b"x" * 4096, "a frame over max_payload"),
        (b"\x88\x02\x03\xe8", "a close frame"),
    ],
)
def test_any_other_frame_goes_whole_to_wsproto_with_what_follows(frame: bytes, why: str) -> None:
    reader = FrameReader(masked=False, max_payload=100)
    ok = text_frame(b'{"ok":1}', None)
    assert reader.feed(ok + frame + ok) == ['{"ok":1}', frame + ok], why
    assert not reader.active
    assert reader.feed(ok) == [ok]


def test_a_connection_whose_wsproto_holds_part_of_a_frame_starts_with_wsproto() -> None:
    messages, server, stream = in_memory(WebSocketLimits())
    assert messages._reader.active
    client = Connection(ConnectionType.CLIENT)
    assert at_frame_boundary(client)
    client.receive_data(b"\x81\x05ab")  # part of a server's text frame
    assert not at_frame_boundary(client)
    assert not at_frame_boundary(object())  # a layout it does not know: wsproto reads
    del server, stream


async def test_messages_the_reader_took_are_received_in_order_with_pings_answered() -> None:
    messages, server, stream = in_memory(WebSocketLimits())
    data = server.send(TextMessage(data="one")) + server.send(Ping(payload=b"p"))
    await stream.send_all(data + server.send(TextMessage(data="two")))
    assert await messages.receive() == "one"
    assert messages.receive_text_nowait() == "two"
    server.receive_data(await stream.receive_some(65536))
    assert [type(e).__name__ for e in server.events()] == ["Pong"]

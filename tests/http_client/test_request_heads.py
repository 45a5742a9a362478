"""Request heads checked once and reused: the bytes are the request h11 would write,
a server parses them as that request, and the connection's h11 state follows."""

from __future__ import annotations

import h11
import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http._client_conn import HttpConnection, Origin
from trimcp.transports.http._client_heads import RequestHeads

_TOKEN = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-!#$%&'*+.^_`|~")
_VALUE = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40
).map(lambda v: v.strip())
_HEADERS = st.lists(
    st.tuples(
        _TOKEN.filter(lambda n: n and n.lower() not in ("host", "content-length")),
        _VALUE.filter(bool),
    ),
    max_size=6,
)
_ORIGIN = Origin("http", "127.0.0.1", 8000, "/mcp?x=1", "127.0.0.1:8000")


def _h11_bytes(method: str, headers: list[tuple[str, str]], body: bytes | None) -> bytes:
    """What h11 writes for the request, built and checked per request."""
    conn = h11.Connection(h11.CLIENT)
    all_headers = [("Host", _ORIGIN.authority), *headers]
    if body is not None:
        all_headers.append(("Content-Length", str(len(body))))
    data = conn.send(h11.Request(method=method, target=_ORIGIN.target, headers=all_headers))
    assert data is not None
    if body:
        data += conn.send(h11.Data(data=body)) or b""
    return data + (conn.send(h11.EndOfMessage()) or b"")


async def _sent(
    method: str, headers: list[tuple[str, str]], body: bytes | None, heads: RequestHeads
) -> tuple[bytes, HttpConnection]:
    ours, theirs = trio.testing.memory_stream_pair()
    conn = HttpConnection(ours, max_header_size=16384, heads=heads)
    await conn.send_request(method, _ORIGIN, headers, body)
    return bytes(await theirs.receive_some(1 << 20)), conn


@given(
    method=st.sampled_from(["POST", "GET", "DELETE", "HEAD"]),
    headers=_HEADERS,
    body=st.one_of(st.none(), st.binary(max_size=300)),
    repeats=st.integers(1, 3),
)
def test_a_reused_head_is_the_request_h11_would_write(
    method: str, headers: list[tuple[str, str]], body: bytes | None, repeats: int
) -> None:
    heads = RequestHeads()

    async def main() -> None:
        for _ in range(repeats):  # the first builds the head, the others reuse it
            data, conn = await _sent(method, headers, body, heads)
            assert data == _h11_bytes(method, headers, body)
            assert conn.h11.our_state is h11.DONE
            assert conn.h11.their_state is h11.SEND_RESPONSE
        assert len(heads) == 1

    trio.run(main)


async def test_a_server_parses_the_request_and_the_client_its_answer() -> None:
    heads = RequestHeads()
    headers = [("Content-Type", "application/json"), ("Mcp-Session-Id", "abc")]
    for body in (b'{"jsonrpc":"2.0"}', b'{"id":2}'):
        ours, theirs = trio.testing.memory_stream_pair()
        client = HttpConnection(ours, max_header_size=16384, heads=heads)
        await client.send_request("POST", _ORIGIN, headers, body)
        server = h11.Connection(h11.SERVER)
        server.receive_data(bytes(await theirs.receive_some(1 << 20)))
        request = server.next_event()
        assert isinstance(request, h11.Request)
        assert (request.method, request.target) == (b"POST", b"/mcp?x=1")
        assert (b"mcp-session-id", b"abc") in list(request.headers)
        assert (b"content-length", str(len(body)).encode()) in list(request.headers)
        data = server.next_event()
        assert isinstance(data, h11.Data)
        assert bytes(data.data) == body
        assert isinstance(server.next_event(), h11.EndOfMessage)
        answer = h11.Response(status_code=200, headers=[("Content-Length", "2")])
        await theirs.send_all(
            server.send(answer)
            + server.send(h11.Data(data=b"{}"))
            + server.send(h11.EndOfMessage())
        )
        response = await client.receive_response()
        assert response.status_code == 200
        assert await client.read_body(100) == b"{}"
        assert client.reusable  # h11 saw the whole exchange: the connection is kept


@pytest.mark.parametrize(
    "headers",
    [[("X-Bad", "line\r\nInjected: yes")], [("Bad Name", "v")], [("Host", "other")]],
)
async def test_a_head_h11_would_refuse_is_refused(headers: list[tuple[str, str]]) -> None:
    ours, _theirs = trio.testing.memory_stream_pair()
    conn = HttpConnection(ours, max_header_size=16384)
    with pytest.raises(ValueError, match="cannot send this HTTP request"):
        await conn.send_request("POST", _ORIGIN, headers, b"{}")
    assert len(conn.heads) == 0


def test_the_table_of_heads_is_bounded() -> None:
    heads = RequestHeads(limit=4)
    for n in range(10):
        heads.get("POST", "/", "h", [("Dpop", f"proof-{n}")], True)
        assert len(heads) <= 4

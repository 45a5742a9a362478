"""A POST's transport headers without hooks: the same as ever, shared per session."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http import _client_modern
from trimcp.transports.http._client_modern import (
    SESSION_HEADERS_KEPT,
    VERSION_META,
    post_headers,
    transport_headers,
)
from trimcp.transports.http._client_params import ToolHeaderTable
from trimcp.wire import Message, Notification, Request

BASE = (("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"))
texts = st.text(alphabet="abcdef0123456789-", min_size=1, max_size=12)


def messages() -> st.SearchStrategy[Message]:
    handshake = st.builds(
        lambda n: Request(id=n, method="tools/call", params={"name": "t"}), st.integers(0, 9)
    )
    modern = st.builds(
        lambda n, v: Request(
            id=n, method="tools/call", params={"name": "t", "_meta": {VERSION_META: v}}
        ),
        st.integers(0, 9),
        texts,
    )
    note = st.just(Notification(method="notifications/initialized"))
    return st.one_of(handshake, modern, note)


@given(messages(), st.none() | texts, st.none() | texts)
def test_the_headers_are_transport_headers(
    message: Message, session: str | None, version: str | None
) -> None:
    table = ToolHeaderTable()
    expected = transport_headers(message, BASE, session, version, table)
    assert list(post_headers(message, BASE, session, version, table)) == expected
    assert len(_client_modern._session_headers) <= SESSION_HEADERS_KEPT


def test_calls_of_one_session_share_one_tuple_and_the_table_is_bounded() -> None:
    table = ToolHeaderTable()
    first = post_headers(Request(id=1, method="ping"), BASE, "s", "2025-11-25", table)
    second = post_headers(Request(id=2, method="ping"), BASE, "s", "2025-11-25", table)
    assert first is second
    assert isinstance(first, tuple)  # read-only: nobody can change what others hold
    for n in range(SESSION_HEADERS_KEPT * 2):
        post_headers(Request(id=n, method="ping"), BASE, f"s{n}", "2025-11-25", table)
        assert len(_client_modern._session_headers) <= SESSION_HEADERS_KEPT

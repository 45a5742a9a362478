"""One bounded HTTP exchange on trimcp's h11 client: for the small documents that
authorization fetches (key sets, token introspection, metadata).

:func:`fetch` opens a connection, sends one request, reads the whole response and closes,
all within ``timeout`` seconds, and refuses a body over ``max_bytes``. Redirects are not
followed (a key set or an introspection answer that moved is a configuration error to
see, not to chase). Every failure is an :class:`HttpTransportError` (or
:class:`ResponseTooLarge`) whose message names the URL's origin and never a request
header or body, since those carry credentials.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from typing import Final, final

import attrs
import h11
import trio

from ._client_conn import (
    HttpConnection,
    HttpTransportError,
    open_tcp,
    parse_url,
)

__all__ = ["DEFAULT_FETCH_BYTES", "DEFAULT_FETCH_TIMEOUT", "FetchResponse", "fetch"]

DEFAULT_FETCH_TIMEOUT: Final = 5.0
"""Seconds one exchange may take, connection included."""
DEFAULT_FETCH_BYTES: Final = 64 * 1024
"""Bytes of response body read at most."""
_MAX_HEAD: Final = 16 * 1024


@final
@attrs.frozen
class FetchResponse:
    """A whole response: status, headers (names lower-case), body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (lower-case), or ``None``."""
        for key, value in self.headers:
            if key == name:
                return value
        return None


async def fetch(
    method: str,
    url: str,
    *,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes | None = None,
    timeout: float = DEFAULT_FETCH_TIMEOUT,
    max_bytes: int = DEFAULT_FETCH_BYTES,
    ssl_context: ssl.SSLContext | None = None,
) -> FetchResponse:
    """Send one request to ``url`` and return the whole response (see the module doc)."""
    origin = parse_url(url)
    with trio.move_on_after(timeout) as deadline:
        try:
            stream: trio.abc.Stream = await open_tcp(origin.host, origin.port)
        except OSError as exc:
            raise HttpTransportError(f"cannot connect to {origin.authority}") from exc
        try:
            if origin.tls:
                context = ssl_context or ssl.create_default_context()
                tls = trio.SSLStream(
                    stream, context, server_hostname=origin.host, https_compatible=True
                )
                stream = tls
                try:
                    await tls.do_handshake()
                except (trio.BrokenResourceError, OSError) as exc:
                    raise HttpTransportError(
                        f"TLS handshake with {origin.authority} failed"
                    ) from exc
            conn = HttpConnection(stream, max_header_size=_MAX_HEAD)
            all_headers = [*headers, ("Connection", "close")]
            await conn.send_request(method, origin, all_headers, body)
            response = await conn.receive_response()
            data = await conn.read_body(max_bytes)
        finally:
            await trio.aclose_forcefully(stream)
    if deadline.cancelled_caught:
        raise HttpTransportError(f"{origin.authority} did not answer within {timeout:g} s")
    return FetchResponse(response.status_code, _headers(response), data)


def _headers(response: h11.Response) -> tuple[tuple[str, str], ...]:
    return tuple(
        (name.decode("latin-1").lower(), value.decode("latin-1"))
        for name, value in response.headers
    )

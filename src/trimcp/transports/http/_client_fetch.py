"""One-shot HTTP requests on the client's own h11 connections (for metadata and tokens).

An authorization layer talks to more servers than the MCP endpoint: protected resource
metadata, authorization servers, identity providers. :class:`HttpFetcher` makes single
requests to any of them over the same :class:`ConnectionPool` the transport uses, one
small pool per origin, at most ``max_origins`` pools at once (the least recently used
is closed past that). Redirects are never followed: the caller gets the ``3xx`` and
decides. Bodies are read up to ``max_body`` bytes; past that the request fails.

:func:`fetch` is the one-request form: a fetcher of its own, closed again at once, for
callers that fetch rarely (a key set every few minutes, an introspection answer).

Every failure (refused, reset, TLS, timeout, malformed, oversized) is raised as
:class:`FetchError`, whose message names the origin but never the request's headers or
body, which may carry secrets.
"""

from __future__ import annotations

import ssl
from collections import OrderedDict
from collections.abc import Sequence
from typing import final

import attrs
import trio

from ._client_conn import ConnectionPool, HttpTransportError, ResponseTooLarge, parse_url

__all__ = ["FetchError", "FetchedResponse", "HttpFetcher", "fetch"]


class FetchError(Exception):
    """A one-shot request could not be completed (see the module doc)."""


@final
@attrs.frozen
class FetchedResponse:
    """A whole HTTP answer: status, headers (names lower-cased) and body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None


@final
class HttpFetcher:
    """Single HTTP requests with per-origin keep-alive pools (see the module doc)."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_origins: int = 8,
        max_body: int = 256 * 1024,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
    ) -> None:
        self._ssl = ssl_context
        self._max_origins = max_origins
        self.max_body = max_body
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._pools: OrderedDict[tuple[str, str, int], ConnectionPool] = OrderedDict()
        self._closed = False
        #: Requests made so far (for tests and diagnostics).
        self.requests = 0

    async def _pool(self, url: str) -> ConnectionPool:
        origin = parse_url(url)
        key = (origin.scheme, origin.host.lower(), origin.port)
        pool = self._pools.get(key)
        if pool is not None:
            self._pools.move_to_end(key)
            return pool
        while len(self._pools) >= self._max_origins:
            _, oldest = self._pools.popitem(last=False)
            await oldest.aclose()
        pool = ConnectionPool(
            origin,
            ssl_context=self._ssl,
            max_connections=4,
            max_idle=2,
            idle_timeout=4.0,
            max_connecting=4,
            connect_timeout=self._connect_timeout,
            max_header_size=16 * 1024,
        )
        self._pools[key] = pool
        return pool

    async def request(
        self,
        method: str,
        url: str,
        headers: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
    ) -> FetchedResponse:
        """Send one request to ``url`` and read its whole answer (see the module doc)."""
        if self._closed:
            raise FetchError("the HTTP fetcher is closed")
        try:
            pool = await self._pool(url)
        except ValueError as exc:
            raise FetchError(str(exc)) from None
        origin = parse_url(url)
        self.requests += 1
        all_headers = [("User-Agent", "trimcp"), *headers]
        with trio.move_on_after(self._timeout) as scope:
            for attempt in (0, 1):
                try:
                    async with pool.checkout(fresh=attempt > 0) as conn:
                        await conn.send_request(method, origin, all_headers, body)
                        response = await conn.receive_response()
                        data = b"" if method == "HEAD" else await conn.read_body(self.max_body)
                        return FetchedResponse(
                            response.status_code,
                            tuple(
                                (k.decode("latin-1").lower(), v.decode("latin-1"))
                                for k, v in response.headers
                            ),
                            data,
                        )
                except HttpTransportError as exc:
                    if exc.stale and attempt == 0:
                        continue
                    raise FetchError(f"{origin.authority}: {exc}") from None
                except ResponseTooLarge:
                    raise FetchError(
                        f"{origin.authority}: the answer is larger than {self.max_body} bytes"
                    ) from None
                except ValueError as exc:
                    raise FetchError(f"{origin.authority}: {exc}") from None
        assert scope.cancelled_caught
        raise FetchError(f"{origin.authority} did not answer within {self._timeout:g} s")

    async def aclose(self) -> None:
        """Close every pool (idempotent)."""
        self._closed = True
        pools, self._pools = list(self._pools.values()), OrderedDict()
        for pool in pools:
            await pool.aclose()


async def fetch(
    method: str,
    url: str,
    *,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes | None = None,
    timeout: float = 5.0,
    max_bytes: int = 64 * 1024,
    ssl_context: ssl.SSLContext | None = None,
) -> FetchedResponse:
    """Send one request to ``url`` on a connection of its own and return the whole
    answer: at most ``timeout`` seconds, connecting included, and ``max_bytes`` of body.
    Raises :class:`FetchError` as :meth:`HttpFetcher.request` does."""
    fetcher = HttpFetcher(
        ssl_context=ssl_context,
        max_origins=1,
        max_body=max_bytes,
        timeout=timeout,
        connect_timeout=timeout,
    )
    try:
        return await fetcher.request(method, url, headers, body)
    finally:
        with trio.CancelScope(shield=True):
            await fetcher.aclose()

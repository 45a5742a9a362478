"""A user step for desktop applications: catch the browser's redirect on loopback.

``LoopbackRedirect(open_url)`` is a :data:`~._authcode.RedirectHandler`. For each
authorization it listens on ``127.0.0.1:port`` (RFC 8252 §7.3), hands the authorization
URL to ``open_url`` (the application decides how: ``webbrowser.open``, a dialog, printing
it; trimcp itself never starts a program), and returns the URL of the first ``GET`` to
``path`` that arrives, answering the browser with a short page. Other requests get 404.
Each connection has 10 s to send its request head (16 KiB at most); the listener closes
as soon as the redirect arrived, or when the authorization is given up (its time is
``OAuth(authorization_timeout=...)``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Final, final

import h11
import trio

__all__ = ["LoopbackRedirect"]

_PAGE: Final = b"<!doctype html><title>Authorized</title><p>You may close this window.</p>"
_HEAD_LIMIT: Final = 16 * 1024
_CONNECTION_TIMEOUT: Final = 10.0


@final
class LoopbackRedirect:
    """A redirect handler listening on loopback (see the module doc)."""

    def __init__(
        self,
        open_url: Callable[[str], Awaitable[object] | object],
        *,
        port: int = 33418,
        path: str = "/callback",
    ) -> None:
        if not path.startswith("/"):
            raise ValueError("path must start with '/'")
        self.open_url = open_url
        self.port = port
        self.path = path

    @property
    def redirect_uri(self) -> str:
        """The ``redirect_uri`` to register and send (``http://127.0.0.1:PORT/PATH``)."""
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def __call__(self, authorization_url: str) -> str:
        landed: list[str] = []
        arrived = trio.Event()
        listeners = await trio.open_tcp_listeners(self.port, host="127.0.0.1")
        async with trio.open_nursery() as nursery:
            await nursery.start(
                partial(trio.serve_listeners, partial(self._serve, landed, arrived), listeners)
            )
            shown = self.open_url(authorization_url)
            if inspect.isawaitable(shown):
                await shown
            await arrived.wait()
            nursery.cancel_scope.cancel()
        return landed[0]

    async def _serve(
        self, landed: list[str], arrived: trio.Event, stream: trio.SocketStream
    ) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_HEAD_LIMIT)
        with trio.move_on_after(_CONNECTION_TIMEOUT):
            try:
                request = await _read_head(stream, conn)
                if request is None:
                    return
                target = request.target.decode("ascii", "replace")
                ours = request.method == b"GET" and target.split("?", 1)[0] == self.path
                if ours and not arrived.is_set():
                    landed.append(self.redirect_uri + target[len(self.path) :])
                status, body = (200, _PAGE) if ours else (404, b"")
                headers = [("Content-Type", "text/html"), ("Content-Length", str(len(body)))]
                data = conn.send(h11.Response(status_code=status, headers=headers))
                data = (data or b"") + (conn.send(h11.Data(data=body)) or b"")
                await stream.send_all(data + (conn.send(h11.EndOfMessage()) or b""))
                if ours:
                    arrived.set()
            except (h11.ProtocolError, trio.BrokenResourceError, OSError):
                pass
        await trio.aclose_forcefully(stream)


async def _read_head(stream: trio.SocketStream, conn: h11.Connection) -> h11.Request | None:
    while True:
        event = conn.next_event()
        if isinstance(event, h11.Request):
            return event
        if event is h11.NEED_DATA:
            data = await stream.receive_some(4096)
            conn.receive_data(data)  # b"" at EOF
            if not data:
                return None
        elif isinstance(event, h11.ConnectionClosed):
            return None

"""Finding a POST's, GET's or DELETE's session, and serving GET and DELETE.

A mixin of :class:`~._asgi.StreamableHttpApp`: ``Mcp-Session-Id`` names the session
(one value, well formed, known, and created by the same caller when there is
authorization: else 400 or 404), ``MCP-Protocol-Version`` must be
supported and agree with the session's; ``GET`` opens the session's standalone SSE
stream or resumes one (``Last-Event-ID``), ``DELETE`` ends the session.
"""

from __future__ import annotations

from trimcp.nursery import Caller

from ._asgi_io import Receive, Send, pump, send_empty
from ._asgi_post import SESSION_NOT_FOUND, session_headers
from ._auth import owner_matches
from ._guards import SERVER_ERROR, Headers, HttpError, accepts, check_session_id
from ._replicas import Replicas
from ._server_limits import HttpServerLimits
from ._sessions import HttpSessionChannel
from ._sessions_manager import SessionManager

__all__ = ["SessionRoutes"]


class SessionRoutes:
    """Session lookup and the ``GET`` / ``DELETE`` handlers of the app."""

    stateless: bool
    manager: SessionManager
    supported_versions: tuple[str, ...]
    limits: HttpServerLimits
    replicas: Replicas | None

    async def _lookup(
        self, headers: Headers, caller: Caller | None = None
    ) -> HttpSessionChannel | None:
        """The session the headers name, seen by ``caller``: a session another caller
        created is unknown to it (404), exactly like one that never existed. In a
        shared store, a session held elsewhere is restored here (:mod:`._replicas`)."""
        values = headers.get_all("mcp-session-id")
        if not values or self.stateless:
            return None
        if len(values) > 1:
            raise HttpError(400, "Bad Request: more than one Mcp-Session-Id")
        check_session_id(values[0])
        channel = self.manager.get(values[0])
        if channel is None and self.replicas is not None:
            channel = await self.replicas.restore(values[0])
        if channel is None or not owner_matches(channel.owner, caller):
            raise HttpError(404, "Not Found: unknown or terminated session", code=SESSION_NOT_FOUND)
        return channel

    async def _require(self, headers: Headers, caller: Caller | None) -> HttpSessionChannel:
        channel = await self._lookup(headers, caller)
        if channel is None:
            raise HttpError(400, "Bad Request: Mcp-Session-Id header is required")
        return channel

    def _check_version(self, headers: Headers, channel: HttpSessionChannel | None) -> None:
        """``MCP-Protocol-Version``: absent means 2025-03-26; else supported and agreed."""
        self._check_version_value(headers.get("mcp-protocol-version"), channel)

    def _check_version_value(self, value: str | None, channel: HttpSessionChannel | None) -> None:
        """:meth:`_check_version` of the header's ``value`` (read already)."""
        if value is None:
            return
        if value not in self.supported_versions:
            raise HttpError(400, "Bad Request: unsupported MCP-Protocol-Version")
        negotiated = channel.protocol_version if channel is not None else None
        if negotiated is not None and value != negotiated:
            raise HttpError(400, "Bad Request: MCP-Protocol-Version does not match the session")

    async def _get(
        self, receive: Receive, send: Send, headers: Headers, caller: Caller | None
    ) -> None:
        if not accepts(headers, "text/event-stream"):
            raise HttpError(406, "Not Acceptable: Accept must include text/event-stream")
        channel = await self._require(headers, caller)
        self._check_version(headers, channel)
        last_event_id = headers.get("last-event-id")
        if last_event_id is not None:
            if len(last_event_id) > 256 or not last_event_id.isprintable():
                raise HttpError(400, "Bad Request: malformed Last-Event-ID")
            outbox = await channel.resume(last_event_id)
            if outbox is None:
                raise HttpError(400, "Bad Request: unknown Last-Event-ID")
        else:
            outbox = channel.open_standalone()
            if outbox is None:
                raise HttpError(
                    409,
                    "Conflict: this session already has a standalone SSE stream",
                    code=SERVER_ERROR,
                )
            await channel.prime_standalone(outbox)
        channel.busy += 1
        try:
            await pump(
                outbox,
                receive,
                send,
                session_headers(channel),
                timeout=self.limits.send_timeout,
                eager=channel.eager,
            )
        finally:
            channel.detach(outbox)
            channel.busy -= 1
            channel.touch()

    async def _delete(self, send: Send, headers: Headers, caller: Caller | None) -> None:
        channel = await self._require(headers, caller)
        self._check_version(headers, channel)
        if self.replicas is not None:
            await self.replicas.end(channel)
        self.manager.terminate(channel)
        await send_empty(send, 200)

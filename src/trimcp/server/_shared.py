"""The MCP server's side of a shared store (``Server(store=RedisStore(...))``).

The HTTP transport shares sessions, events and relays (``trimcp.transports.http``,
``_shared``); this module shares what only the MCP server knows of a session:

* its **state** (negotiated revision, client info and capabilities, ``ready``, log
  level, resource subscriptions) is saved in the session record as it changes
  (:meth:`SharedServer.remember`: before the request that changed it is answered), and
  a replica restored on another process starts from it (:meth:`SharedServer.restore`);
  a change made elsewhere reaches the replicas here (log level, ``ready``);
* **notices to sessions** (``list_changed``, ``resources/updated``) are written to the
  standalone stream of each session concerned, whichever process holds its GET, once
  per session rather than once per replica;
* **subscriptions/listen** notices (and task status notices) published on one process
  reach the listeners of every process.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Final, final

from trimcp.binding import structure, unstructure
from trimcp.dispatch import McpError
from trimcp.nursery import MessageChannel, Phase, Session, SessionState
from trimcp.protocol import ClientCapabilities, Implementation
from trimcp.store import SharedStore
from trimcp.transports.http import Envelope, HttpSessionChannel, StoreUnavailable
from trimcp.wire import INTERNAL_ERROR, Notification, encode

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["SharedServer", "shared_channel"]

logger = logging.getLogger("trimcp.server")

#: The envelope kind of a ``subscriptions/listen`` notice published on another process.
PUBLISHED: Final = "pub"
_UPDATED: Final = "notifications/resources/updated"


def shared_channel(channel: MessageChannel) -> HttpSessionChannel | None:
    """``channel`` when it is a session of a shared store, else ``None``."""
    if isinstance(channel, HttpSessionChannel) and channel.shared is not None:
        return channel
    return None


def store_error() -> McpError:
    return McpError(INTERNAL_ERROR, "Internal error: the session store cannot be reached")


@final
class SharedServer:
    """One server's use of a shared store (module doc)."""

    def __init__(self, server: Server, store: SharedStore) -> None:
        self.server = server
        self.store = store
        store.on_envelope(self._envelope)

    # ------------------------------------------------------------------ session state
    def restore(self, state: SessionState, channel: HttpSessionChannel) -> None:
        """Fill ``state`` from the record of a replica, and follow changes made
        elsewhere."""
        assert channel.shared is not None
        channel.shared.on_update = lambda fields: self._apply(state, fields)
        record = channel.shared.restored
        if record is None or record.protocol_version is None:
            return
        server = self.server
        version = record.protocol_version
        state.protocol_version = version
        state.server_info = server.info
        state.server_capabilities = server.capabilities(version)
        state.instructions = server.instructions
        state.phase = Phase.INITIALIZED
        fields = record.fields
        try:
            if "clientInfo" in fields:
                state.client_info = structure(json.loads(fields["clientInfo"]), Implementation)
            if "capabilities" in fields:
                caps = json.loads(fields["capabilities"])
                state.client_capabilities = structure(caps, ClientCapabilities)
        except Exception:  # written by a process of this server: only a bug gets here
            logger.exception("session %s: unreadable record", record.session_id)
        self._apply(state, dict(fields))

    @staticmethod
    def _apply(state: SessionState, fields: dict[str, str]) -> None:
        if fields.get("ready") == "1" and state.phase is Phase.INITIALIZED:
            state.phase = Phase.OPERATING
        if "logLevel" in fields:
            state.log_level = fields["logLevel"] or None

    async def remember(self, session: Session, fields: dict[str, Any]) -> None:
        """Save ``fields`` of ``session``'s state in its record (JSON values); a
        session of no shared store saves nothing."""
        channel = shared_channel(session.channel)
        if channel is None or channel.session_id is None:
            return
        texts = {k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}
        try:
            await self.store.save_session(channel.session_id, texts)
        except StoreUnavailable:
            raise store_error() from None

    @staticmethod
    def initialize_fields(state: SessionState) -> dict[str, Any]:
        out: dict[str, Any] = {"protocolVersion": state.protocol_version or ""}
        if state.client_info is not None:
            out["clientInfo"] = unstructure(state.client_info)
        out["capabilities"] = unstructure(state.client_capabilities)
        return out

    # ------------------------------------------------------------------ resource subscriptions
    async def subscribe(self, session: Session, uri: str, subscribed: bool) -> None:
        channel = shared_channel(session.channel)
        if channel is None or channel.session_id is None:
            return
        try:
            await self.store.subscribe_uri(channel.session_id, uri, subscribed)
        except StoreUnavailable:
            raise store_error() from None

    # ------------------------------------------------------------------ notices
    def notify_sessions(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Write ``method`` to the standalone stream of every live session (or, for
        ``resources/updated``, of each one subscribed to its URI), in the background."""
        if not self.store.running:
            return
        data = encode(Notification(method=method, params=params))
        uri = (params or {}).get("uri") if method == _UPDATED else None

        async def send() -> None:
            if uri is not None:
                targets = await self.store.uri_subscribers(uri)
            else:
                targets = await self.store.live_sessions()
            for session_id in targets:
                await self.store.events(session_id).publish("0", data, last=False)

        self.store.later(send)

    def notify_session(self, session_id: str, method: str, params: dict[str, Any]) -> None:
        """Write ``method`` to the standalone stream of ``session_id`` (background)."""
        if not self.store.running:
            return
        data = encode(Notification(method=method, params=params))
        events = self.store.events(session_id)
        self.store.later(lambda: _discard(events.publish("0", data, last=False)))

    def publish(self, method: str, params: dict[str, Any] | None) -> None:
        """A ``subscriptions/listen`` notice: to the listeners of the other processes."""
        if not self.store.running:
            return
        body = json.dumps({"m": method, "p": params}).encode()
        envelope = Envelope(PUBLISHED, "", str(self.store.process), payload=body)
        self.store.later(lambda: self.store.send(envelope, to=None))

    def _envelope(self, envelope: Envelope) -> None:
        if envelope.kind == PUBLISHED and envelope.stream != str(self.store.process):
            try:
                note = json.loads(envelope.payload)
            except ValueError:
                return
            if isinstance(note, dict) and isinstance(note.get("m"), str):
                params = note.get("p")
                self.server.subscriptions.publish_local(
                    note["m"], params if isinstance(params, dict) else None
                )

    @staticmethod
    def first_request_id(channel: MessageChannel) -> int:
        """Where the session's outbound ids start (they name the process, in a shared
        store; see ``trimcp.transports.http._shared``)."""
        shared = shared_channel(channel)
        routing = None if shared is None else shared.shared
        return 0 if routing is None else routing.first_request_id


async def _discard(sent: Awaitable[str]) -> None:
    await sent

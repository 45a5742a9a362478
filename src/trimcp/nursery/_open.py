"""Opening a session: :func:`open_session`, the ``async with`` around a :class:`Session`.

The session's own behaviour (reader, admission, outbound calls, its end) is in
:mod:`._session`; this module owns the nursery it runs in and what happens at the end
of the block: cancel everything, then close the channel once no task is left.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from trimcp.dispatch import ConnectionClosedError, Middlewares, Registry
from trimcp.wire import Message, Request

from ._channel import MessageChannel
from ._errors import unwrap_single
from ._limits import SessionLimits
from ._session import Session
from ._state import Role, SessionState

__all__ = ["open_session"]


@asynccontextmanager
async def open_session(
    channel: MessageChannel,
    *,
    role: Role,
    registry: Registry,
    middlewares: Middlewares | None = None,
    limits: SessionLimits | None = None,
    state: SessionState | None = None,
    prepare: Callable[[Message], Message] | None = None,
    exempt: Callable[[Request], bool] | None = None,
    first_request_id: int = 0,
) -> AsyncIterator[Session]:
    """Run a session over ``channel`` for the duration of the ``async with`` block.

    Leaving the block closes the session: handlers and detached work are cancelled,
    waiting callers fail with :class:`ConnectionClosedError`, the channel is closed and
    no task is left behind. A single exception from the block or a task is raised as
    itself, not wrapped in an :class:`ExceptionGroup`.

    ``prepare``, if given, rewrites every outgoing message before the send middleware
    sees it (the client stamps its era's ``_meta`` there). It is a plain function, so
    a sender held up in the transport keeps no frame of it alive.

    ``exempt``, if given, names the requests the layer above judges itself rather than
    the lifecycle table (the server's stateless-era requests; see ``_lifecycle``).

    ``first_request_id`` is the id of the session's first outbound request (they count
    up from it): processes sharing sessions give each its own range, so that an answer
    names the process waiting for it.
    """
    with unwrap_single():
        try:
            async with trio.open_nursery() as nursery:
                session = Session._create(
                    channel,
                    nursery,
                    role=role,
                    registry=registry,
                    middlewares=middlewares or Middlewares(),
                    limits=limits or SessionLimits(),
                    state=state or SessionState(),
                    prepare=prepare,
                    exempt=exempt,
                    first_request_id=first_request_id,
                )
                nursery.start_soon(session._reader)
                nursery.start_soon(session._admit)
                start_writer = getattr(channel, "start_writer", None)
                if start_writer is not None:
                    start_writer(nursery.start_soon)
                try:
                    yield session
                finally:
                    session._end(ConnectionClosedError("the session was closed"), local=True)
                    nursery.cancel_scope.cancel()
        finally:
            # Closed only once every task has finished, so that the shielded,
            # time-bounded notifications/cancelled of abandoned calls can still go out.
            with trio.CancelScope(shield=True):
                await channel.aclose()

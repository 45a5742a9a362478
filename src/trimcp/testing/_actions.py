"""The actions a conformance run is made of, and how each one is performed.

Every action is a JSON object with an ``op``; :func:`perform` runs it on a
:class:`Session` and the session's barrier follows. The ops:

``open``       connect, ``initialize`` with ``version`` and ``capabilities``, send
               ``notifications/initialized``, list the tools (``answers``: how the peer
               answers the server's reverse requests, ``result`` or ``error``).
``send``       one frame (``frame``, optional progress ``token``).
``call_cancel`` send ``frame`` (a request with ``token``), wait for ``after`` progress
               notifications (or the answer), then cancel it.
``cancel``     ``notifications/cancelled`` for an earlier request ``id``.
``paginate``   list ``method`` page by page to the end; with ``bogus`` a made-up cursor.
``close``      disconnect (the server must end the session); the next op may ``open``.
"""

from __future__ import annotations

from typing import Any

import trio

from ._checker import Checker, parse
from ._frames import INVALID_PARAMS, Expect, Frame, dumps
from ._session import LIST_CAPABILITY, LIST_KEYS, Session
from ._violations import Violation, violation

__all__ = ["perform"]


async def _open(session: Session, action: dict[str, Any]) -> None:
    connection = await session.target.connect(session.nursery)
    session.connection = connection
    session.opened.append(connection)
    session.checker = Checker(action["version"], action.get("capabilities", {}))
    session.answers = action.get("answers", "result")
    session.nursery.start_soon(session.drain, connection, session.checker)
    params = {
        "protocolVersion": action["version"],
        "capabilities": action.get("capabilities", {}),
        "clientInfo": {"name": "trimcp-conform", "version": "1"},
    }
    _, response = await session.request("initialize", params, session.options.startup_timeout)
    if response is None:
        raise violation("one-response", "initialize was not answered")
    if "error" in response:
        return  # refused: nothing more to do in this session (checked as any response)
    result = response["result"]
    version = result.get("protocolVersion")
    if version not in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        return  # a revision this peer does not speak: the client would disconnect
    session.checker.version = version
    session.checker.server_capabilities = dict(result.get("capabilities") or {})
    connection.negotiated(version)
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    session.checker.initialized = True
    await session.send(Frame(dumps(note), "valid", Expect("none")))
    if "tools" in session.checker.server_capabilities:
        session.tools = await _list_all(session, "tools/list")


async def _list_all(session: Session, method: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursors: set[str] = set()
    params: dict[str, Any] | None = None
    declared = LIST_CAPABILITY[method] in session.checker.server_capabilities
    for _ in range(session.options.max_pages):
        _, response = await session.request(method, params)
        if response is None:
            return items
        if "error" in response:
            if declared:
                raise violation(
                    "capabilities",
                    f"{method} failed although {LIST_CAPABILITY[method]} is declared",
                )
            return items
        result = response["result"]
        items.extend(x for x in result.get(LIST_KEYS[method], []) if isinstance(x, dict))
        cursor = result.get("nextCursor")
        if cursor is None:
            return items
        if cursor in cursors:
            raise violation("pagination", f"{method} returned cursor {cursor!r} twice")
        cursors.add(cursor)
        params = {"cursor": cursor}
    raise violation("pagination", f"{method} did not end within {session.options.max_pages} pages")


async def _paginate(session: Session, action: dict[str, Any]) -> None:
    method = action["method"]
    if not action.get("bogus"):
        await _list_all(session, method)
        return
    request_id = session.fresh_id()
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"cursor": action["bogus"]},
    }
    # Invalid cursors SHOULD be -32602; a server may also ignore them (any success). A
    # server without the capability may answer -32601 instead.
    declared = LIST_CAPABILITY[method] in session.checker.server_capabilities
    codes = (INVALID_PARAMS,) if declared else None
    frame = Frame(dumps(message), "bogus-cursor", Expect("one", (request_id,), codes))
    index = await session.send(frame)
    await session.answer_of(index)


async def _cancel(session: Session, request_id: Any) -> None:
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "conformance"},
    }
    session.checker.cancelled(request_id)
    await session.send(Frame(dumps(note), "cancel", Expect("none")))


async def _call_cancel(session: Session, action: dict[str, Any]) -> None:
    frame = Frame.from_json(action["frame"])
    index = await session.send(frame, action.get("token"))
    pending = session.checker.pending[index]
    after = int(action.get("after", 0))

    def ready() -> bool:
        return pending.answers > 0 or pending.progress_seen >= after

    await session.wait(ready, trio.current_time() + session.options.response_timeout)
    await _cancel(session, action["id"])


async def _close(session: Session) -> None:
    connection = session.connection
    if connection is None:
        return
    session.checker.ended = True
    problem = await connection.close()
    session.connection = None
    if problem is not None:
        raise violation("disconnect", problem)


async def perform(session: Session, action: dict[str, Any]) -> None:
    """Run one action, then the barrier (unless it closed the connection).

    A violation of a property in ``session.options.ignore`` ends the step quietly.
    """
    session.trace.append(action)
    try:
        await _perform(session, action)
    except Violation as exc:
        if exc.property not in session.options.ignore:
            raise
        session.failure = None


async def _perform(session: Session, action: dict[str, Any]) -> None:
    op = action["op"]
    if op == "open":
        await _open(session, action)
    elif op == "send":
        frame = Frame.from_json(action["frame"])
        if frame.expect.method == "resources/subscribe":
            uri = parse(frame.data).get("params", {}).get("uri")
            session.checker.subscribed.add(str(uri))
        await session.send(frame, action.get("token"))
    elif op == "call_cancel":
        await _call_cancel(session, action)
    elif op == "cancel":
        await _cancel(session, action["id"])
    elif op == "paginate":
        await _paginate(session, action)
    elif op == "close":
        await _close(session)
        return
    else:
        raise ValueError(f"unknown op {op!r}")
    if session.connection is not None:
        await session.barrier()

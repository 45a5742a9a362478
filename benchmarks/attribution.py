"""Where the time goes: sampled stacks folded into named cost centres.

Each sampled frame's self time is charged to the innermost *owning* frame on its stack:
a frame of trimcp, of Trio, or of the harness, named by what it does. Frames of
everything else (builtins, the standard library, cattrs, attrs-generated ``__init__``)
have no owner and are charged to whoever called them, so ``cattrs`` work done for the
client's ``structure(raw, CallToolResult)`` lands on that conversion, not on "cattrs".
Binding frames are prefixed with the centre they work for, for the same reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

#: trimcp module path fragment -> cost centre, or a dict function -> centre ("*": rest).
_TRIMCP: dict[str, str | dict[str, str]] = {
    "trimcp/nursery/_session.py": {
        "request": "session: outbound request (client)",
        "_reader": "session: reader + inbound dispatch",
        "_dispatch": "session: reader + inbound dispatch",
        "_accept_request": "session: reader + inbound dispatch",
        "_run_request": "session: run request (server)",
        "_call_handler": "session: run request (server)",
        "_reply": "session: send answer (server)",
        "_write": "session: channel write",
        "send_message": "session: channel write",
        "*": "session: other",
    },
    "trimcp/nursery/_context.py": "context: HandlerContext",
    "trimcp/server/_context.py": "context: ToolContext",
    "trimcp/server/_server.py": "server: tools/call route (_guarded, _call_tool)",
    "trimcp/server/_lifecycle.py": "server: lifecycle check",
    "trimcp/server/_tools.py": "server: ToolRegistry.call",
    "trimcp/dispatch/_middleware.py": "dispatch: middleware chain",
    "trimcp/dispatch/_pending.py": "dispatch: pending table",
    "trimcp/dispatch/_registry.py": "dispatch: registry",
    "trimcp/dispatch/": "dispatch: other",
    "trimcp/transports/_memory.py": "transport: MemoryChannel",
    "trimcp/transports/websocket/": "transport: WebSocket (wsproto framing)",
    "trimcp/wire/": "wire",
    "trimcp/client/_client.py": "client: call_tool",
    "trimcp/protocol/": "protocol types",
}

_SPAWN = "trio: task spawn"
_SWITCH = "trio: task switches (yield, reschedule)"
_CANCEL = "trio: cancel scopes and deadlines"
_LOOP = "trio: run loop"

#: trio/_core/_run.py function -> cost centre; the rest inherit a Trio caller's centre.
_TRIO_RUN = {
    "spawn_impl": _SPAWN,
    "start_soon": _SPAWN,
    "reschedule": _SWITCH,
    "task_exited": "trio: task exit",
    "_child_finished": "trio: task exit",
    "unrolled_run": _LOOP,
    **dict.fromkeys(
        (
            "__enter__",
            "__exit__",
            "_close",
            "_exc_filter",
            "_might_change_registered_deadline",
            "recalculate",
            "_activate_cancel_status",
            "_attempt_delivery_of_any_pending_cancel",
            "effective_deadline",
            "add",
            "remove",
            "expire",
            "prune",
            "deadline",
        ),
        _CANCEL,
    ),
}


def owner(file_path: str, function: str, inherited: str | None) -> str | None:
    """The cost centre a frame owns, or ``None`` to charge its caller's."""
    path = "/" + file_path.replace("\\", "/").lstrip("/")
    function = function.rpartition(".")[2]
    if "/trimcp/binding/" in path:
        if inherited is not None and inherited.startswith("binding"):
            return inherited
        return f"binding (for {inherited})"
    for fragment, centre in _TRIMCP.items():
        if fragment in path:
            if isinstance(centre, dict):
                return centre.get(function, centre["*"])
            return centre
    if "/trimcp/bench/_load" in path:
        return "harness (load generator)"
    if "/trimcp/bench/" in path:
        return "benchmark driver code (all of the floor's own work)"
    if "/trio/" in path:
        return _trio_owner(path, function, inherited)
    return None


def _trio_owner(path: str, function: str, inherited: str | None) -> str:
    if path.endswith("trio/_channel.py"):
        return "trio: memory channels"
    if path.endswith(("trio/_sync.py", "_parking_lot.py")):
        return "trio: sync (Event, Semaphore)"
    if path.endswith(("trio/_socket.py", "trio/_highlevel_socket.py")):
        return "trio: socket send/receive"
    if path.endswith("_core/_io_epoll.py"):
        return "trio: I/O poll (epoll_wait(0) per batch)"
    if path.endswith("_core/_traps.py"):
        return _SWITCH
    centre = _TRIO_RUN.get(function) if path.endswith("_core/_run.py") else None
    if centre is not None:
        return centre
    if inherited is not None and inherited.startswith("trio:"):
        return inherited
    return _LOOP


def centres(root: Any) -> dict[str, float]:
    """Self time (seconds) per cost centre, from a pyinstrument frame tree."""
    totals: dict[str, float] = defaultdict(float)
    stack: list[tuple[Any, str | None]] = [(root, None)]
    while stack:
        frame, inherited = stack.pop()
        mine = owner(frame.file_path or "", frame.function or "", inherited) or inherited
        children = frame.children
        own = frame.time - sum(child.time for child in children)
        totals[mine or "unowned (interpreter, before any owner)"] += own
        stack.extend((child, mine) for child in children)
    return dict(totals)


def centres_from_collapsed(lines: Iterable[str]) -> dict[str, float]:
    """Samples per cost centre from collapsed stacks (``py-spy record -f raw``).

    Each line is ``frame;frame;... count`` from the root, a frame ``function (file:line)``.
    """
    totals: dict[str, float] = defaultdict(float)
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        mine: str | None = None
        for frame in stack.split(";"):
            function, _, where = frame.partition(" (")
            file_path = where.rpartition(":")[0]
            mine = owner(file_path, function, mine) or mine
        totals[mine or "unowned (interpreter, before any owner)"] += float(count)
    return dict(totals)

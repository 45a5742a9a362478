"""Whole sessions as data: strategies for lists of actions that :func:`replay` performs.

Where the state machine decides each step from what the server said, a session drawn
here is fixed up front (it cannot call tools it has not seen), which makes it a simple
fuzzer input and a readable regression test: open, then a mix of requests,
notifications, cancellations of earlier requests, near misses, listings with good and
bogus cursors, and disconnects followed by a fresh session.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st

from ._frames import Frame, dumps, expect_for
from ._invalid import invalid_frames
from ._messages import client_notifications, client_requests
from ._schemas import HANDSHAKE_REVISIONS

__all__ = ["sessions"]

_LISTS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]


@st.composite
def sessions(
    draw: st.DrawFn, version: str | None = None, *, max_steps: int = 12
) -> list[dict[str, Any]]:
    """A session of up to ``max_steps`` actions, starting with ``open``."""
    revision = version or draw(st.sampled_from(HANDSHAKE_REVISIONS))
    opened: dict[str, Any] = {
        "op": "open",
        "version": revision,
        "capabilities": {},
        "answers": "result",
    }
    counter = itertools.count(1)
    actions: list[dict[str, Any]] = [opened]
    sent: list[Any] = []
    for _ in range(draw(st.integers(0, max_steps))):
        kind = draw(
            st.sampled_from(["request", "notification", "near", "cancel", "list", "reconnect"])
        )
        if kind == "request":
            rid = f"s-{next(counter)}"
            message = draw(client_requests(revision, request_id=rid, exclude=("initialize",)))
            message.get("params", {}).pop("task", None)
            meta = message.get("params", {}).get("_meta")
            token = None
            if isinstance(meta, dict) and "progressToken" in meta:
                token = meta["progressToken"] = f"t-{next(counter)}"
            frame = Frame(dumps(message), "valid", expect_for(revision, message))
            actions.append({"op": "send", "frame": frame.to_json(), "token": token})
            sent.append(rid)
        elif kind == "notification":
            message = draw(client_notifications(revision, exclude=("notifications/cancelled",)))
            frame = Frame(dumps(message), "valid", expect_for(revision, message))
            actions.append({"op": "send", "frame": frame.to_json(), "token": None})
        elif kind == "near":
            ids = [f"s-{next(counter)}", f"s-{next(counter)}"]
            token = f"t-{next(counter)}"
            frame = draw(invalid_frames(revision, ids, max_size=1 << 16, token=token))
            actions.append({"op": "send", "frame": frame.to_json(), "token": token})
        elif kind == "cancel" and sent:
            actions.append({"op": "cancel", "id": draw(st.sampled_from(sent))})
        elif kind == "list":
            bogus = draw(st.sampled_from([None, "bogus-cursor"]))
            actions.append(
                {"op": "paginate", "method": draw(st.sampled_from(_LISTS)), "bogus": bogus}
            )
        elif kind == "reconnect":
            actions += [{"op": "close"}, dict(opened)]
    return actions

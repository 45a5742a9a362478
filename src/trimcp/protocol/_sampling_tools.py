"""The rules of tool use inside sampling (2025-11-25, SEP-1577), as pure checks.

A conversation that uses tools must keep two rules, which both sides check (the server
before it sends ``sampling/createMessage``, the client before its handler sees it):

* a user message that holds a ``tool_result`` holds nothing but tool results;
* every assistant message with ``tool_use`` blocks is followed at once by a user message
  whose ``tool_result`` blocks answer each of them (matched by ``tool_use_id``).

Revisions before 2025-11-25 have no tool blocks and no lists of blocks as a message's
content; :func:`uses_sampling_tools` tells whether a request needs the newer revision.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._sampling import SamplingContent, SamplingMessage, ToolResultContent, ToolUseContent

__all__ = ["TOOL_CHOICE_MODES", "blocks_of", "tool_turn_problem", "uses_sampling_tools"]

#: The values of ``toolChoice.mode``; absent means ``auto``.
TOOL_CHOICE_MODES = ("auto", "required", "none")


def blocks_of(message: SamplingMessage) -> list[SamplingContent]:
    """A message's content as a list, whether it is one block or several."""
    content = message.content
    return list(content) if isinstance(content, list) else [content]


def uses_sampling_tools(messages: Sequence[SamplingMessage]) -> bool:
    """Whether any message holds a tool block or a list of blocks (2025-11-25+ only)."""
    for message in messages:
        if isinstance(message.content, list):
            return True
        if isinstance(message.content, ToolUseContent | ToolResultContent):
            return True
    return False


def tool_turn_problem(messages: Sequence[SamplingMessage]) -> str | None:
    """The first breach of the tool-use rules of the module doc, or ``None``."""
    pending: set[str] | None = None
    for index, message in enumerate(messages):
        blocks = blocks_of(message)
        results = [b for b in blocks if isinstance(b, ToolResultContent)]
        if pending is not None:
            answered = {r.tool_use_id for r in results}
            if message.role != "user" or not pending <= answered:
                missing = ", ".join(sorted(pending - answered))
                return f"messages[{index}] must answer tool_use ids {missing} with tool_result"
            pending = None
        if results and (message.role != "user" or len(results) != len(blocks)):
            return f"messages[{index}]: tool_result blocks must be alone in a user message"
        uses = {b.id for b in blocks if isinstance(b, ToolUseContent)}
        if uses:
            if message.role != "assistant":
                return f"messages[{index}]: tool_use blocks belong to assistant messages"
            pending = uses
    if pending is not None:
        missing = ", ".join(sorted(pending))
        return f"the last message's tool_use ids {missing} have no tool_result"
    return None

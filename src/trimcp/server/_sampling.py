"""Sampling with tools on the server (2025-11-25, SEP-1577): the gate and the wire form.

A server MUST NOT send ``tools`` or ``toolChoice`` to a client that did not declare
``sampling.tools``, and ``tool_use`` / ``tool_result`` blocks make no sense to such a
client either; a list of blocks as a message's content needs 2025-11-25.
:func:`sampling_tools_params` checks all of that before anything is sent, raising
:class:`~trimcp.server.CapabilityError` (``"sampling.tools"``), and checks the
conversation keeps the tool-use rules (:func:`trimcp.protocol.tool_turn_problem`),
raising :class:`ValueError` for a conversation the client would have to reject.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from trimcp.binding import unstructure
from trimcp.nursery import SessionState
from trimcp.protocol import (
    Feature,
    SamplingMessage,
    Tool,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
    blocks_of,
    supports,
    tool_turn_problem,
    uses_sampling_tools,
)

if TYPE_CHECKING:
    from ._context import CapabilityError

__all__ = ["ToolChoiceArg", "sampling_tools_params"]

ToolChoiceArg = ToolChoice | Literal["auto", "required", "none"]
"""``tool_choice`` of ``ctx.sample``: the object, or just its mode."""


def _missing() -> CapabilityError:
    # Imported here: the error class lives with the context, which imports this module.
    from ._context import CapabilityError

    required: dict[str, Any] = {"sampling": {"tools": {}}}
    return CapabilityError("sampling.tools", required=required)


def sampling_tools_params(
    state: SessionState,
    messages: Sequence[SamplingMessage],
    tools: Sequence[Tool] | None,
    tool_choice: ToolChoiceArg | None,
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``tools`` / ``toolChoice`` members to add to a ``sampling/createMessage``.

    ``extra`` is the caller's raw members; ``tools`` / ``toolChoice`` given there count
    as tool use too. Returns an empty dict when no tools are involved.
    """
    wants_tools = (
        tools is not None or tool_choice is not None or "tools" in extra or "toolChoice" in extra
    )
    version = state.protocol_version
    revision_ok = version is not None and supports(version, Feature.SAMPLING_TOOLS)
    sampling = state.client_capabilities.sampling
    declared = revision_ok and sampling is not None and sampling.tools is not None
    tool_blocks = any(
        isinstance(block, ToolUseContent | ToolResultContent)
        for message in messages
        for block in blocks_of(message)
    )
    if (wants_tools or tool_blocks) and not declared:
        raise _missing()
    if uses_sampling_tools(messages):
        if not revision_ok:
            raise _missing()
        problem = tool_turn_problem(messages)
        if problem is not None:
            raise ValueError(problem)
    members: dict[str, Any] = {}
    if tools is not None:
        members["tools"] = [unstructure(tool) for tool in tools]
    if tool_choice is not None:
        choice = ToolChoice(mode=tool_choice) if isinstance(tool_choice, str) else tool_choice
        members["toolChoice"] = unstructure(choice)
    return members

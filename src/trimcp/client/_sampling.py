"""The client's answer to ``sampling/createMessage``, with tools (2025-11-25).

``open_client(sampling=...)`` takes a plain handler ``async (ctx, CreateMessageParams)
-> CreateMessageResult`` or a :class:`Sampling`, which also says what the client's
sampling supports: ``tools=True`` declares ``sampling.tools`` (the server may then send
``tools`` / ``tool_choice`` and ``tool_use`` / ``tool_result`` blocks, all typed in the
params the handler gets), ``context=True`` declares ``sampling.context``
(``includeContext`` other than ``"none"``).

Before the handler runs, a request is checked: tools or tool blocks sent to a client
that did not declare ``sampling.tools``, and a conversation that breaks the tool-use
rules (:func:`~trimcp.protocol.tool_turn_problem`), are answered ``-32602``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, final

import attrs

from trimcp.binding import unstructure
from trimcp.dispatch import McpError, Registry
from trimcp.nursery import HandlerContext
from trimcp.protocol import (
    CreateMessageParams,
    CreateMessageResult,
    SamplingCapability,
    SamplingMessage,
    ToolResultContent,
    ToolUseContent,
    blocks_of,
    tool_turn_problem,
)
from trimcp.wire import INVALID_PARAMS

__all__ = ["Sampling", "SamplingHandler", "install_sampling"]

SamplingHandler = Callable[[HandlerContext, CreateMessageParams], Awaitable[CreateMessageResult]]


@final
@attrs.frozen(kw_only=True)
class Sampling:
    """A sampling handler and the sub-features it supports (see the module doc)."""

    handler: SamplingHandler
    tools: bool = False
    context: bool = False

    def capability(self) -> SamplingCapability:
        return SamplingCapability(
            tools={} if self.tools else None, context={} if self.context else None
        )


def install_sampling(
    registry: Registry, given: Sampling | SamplingHandler | None
) -> SamplingCapability | None:
    """Answer ``sampling/createMessage`` with ``given``; returns the capability."""
    if given is None:
        return None
    sampling = given if isinstance(given, Sampling) else Sampling(handler=given)

    async def create_message(ctx: HandlerContext, params: CreateMessageParams) -> Any:
        with_tools = params.tools is not None or params.tool_choice is not None
        if not sampling.tools and (with_tools or _has_tool_blocks(params.messages)):
            raise McpError(INVALID_PARAMS, "Invalid params: this client does not sample with tools")
        problem = tool_turn_problem(params.messages)
        if problem is not None:
            raise McpError(INVALID_PARAMS, f"Invalid params: {problem}")
        return unstructure(await sampling.handler(ctx, params))

    registry.add_request("sampling/createMessage", create_message, params_type=CreateMessageParams)
    return sampling.capability()


def _has_tool_blocks(messages: list[SamplingMessage]) -> bool:
    return any(
        isinstance(block, ToolUseContent | ToolResultContent)
        for message in messages
        for block in blocks_of(message)
    )

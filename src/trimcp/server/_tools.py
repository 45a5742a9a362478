"""The server's tools: registration, listing per revision, and calling.

Each tool is bound once at registration (:func:`trimcp.binding.bind_tool`): its input
schema (and output schema for a structured return type) is generated then, and its
arguments are structured by generated code on every call. The wire form of each tool is
cached per protocol revision, with the members that revision lacks left out, so listing
costs a slice of a list.

Failures inside a tool follow the spec's split: invalid arguments and failures of the
tool's own work are *results* with ``isError: true`` (the model can read them and try
again); an unknown tool or malformed params are JSON-RPC errors. A tool that raises
:class:`ToolError` chooses its own message; any other exception gets a generic one, and
the detail is logged, never sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, TypedDict, Unpack, final

import attrs

from trimcp.binding import ArgumentsError, ToolBinding, bind_tool, unstructure
from trimcp.dispatch import McpError, single_error
from trimcp.protocol import Feature, Icon, TaskSupport, Tool, ToolAnnotations, supports
from trimcp.wire import INVALID_PARAMS

from ._context import ToolContext
from ._downgrade import fit_tool_result
from ._workers import WorkerThreads

__all__ = ["RegisteredTool", "ToolError", "ToolOptions", "ToolRegistry"]

logger = logging.getLogger("trimcp.server")

#: Members of a tool object and the feature that introduced them.
_GATED_MEMBERS = (
    ("title", Feature.TITLES),
    ("outputSchema", Feature.STRUCTURED_OUTPUT),
    ("annotations", Feature.TOOL_ANNOTATIONS),
    ("icons", Feature.ICONS),
    ("execution", Feature.TASKS),
    ("_meta", Feature.META_ON_TYPES),
)


class RegistrationOptions(TypedDict, total=False):
    """What ``ToolRegistry.add`` takes besides the function (all optional)."""

    name: str | None
    title: str | None
    description: str | None
    annotations: ToolAnnotations | None
    icons: list[Icon] | None
    input_schema: dict[str, Any] | None
    meta: dict[str, Any] | None


class ToolOptions(RegistrationOptions, total=False):
    """The options of ``@server.tool(...)``: the tool's name (default: the function's),
    title, description (default: the docstring), annotations, icons, an explicit input
    schema (validated against; default: generated from the annotations), ``_meta``;
    whether and how it runs as a task; with authorization, the OAuth ``scopes`` a call
    needs; its MCP Apps view (``ui``) and who may call it (``visibility``)."""

    task_support: TaskSupport
    task_handoff: Literal["start", "explicit"]
    scopes: Iterable[str] | None
    ui: str | None
    visibility: Sequence[str] | None


class ToolError(Exception):
    """Raised by a tool to fail with this message as an ``isError: true`` result."""


@final
@attrs.frozen
class RegisteredTool:
    """A tool and its binding."""

    tool: Tool
    binding: ToolBinding
    #: Wire form per protocol revision, filled on first listing.
    wire: dict[str, dict[str, Any]] = attrs.field(factory=dict, eq=False)

    def to_wire(self, version: str) -> dict[str, Any]:
        cached = self.wire.get(version)
        if cached is None:
            full = unstructure(self.tool)
            cached = {
                key: value
                for key, value in full.items()
                if all(
                    key != name or supports(version, feature) for name, feature in _GATED_MEMBERS
                )
            }
            self.wire[version] = cached
        return cached


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _failed(name: str, exc: Exception) -> dict[str, Any]:
    """The answer of a tool that raised ``exc``: an error result, or ``exc`` re-raised
    for a protocol error. A group from the tool's own nursery holding one real error
    is that error, so a :class:`ToolError` raised in a child task keeps its message."""
    if isinstance(exc, ExceptionGroup):
        real = single_error(exc)
        if isinstance(real, Exception):
            exc = real
    if isinstance(exc, ArgumentsError):
        return _error_result("Invalid arguments: " + "; ".join(exc.messages))
    if isinstance(exc, ToolError):
        return _error_result(str(exc))
    if isinstance(exc, McpError):
        raise exc
    logger.error("tool %s raised", name, exc_info=exc)
    return _error_result(f"Tool {name} failed")


@final
class ToolRegistry:
    """The tools of one server, in registration order (the order ``tools/list`` uses)."""

    def __init__(self, on_change: Callable[[], None], workers: WorkerThreads) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self._order: list[RegisteredTool] = []
        self._on_change = on_change
        self._workers = workers

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def add(self, fn: Callable[..., Any], **options: Unpack[RegistrationOptions]) -> RegisteredTool:
        """Bind and register ``fn``; a tool of the same name is replaced."""
        binding = bind_tool(
            fn, run_sync=self._workers.run, input_schema=options.get("input_schema")
        )
        description = options.get("description")
        tool = Tool(
            name=options.get("name") or binding.name,
            title=options.get("title"),
            description=description if description is not None else binding.description,
            input_schema=binding.input_schema,
            output_schema=binding.output_schema,
            annotations=options.get("annotations"),
            icons=options.get("icons"),
            meta=options.get("meta"),
        )
        registered = RegisteredTool(tool, binding)
        if tool.name in self._tools:
            self._order.remove(self._tools[tool.name])
        self._tools[tool.name] = registered
        self._order.append(registered)
        self._on_change()
        return registered

    def remove(self, name: str) -> None:
        """Unregister a tool (``KeyError`` if there is none of that name)."""
        registered = self._tools.pop(name)
        self._order.remove(registered)
        self._on_change()

    def get(self, name: str) -> RegisteredTool | None:
        return self._tools.get(name)

    def ordered(self) -> list[RegisteredTool]:
        return self._order

    async def call(self, ctx: ToolContext, params: dict[str, Any] | None) -> dict[str, Any]:
        """Answer ``tools/call``, the result shaped for the caller's protocol version."""
        if params is None or not isinstance(params.get("name"), str):
            raise McpError(INVALID_PARAMS, "Invalid params: name must be a string")
        name = params["name"]
        registered = self._tools.get(name)
        if registered is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        binding = registered.binding
        try:
            value = await binding.invoke(ctx, arguments)
        except Exception as exc:
            return _failed(name, exc)
        result = binding.result_to_wire(value)
        version = ctx.handler.session.protocol_version  # (a property less than ctx.session)
        if (
            "structuredContent" in result
            and version is not None
            and not supports(version, Feature.STRUCTURED_OUTPUT)
        ):
            # A revision without structured output gets its JSON text rendering only,
            # just as its tool listing has no outputSchema.
            result = {key: value for key, value in result.items() if key != "structuredContent"}
        return fit_tool_result(version, result)

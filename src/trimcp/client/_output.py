"""Client-side checks of a tool's ``structuredContent`` against its ``outputSchema``.

The spec (2025-06-18+) says a server MUST return structured results that conform to a
tool's ``outputSchema``, and clients SHOULD validate them. :class:`OutputSchemas` holds
what the client learned from ``tools/list``: the compiled validator of each tool's output
schema (compiled once per distinct schema by :func:`trimcp.binding.validator_for`, kept
per tool name here). ``Client.call_tool`` checks every successful result of a tool that
has one:

* a result without ``structuredContent`` is an error (the spec requires it whenever an
  ``outputSchema`` is declared);
* ``structuredContent`` that does not validate is an error.

Both raise :class:`OutputSchemaError`, which carries the result so a caller can still
look at it. Results with ``isError: true`` are not checked (a failing tool reports in
``content``).

A result with ``structuredContent`` from a tool the client has not listed yet makes it
list the server's tools once (all pages) to learn the schema; a tool still unknown after
that is not checked. A result *without* ``structuredContent`` never costs a listing, so
the "no structuredContent" error is raised only for tools the client has listed. The cache
is emptied when the server sends ``notifications/tools/list_changed``, and holds at most
:data:`MAX_OUTPUT_SCHEMAS` tools (the oldest are forgotten first, and are then simply
looked up again).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, final

from trimcp.binding import validator_for
from trimcp.dispatch import McpError, Registry
from trimcp.nursery import Session
from trimcp.protocol import CallToolResult, Feature, Tool, supports

__all__ = [
    "MAX_OUTPUT_SCHEMAS",
    "OutputSchemaError",
    "OutputSchemas",
    "ToolsChangedHandler",
    "add_tool_handlers",
]

ToolsChangedHandler = Callable[[], Awaitable[None]]

#: Tools whose output validators one client keeps at once.
MAX_OUTPUT_SCHEMAS: Final = 4096

#: Violations listed in an :class:`OutputSchemaError` message.
_SHOWN_ERRORS: Final = 5


class OutputSchemaError(Exception):
    """A tool's result does not match its declared ``outputSchema``.

    Attributes:
      tool: the tool's name.
      result: the result as received.
      errors: readable violations (``"$.count: 'x' is not of type 'integer'"``), or the
        one problem (no ``structuredContent``, an unusable schema).
    """

    def __init__(self, tool: str, result: CallToolResult, errors: list[str]) -> None:
        self.tool = tool
        self.result = result
        self.errors = errors
        shown = "; ".join(errors[:_SHOWN_ERRORS])
        more = f" (and {len(errors) - _SHOWN_ERRORS} more)" if len(errors) > _SHOWN_ERRORS else ""
        super().__init__(
            f"tool {tool!r} returned output not matching its outputSchema: {shown}{more}"
        )


_UNKNOWN: Final = object()


@final
class OutputSchemas:
    """The output schemas of the tools one client has seen (see the module doc)."""

    def __init__(self, limit: int = MAX_OUTPUT_SCHEMAS) -> None:
        self._limit = limit
        self._schemas: OrderedDict[str, dict[str, Any] | None] = OrderedDict()
        #: ``execution.taskSupport`` of the listed tools that have one (2025-11-25).
        self._task_support: dict[str, str] = {}
        #: Compiled validators by tool name, made on a tool's first checked result.
        self._validators: dict[str, Any] = {}
        #: A full listing was made since the last change notice.
        self.complete = False

    def __len__(self) -> int:
        return len(self._schemas)

    def remember(self, tools: Iterable[Tool]) -> None:
        """Record the output schema (or its absence) of each listed tool."""
        for tool in tools:
            self._schemas.pop(tool.name, None)
            self._validators.pop(tool.name, None)
            self._task_support.pop(tool.name, None)
            self._schemas[tool.name] = tool.output_schema
            support = tool.execution.task_support if tool.execution is not None else None
            if support is not None:
                self._task_support[tool.name] = support
            if len(self._schemas) > self._limit:
                name, _ = self._schemas.popitem(last=False)
                self._validators.pop(name, None)
                self._task_support.pop(name, None)
                self.complete = False

    def forget(self) -> None:
        """The server's tools changed: everything must be listed again."""
        self._schemas.clear()
        self._validators.clear()
        self._task_support.clear()
        self.complete = False

    def known(self, name: str) -> bool:
        return name in self._schemas

    def task_support(self, name: str) -> str | None:
        """The listed ``execution.taskSupport`` of tool ``name`` (``None``: none seen)."""
        return self._task_support.get(name)

    def check(self, name: str, result: CallToolResult) -> None:
        """Raise :class:`OutputSchemaError` if ``result`` breaks ``name``'s schema."""
        schema = self._schemas.get(name, _UNKNOWN)
        if schema is _UNKNOWN or schema is None or result.is_error:
            return
        assert isinstance(schema, dict)
        if result.structured_content is None:
            raise OutputSchemaError(
                name, result, ["the tool declares an outputSchema but sent no structuredContent"]
            )
        validator = self._validators.get(name)
        if validator is None:
            try:
                validator = validator_for(schema)
            except Exception as exc:  # the server's schema itself is broken
                raise OutputSchemaError(name, result, [f"unusable outputSchema: {exc}"]) from None
            self._validators[name] = validator
        errors = sorted(
            validator.iter_errors(result.structured_content), key=lambda e: [str(p) for p in e.path]
        )
        if errors:
            raise OutputSchemaError(name, result, [_describe(e) for e in errors])

    def may_check(self, name: str, result: CallToolResult) -> bool:
        """Whether :meth:`verify` could do anything for ``result``: a structured result
        (perhaps of a tool not listed yet), or a tool known to declare an output schema.
        ``False`` spares the common unstructured call a wait."""
        if result.structured_content is not None:
            return True
        return self._schemas.get(name) is not None

    async def verify(
        self,
        version: str,
        name: str,
        result: CallToolResult,
        list_all: Callable[[], Awaitable[object]],
    ) -> None:
        """Check ``result`` of tool ``name`` on a session of ``version``, listing the
        server's tools first when ``result`` is structured, ``name`` is unknown and no
        full listing was made."""
        if not supports(version, Feature.STRUCTURED_OUTPUT) or result.is_error:
            return
        lookup = result.structured_content is not None
        if lookup and not self.known(name) and not self.complete:
            try:
                await list_all()
            except McpError:  # the listing failed: the result stays unchecked
                self.complete = True
                return
        self.check(name, result)


def _describe(error: Any) -> str:
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
    return f"{path}: {error.message}"


def add_tool_handlers(
    registry: Registry, schemas: OutputSchemas, on_tools_list_changed: ToolsChangedHandler | None
) -> None:
    """Route ``notifications/tools/list_changed``: forget the cached schemas, then tell
    the caller's callback (if any)."""

    async def list_changed(_session: Session, _params: dict[str, Any] | None) -> None:
        schemas.forget()
        if on_tools_list_changed is not None:
            await on_tools_list_changed()

    registry.add_notification("notifications/tools/list_changed", list_changed)

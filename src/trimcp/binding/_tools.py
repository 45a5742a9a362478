"""Typed tools: bind a function once, then structure arguments and write results fast.

Parameter forms (decided at bind time from ``typing.get_type_hints``, never per call):

- a parameter annotated with a class that has a truthy ``__trimcp_context__`` attribute
  receives the request context (the server layer's ``ToolContext``); it is not an argument;
- every other parameter is one argument, under its Python name: ``a: int, b: str = "x"``
  gives an object schema with properties ``a`` and ``b``, where parameters without a
  default are required. The rule has no exception: ``create(item: Item)`` takes
  ``{"item": {...}}``, whatever ``Item`` is (an attrs class, a dataclass, a
  ``TypedDict``, a pydantic model);
- a key that is no parameter is refused (the schema says ``additionalProperties:
  false``), naming the keys the tool knows;
- descriptions come from ``Annotated`` metadata (``Annotated[int, "Maximum results"]``,
  pydantic's ``Field(description=...)``) or, failing that, from the docstring's
  parameter section (Google, Sphinx or NumPy style); constraints from ``Annotated``
  metadata become schema keywords and are enforced (``_constraints``).

The function may be an ``async def`` (awaited in the request's task) or a plain ``def``,
which runs in a worker thread through the *run_sync* given at bind time (the server's
bounded thread limiter; see :func:`bind_tool`).

The strict converter is the validator: arguments are checked and structured in one pass by
generated code, and failures become :class:`ArgumentsError` with one message per problem,
at ``$.arguments.<field>``.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, final

import attrs
import cattrs

from ._codegen import make_structure_fn
from ._constraints import read_metadata
from ._converter import converter
from ._docstrings import param_docs
from ._errors import format_errors
from ._plan import MISSING, FieldPlan, ObjectPlan
from ._results import ResultPlan, plan_result
from ._schema import object_schema_for_plan
from ._types import strip_annotated
from ._validators import validator_for

__all__ = ["ArgumentsError", "RunSync", "ToolBinding", "bind_tool", "is_async_callable"]

CONTEXT_MARKER = "__trimcp_context__"
_ARGUMENTS_PATH = "$.arguments"

RunSync = Callable[[Callable[[], Any]], Awaitable[Any]]
"""Runs a plain function off the event loop's thread and returns its awaitable result
(the server's bounded worker threads; this layer does no I/O of its own)."""


def is_async_callable(fn: object) -> bool:
    """Whether calling *fn* gives an awaitable: an ``async def`` (also behind
    ``functools.partial``) or an object whose ``__call__`` is one."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004  # the method, not callability
    )


class ArgumentsError(Exception):
    """The arguments of a tool call are invalid.

    ``messages`` has one readable line per problem, each naming the field, e.g.
    ``"expected int @ $.arguments.limit"`` or ``"required field missing @ $.arguments.query"``.
    From 2025-11-25 on, the spec wants these reported as a tool execution error
    (``isError: true``) so the model can correct itself.
    """

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


@final
@attrs.frozen(kw_only=True)
class ToolBinding:
    """A tool function bound to its schemas and generated (un)structure code.

    Build with :func:`bind_tool`. ``input_schema`` / ``output_schema`` are what
    ``tools/list`` advertises (treat them as read-only); ``takes_context`` says whether
    :meth:`invoke` passes its *ctx* on.
    """

    fn: Callable[..., Any]
    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    takes_context: bool
    #: ``False`` for a plain ``def``: :meth:`invoke` runs it through ``run_sync``.
    is_async: bool
    _run_sync: RunSync
    #: Validates the arguments first when the tool was given an explicit input schema.
    _check: Callable[[dict[str, Any]], list[str]] | None
    _structure: Callable[[Any, Any], Any]
    _context_param: str | None
    _context_index: int | None  # position among positional-only parameters, if one
    _positional: tuple[tuple[str, Any], ...]  # positional-only parameters: (name, default)
    _result: ResultPlan

    def structure_arguments(
        self, arguments: Mapping[str, Any] | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Validate and structure ``tools/call`` *arguments* into ``(args, kwargs)`` for the
        function (without the context). ``None`` means no arguments.

        Raises:
            ArgumentsError: *arguments* do not fit the parameters.
        """
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            if not isinstance(arguments, Mapping):
                raise ArgumentsError([f"expected object @ {_ARGUMENTS_PATH}"])
            arguments = dict(arguments)
        if self._check is not None:
            problems = self._check(arguments)
            if problems:
                raise ArgumentsError(problems)
        try:
            kwargs: dict[str, Any] = self._structure(arguments, None)
        except cattrs.BaseValidationError as exc:
            messages = format_errors(exc, _ARGUMENTS_PATH)
            hint = _shape_hint(self.input_schema, arguments)
            raise ArgumentsError(messages if hint is None else [*messages, hint]) from None
        if not self._positional:
            return (), kwargs
        args = tuple(kwargs.pop(name, default) for name, default in self._positional)
        return args, kwargs

    def invoke(self, ctx: object, arguments: Mapping[str, Any] | None) -> Awaitable[Any]:
        """Structure *arguments*, then call the function (passing *ctx* if it wants it)
        and return what it returns, for the caller to await (a plain ``def`` runs in a
        worker thread through ``run_sync``).

        A plain function, not a coroutine: a handler that runs for long (parked, say)
        keeps no frame of the binding alive.

        Raises:
            ArgumentsError: *arguments* do not fit the parameters (raised by the call
                itself; the function is not run).
        """
        args, kwargs = self.structure_arguments(arguments)
        if self._context_param is not None:
            if self._context_index is None:
                kwargs[self._context_param] = ctx
            else:
                i = self._context_index
                args = (*args[:i], ctx, *args[i:])
        if self.is_async:
            return self.fn(*args, **kwargs)  # type: ignore[no-any-return]
        return self._run_sync(functools.partial(self.fn, *args, **kwargs))

    def result_to_wire(self, value: Any) -> dict[str, Any]:
        """The ``CallToolResult`` JSON object for a return *value* (see ``_results``)."""
        return self._result.to_wire(value)


def _is_context(annotation: Any) -> bool:
    tp = strip_annotated(annotation)
    tp = typing.get_origin(tp) or tp
    return isinstance(tp, type) and bool(getattr(tp, CONTEXT_MARKER, False))


def bind_tool(
    fn: Callable[..., Any],
    *,
    run_sync: RunSync | None = None,
    input_schema: Mapping[str, Any] | None = None,
) -> ToolBinding:
    """Bind a tool function: read its annotations once, generate its input and output
    schemas and its argument structuring code.

    A plain ``def`` is run by *run_sync* on each call (the server passes its worker
    threads). With an explicit *input_schema* (hand-written, advertised as it is), the
    arguments are validated against it first, then structured into the parameters the
    function has; keys the schema allows and the function does not take are left out.

    Raises:
        TypeError: *fn* is a generator, or a plain ``def`` without *run_sync*; a
            parameter other than the context has no
            annotation, is ``*args`` / ``**kwargs``, or has a type with no JSON mapping;
            annotations cannot be resolved; or more than one context parameter.
    """
    label = getattr(fn, "__qualname__", repr(fn))
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"tool {label}: a generator cannot be a tool; return the value")
    is_async = is_async_callable(fn)
    if not is_async and run_sync is None:
        raise TypeError(f"tool {label}: a plain def needs run_sync (Server provides one)")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(f"tool {label}: cannot resolve annotations: {exc}") from exc
    params = list(inspect.signature(fn).parameters.values())
    context = [p for p in params if p.name in hints and _is_context(hints[p.name])]
    if len(context) > 1:
        raise TypeError(f"tool {label}: more than one context parameter")
    arg_params = [p for p in params if p not in context]
    for p in arg_params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(
                f"tool {label}: parameter {p.name!r}: *args / **kwargs cannot be tool arguments"
            )
        if p.name not in hints:
            raise TypeError(f"tool {label}: parameter {p.name!r} has no type annotation")
    positional = [p for p in params if p.kind is p.POSITIONAL_ONLY]
    explicit = dict(input_schema) if input_schema is not None else None
    try:
        # Schemas first: they reject unsupported types with the clearest message.
        plan = _plan_parameters(label, arg_params, hints, param_docs(inspect.getdoc(fn)))
        if explicit is not None:
            plan = attrs.evolve(plan, forbid_extra=False)
        generated = object_schema_for_plan(plan)
        structure = make_structure_fn(plan, converter, None, lambda _: False)
        check = None if explicit is None else _schema_check(explicit)
        result = plan_result(hints.get("return", Any), owner=f"tool {label}")
    except (TypeError, cattrs.errors.StructureHandlerNotFoundError) as exc:
        raise TypeError(f"tool {label}: {exc}") from exc
    return ToolBinding(
        fn=fn,
        name=getattr(fn, "__name__", label),
        description=inspect.getdoc(fn),
        input_schema=generated if explicit is None else explicit,
        output_schema=result.output_schema,
        takes_context=bool(context),
        is_async=is_async,
        run_sync=run_sync or _never,
        check=check,
        structure=structure,
        context_param=context[0].name if context else None,
        context_index=positional.index(context[0])
        if context and context[0] in positional
        else None,
        positional=tuple(
            (p.name, MISSING if p.default is p.empty else p.default)
            for p in positional
            if p not in context
        ),
        result=result,
    )


def _schema_check(schema: dict[str, Any]) -> Callable[[dict[str, Any]], list[str]]:
    """Validation of arguments against an explicit schema, one message per problem."""
    try:
        validator = validator_for(schema)
    except Exception as exc:
        raise TypeError(f"the input schema is not a valid JSON Schema: {exc}") from exc

    def check(arguments: dict[str, Any]) -> list[str]:
        return [
            f"{error.message} @ {_ARGUMENTS_PATH}"
            + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in error.path)
            for error in validator.iter_errors(arguments)
        ]

    return check


async def _never(fn: Callable[[], Any]) -> Any:
    raise AssertionError("an async tool never runs through run_sync")


def _plan_parameters(
    label: str, params: list[inspect.Parameter], hints: dict[str, Any], docs: dict[str, str]
) -> ObjectPlan:
    fields = []
    for p in params:
        annotation = hints[p.name]
        required = p.default is p.empty
        fields.append(
            FieldPlan(
                name=p.name,
                attribute=p.name,
                wire=p.name,
                type=annotation,
                required=required,
                default=MISSING if required else p.default,
                omit_none=p.default is None,
                description=read_metadata(annotation).description or docs.get(p.name),
            )
        )
    return ObjectPlan(owner=f"tool {label}", fields=tuple(fields), forbid_extra=True)


def _shape_hint(schema: dict[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """When the arguments look like the members of an object parameter given at the top
    level (``{"name": ...}`` for ``create(item: Item)``), say where they belong."""
    properties: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name in arguments:
            continue
        members = properties.get(name, {}).get("properties")
        if isinstance(members, dict) and any(key in members for key in arguments):
            inner = ", ".join(f'"{key}": ...' for key in arguments if key in members)
            return f'{name} is one argument: pass {{"{name}": {{{inner}}}}}'
    return None

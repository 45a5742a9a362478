"""Typed tools: bind an ``async def`` once, then structure arguments and write results fast.

Parameter forms (decided at bind time from ``typing.get_type_hints``, never per call):

- a parameter annotated with a class that has a truthy ``__trimcp_context__`` attribute
  receives the request context (the server layer's ``ToolContext``); it is not an argument;
- exactly one other parameter annotated with an attrs class: that class *is* the
  arguments object (its schema is the input schema);
- otherwise every other parameter is one argument: ``a: int, b: str = "x"`` gives an
  object schema with camelCase property names (as for attrs classes) where parameters
  without a default are required; ``Annotated[int, "text"]`` adds a description.

The strict converter is the validator: arguments are checked and structured in one pass by
generated code, and failures become :class:`ArgumentsError` with one message per problem,
at ``$.arguments.<field>``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, final

import attrs
import cattrs

from ._codegen import make_structure_fn
from ._converter import converter
from ._errors import format_errors
from ._plan import MISSING, FieldPlan, ObjectPlan, wire_name
from ._results import ResultPlan, plan_result
from ._schema import json_schema_for, object_schema_for_plan
from ._types import annotated_description, is_attrs, strip_annotated

__all__ = ["ArgumentsError", "ToolBinding", "bind_tool"]

CONTEXT_MARKER = "__trimcp_context__"
_ARGUMENTS_PATH = "$.arguments"


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

    fn: Callable[..., Awaitable[Any]]
    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    takes_context: bool
    _structure: Callable[[Any, Any], Any]
    _arguments_type: Any  # the attrs class of the arguments-object form, else None
    _object_param: str | None  # parameter receiving the arguments object
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
        try:
            value = self._structure(arguments, self._arguments_type)
        except cattrs.BaseValidationError as exc:
            raise ArgumentsError(format_errors(exc, _ARGUMENTS_PATH)) from None
        kwargs: dict[str, Any] = (
            value if self._object_param is None else {self._object_param: value}
        )
        if not self._positional:
            return (), kwargs
        args = tuple(kwargs.pop(name, default) for name, default in self._positional)
        return args, kwargs

    def invoke(self, ctx: object, arguments: Mapping[str, Any] | None) -> Awaitable[Any]:
        """Structure *arguments*, then call the function (passing *ctx* if it wants it)
        and return what it returns, for the caller to await.

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
        return self.fn(*args, **kwargs)

    def result_to_wire(self, value: Any) -> dict[str, Any]:
        """The ``CallToolResult`` JSON object for a return *value* (see ``_results``)."""
        return self._result.to_wire(value)


def _is_context(annotation: Any) -> bool:
    tp = strip_annotated(annotation)
    tp = typing.get_origin(tp) or tp
    return isinstance(tp, type) and bool(getattr(tp, CONTEXT_MARKER, False))


def bind_tool(fn: Callable[..., Awaitable[Any]]) -> ToolBinding:
    """Bind an ``async def`` tool function: read its annotations once, generate its input
    and output schemas and its argument structuring code.

    Raises:
        TypeError: *fn* is not an ``async def``; a parameter other than the context has no
            annotation, is ``*args`` / ``**kwargs``, or has a type with no JSON mapping;
            annotations cannot be resolved; or more than one context parameter.
    """
    label = getattr(fn, "__qualname__", repr(fn))
    if not inspect.iscoroutinefunction(fn):
        raise TypeError(f"tool {label}: bind_tool() needs an `async def` function")
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
    object_form = len(arg_params) == 1 and is_attrs(strip_annotated(hints[arg_params[0].name]))
    try:
        # Schemas first: they reject unsupported types with the clearest message.
        if object_form:
            arguments_type = strip_annotated(hints[arg_params[0].name])
            input_schema = json_schema_for(arguments_type)
            structure = converter.get_structure_hook(arguments_type)
        else:
            arguments_type = None
            plan = _plan_parameters(label, arg_params, hints)
            input_schema = object_schema_for_plan(plan)
            structure = make_structure_fn(plan, converter, None, lambda _: False)
        result = plan_result(hints.get("return", Any))
    except (TypeError, cattrs.errors.StructureHandlerNotFoundError) as exc:
        raise TypeError(f"tool {label}: {exc}") from exc
    return ToolBinding(
        fn=fn,
        name=getattr(fn, "__name__", label),
        description=inspect.getdoc(fn),
        input_schema=input_schema,
        output_schema=result.output_schema,
        takes_context=bool(context),
        structure=structure,
        arguments_type=arguments_type,
        object_param=arg_params[0].name if object_form else None,
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


def _plan_parameters(
    label: str, params: list[inspect.Parameter], hints: dict[str, Any]
) -> ObjectPlan:
    fields = []
    for p in params:
        annotation = hints[p.name]
        required = p.default is p.empty
        fields.append(
            FieldPlan(
                name=p.name,
                attribute=p.name,
                wire=wire_name(p.name),
                type=annotation,
                required=required,
                default=MISSING if required else p.default,
                omit_none=p.default is None,
                description=annotated_description(annotation),
            )
        )
    return ObjectPlan(owner=label, fields=tuple(fields))

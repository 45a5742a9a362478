"""The server's prompts: registration, listing per revision, and rendering.

A prompt is a function (``async def``, or a plain ``def`` run in a worker thread; see
``_workers``) whose parameters are its arguments. The spec's prompt arguments are
strings; a parameter typed otherwise (``count: int``, ``when: datetime.date``,
``tags: list[str]``) is read from its string by :func:`trimcp.binding.text_reader` (as
it is for string-like types, else as JSON). A parameter without a default is a required
argument; ``Annotated[T, "text"]`` (or the docstring's parameter section) gives it a
description. A parameter annotated :class:`ToolContext` receives the request's context
instead. The function returns

- a ``str``: one user text message;
- a list of :class:`~trimcp.protocol.PromptMessage`, content blocks (each a user
  message) or strings (user text), in any mix;
- a :class:`~trimcp.protocol.GetPromptResult`, sent as it is.

``prompts/get`` naming an unknown prompt, leaving out a required argument, passing one
the prompt does not declare or one that does not read as its type is ``-32602 Invalid
params`` naming it. An exception inside
the prompt is logged and answered ``-32603`` (an :class:`~trimcp.dispatch.McpError`
travels as itself).
"""

from __future__ import annotations

import inspect
import logging
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, final

import attrs

from trimcp.binding import json_schema_for, param_docs, read_metadata, text_reader, unstructure
from trimcp.dispatch import McpError
from trimcp.protocol import (
    AudioContent,
    Completion,
    EmbeddedResource,
    Feature,
    GetPromptResult,
    Icon,
    ImageContent,
    Prompt,
    PromptArgument,
    PromptMessage,
    ResourceLink,
    TextContent,
    supports,
)
from trimcp.wire import INVALID_PARAMS

from ._context import ToolContext
from ._workers import WorkerThreads

__all__ = ["CompletionProvider", "PromptRegistry", "RegisteredPrompt"]

logger = logging.getLogger("trimcp.server")

CompletionProvider = Callable[[str, Mapping[str, str]], Awaitable[Sequence[str] | Completion]]
"""``async (value, context_arguments) -> values``: suggestions for one argument.

Return the matching values (the server sends the first 100 with ``total`` and
``hasMore``), or a :class:`~trimcp.protocol.Completion` to state ``total`` / ``hasMore``
yourself."""

_BLOCKS = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)

#: Members of a prompt (and of its arguments) and the feature that introduced them.
_GATED_MEMBERS = (
    ("title", Feature.TITLES),
    ("icons", Feature.ICONS),
    ("_meta", Feature.META_ON_TYPES),
)


def _keep(version: str, key: str) -> bool:
    return all(key != name or supports(version, feature) for name, feature in _GATED_MEMBERS)


def _gate(version: str, value: dict[str, Any]) -> dict[str, Any]:
    return {key: item for key, item in value.items() if _keep(version, key)}


@final
@attrs.frozen
class RegisteredPrompt:
    """A prompt, its function and how to call it."""

    prompt: Prompt
    fn: Callable[..., Any]
    #: The argument parameters, in declaration order, with the reader of each.
    arguments: tuple[str, ...]
    readers: dict[str, Callable[[str], Any]]
    required: frozenset[str]
    #: The parameter that receives the :class:`ToolContext`, if any.
    context_param: str | None
    #: Completion providers given at registration, by argument name.
    completers: dict[str, CompletionProvider] = attrs.field(factory=dict, eq=False)
    wire: dict[str, dict[str, Any]] = attrs.field(factory=dict, eq=False)

    def to_wire(self, version: str) -> dict[str, Any]:
        cached = self.wire.get(version)
        if cached is None:
            cached = _gate(version, unstructure(self.prompt))
            if "arguments" in cached:
                cached["arguments"] = [_gate(version, arg) for arg in cached["arguments"]]
            self.wire[version] = cached
        return cached

    async def render(
        self, ctx: ToolContext, arguments: Mapping[str, str], workers: WorkerThreads
    ) -> GetPromptResult:
        """Check ``arguments`` against the declaration, call the prompt, normalise."""
        name = self.prompt.name
        missing = [arg for arg in self.arguments if arg in self.required and arg not in arguments]
        if missing:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: prompt {name} needs argument(s) {', '.join(missing)}",
            )
        unknown = sorted(set(arguments) - set(self.arguments))
        if unknown:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: prompt {name} has no argument(s) {', '.join(unknown)}",
            )
        kwargs: dict[str, Any] = {}
        for arg, text in arguments.items():
            if not isinstance(text, str):
                raise McpError(
                    INVALID_PARAMS, f"Invalid params: prompt {name} argument {arg}: expected str"
                )
            try:
                kwargs[arg] = self.readers[arg](text)
            except ValueError as exc:
                raise McpError(
                    INVALID_PARAMS, f"Invalid params: prompt {name} argument {arg}: {exc}"
                ) from None
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        value = await workers.call(self.fn, **kwargs)
        return to_prompt_result(value, self.prompt.description, name)


def to_prompt_result(value: object, description: str | None, name: str) -> GetPromptResult:
    """Normalise what a prompt function returned (see the module doc)."""
    if isinstance(value, GetPromptResult):
        return value
    if isinstance(value, str):
        items: list[object] = [value]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise TypeError(f"prompt {name} returned {type(value).__name__}, not str or a list")
    messages: list[PromptMessage] = []
    for item in items:
        if isinstance(item, PromptMessage):
            messages.append(item)
        elif isinstance(item, str):
            messages.append(PromptMessage(role="user", content=TextContent(text=item)))
        elif isinstance(item, _BLOCKS):
            messages.append(PromptMessage(role="user", content=item))
        else:
            raise TypeError(f"prompt {name} returned a {type(item).__name__} message")
    return GetPromptResult(messages=messages, description=description)


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) is Annotated:
        tp = tp.__origin__
    return tp


def _is_context(tp: Any) -> bool:
    tp = _strip(tp)
    return isinstance(tp, type) and issubclass(tp, ToolContext)


@final
@attrs.frozen
class PromptSignature:
    """What :func:`bind_prompt` reads from a prompt function's signature."""

    declared: list[PromptArgument]
    names: tuple[str, ...]
    readers: dict[str, Callable[[str], Any]]
    required: frozenset[str]
    context_param: str | None


def bind_prompt(fn: Callable[..., Any]) -> PromptSignature:
    """Read a prompt function's arguments from its signature.

    Raises:
      TypeError: ``fn`` is a generator, a parameter is positional-only or variadic, or its
        type cannot be read from a string (no JSON mapping).
    """
    label = getattr(fn, "__name__", repr(fn))
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"prompt {label}: a generator cannot be a prompt; return the messages")
    hints = typing.get_type_hints(fn, include_extras=True)
    docs = param_docs(inspect.getdoc(fn))
    declared: list[PromptArgument] = []
    names: list[str] = []
    readers: dict[str, Callable[[str], Any]] = {}
    required: set[str] = set()
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(f"prompt {label}: parameter {param.name} must be named")
        hint = hints.get(param.name, str)
        if _is_context(hint):
            context_param = param.name
            continue
        try:
            json_schema_for(hint, owner=f"prompt {label}")  # refuses types with no mapping
        except TypeError as exc:
            raise TypeError(f"prompt {label}: argument {param.name}: {exc}") from None
        readers[param.name] = text_reader(hint)
        is_required = param.default is inspect.Parameter.empty
        if is_required:
            required.add(param.name)
        names.append(param.name)
        description = read_metadata(hint).description or docs.get(param.name)
        declared.append(
            PromptArgument(name=param.name, description=description, required=is_required)
        )
    return PromptSignature(declared, tuple(names), readers, frozenset(required), context_param)


@final
class PromptRegistry:
    """The prompts of one server, in registration order (the order ``prompts/list`` uses)."""

    def __init__(self, on_change: Callable[[], None], workers: WorkerThreads) -> None:
        self._prompts: dict[str, RegisteredPrompt] = {}
        self._order: list[RegisteredPrompt] = []
        self._on_change = on_change
        self._workers = workers

    def __len__(self) -> int:
        return len(self._prompts)

    def __contains__(self, name: object) -> bool:
        return name in self._prompts

    def add(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        complete: Mapping[str, CompletionProvider] | None = None,
    ) -> RegisteredPrompt:
        """Bind and register ``fn``; a prompt of the same name is replaced.

        ``complete`` maps argument names to completion providers.
        """
        signature = bind_prompt(fn)
        unknown = sorted(set(complete or {}) - set(signature.names))
        if unknown:
            raise ValueError(f"complete= names unknown argument(s) {', '.join(unknown)}")
        doc = inspect.getdoc(fn)
        prompt = Prompt(
            name=name or fn.__name__,
            title=title,
            description=description if description is not None else doc,
            arguments=signature.declared or None,
            icons=icons,
            meta=meta,
        )
        registered = RegisteredPrompt(
            prompt,
            fn,
            signature.names,
            signature.readers,
            signature.required,
            signature.context_param,
            completers=dict(complete or {}),
        )
        if prompt.name in self._prompts:
            self._order.remove(self._prompts[prompt.name])
        self._prompts[prompt.name] = registered
        self._order.append(registered)
        self._on_change()
        return registered

    def remove(self, name: str) -> None:
        """Unregister a prompt (``KeyError`` if there is none of that name)."""
        registered = self._prompts.pop(name)
        self._order.remove(registered)
        self._on_change()

    def get(self, name: str) -> RegisteredPrompt | None:
        return self._prompts.get(name)

    def ordered(self) -> list[RegisteredPrompt]:
        return self._order

    def has_completers(self) -> bool:
        return any(p.completers for p in self._order)

    async def render(self, ctx: ToolContext, name: str, arguments: Mapping[str, str]) -> Any:
        """Answer ``prompts/get`` (the wire form of the result)."""
        registered = self._prompts.get(name)
        if registered is None:
            raise McpError(INVALID_PARAMS, f"Invalid params: unknown prompt: {name}")
        return unstructure(await registered.render(ctx, arguments, self._workers))

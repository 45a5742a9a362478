"""The server's resources: static resources, URI templates, reading and subscriptions.

A static resource is one URI and a function that produces its contents (``async def``,
or a plain ``def`` run in a worker thread: see ``_workers``); a template
is an RFC 6570 pattern (:class:`UriTemplate`) whose function receives the matched
variables as typed parameters (``str``, ``int``, ``float``, ``bool``, or ``list[str]``
for exploded variables; anything else is refused at registration). A parameter
annotated with the context class (``ToolContext``) receives the request's context.

Reading looks a URI up among the static resources first (a dict lookup), then tries
each template in registration order; matching is linear-time and refuses traversal (see
``_uri_template``). A URI nobody serves, or whose variables do not convert to the
parameter types, is ``-32002 Resource not found`` with the URI in ``data``.

What a function returns becomes ``contents``: ``str`` is text, ``bytes`` a base64 blob
(both carry the resource's MIME type), contents objects pass as they are, a list mixes
them, and a :class:`ReadResourceResult` is the whole answer.

Subscriptions are per session (a weak map, so an ended session leaves nothing behind).
"""

from __future__ import annotations

import base64
import inspect
import logging
import types
import typing
import weakref
from collections.abc import Callable
from typing import Any, final

import attrs

from trimcp.binding import unstructure
from trimcp.dispatch import McpError
from trimcp.nursery import Session
from trimcp.protocol import (
    Annotations,
    BlobResourceContents,
    Icon,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
)
from trimcp.wire import INTERNAL_ERROR, RESOURCE_NOT_FOUND

from ._uri_template import UriTemplate
from ._workers import WorkerThreads

__all__ = ["RegisteredResource", "ResourceRegistry", "resource_not_found"]

logger = logging.getLogger("trimcp.server")

_CONTEXT_MARKER = "__trimcp_context__"
_SCALARS: dict[Any, Callable[[str], Any]] = {
    str: str,
    int: int,
    float: float,
    bool: lambda text: {"true": True, "false": False}[text.lower()],
}


def resource_not_found(uri: str) -> McpError:
    """The handshake era's error for a URI the server does not serve."""
    return McpError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})


class _NoMatch(Exception):
    """A template variable did not convert to its parameter's type."""


def _converter_for(annotation: Any, label: str, name: str) -> Callable[[Any], Any]:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return _converter_for(members[0], label, name)
    if origin is list and args in ((str,), ()):
        return lambda value: [value] if isinstance(value, str) else list(value)
    scalar = _SCALARS.get(annotation)
    if scalar is not None:

        def convert(value: Any) -> Any:
            if not isinstance(value, str):
                raise _NoMatch(name)
            try:
                return scalar(value)
            except (KeyError, ValueError):
                raise _NoMatch(name) from None

        return convert
    raise TypeError(f"resource {label}: parameter {name!r}: unsupported type {annotation!r}")


@final
@attrs.frozen
class _Binding:
    """How to call a resource function: its context parameter and converted variables."""

    fn: Callable[..., Any]
    context_param: str | None
    params: tuple[tuple[str, Callable[[Any], Any], bool], ...]  # name, convert, required
    workers: WorkerThreads

    async def call(self, ctx: object, variables: dict[str, Any]) -> Any:
        kwargs: dict[str, Any] = {}
        for name, convert, required in self.params:
            if name in variables:
                kwargs[name] = convert(variables[name])
            elif required:
                raise _NoMatch(name)
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        return await self.workers.call(self.fn, **kwargs)


def _bind(fn: Callable[..., Any], variables: tuple[str, ...], workers: WorkerThreads) -> _Binding:
    label = getattr(fn, "__qualname__", repr(fn))
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"resource {label}: a generator cannot be a resource; return its contents")
    try:
        hints = typing.get_type_hints(fn)
    except Exception as exc:
        raise TypeError(f"resource {label}: cannot resolve annotations: {exc}") from exc
    context: str | None = None
    params: list[tuple[str, Callable[[Any], Any], bool]] = []
    for p in inspect.signature(fn).parameters.values():
        annotation = hints.get(p.name, str)
        if getattr(annotation, _CONTEXT_MARKER, False):
            context = p.name
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise TypeError(f"resource {label}: parameter {p.name!r} must be a keyword")
        if p.name not in variables:
            raise TypeError(f"resource {label}: parameter {p.name!r} is not a template variable")
        params.append((p.name, _converter_for(annotation, label, p.name), p.default is p.empty))
    return _Binding(fn, context, tuple(params), workers)


def _contents(uri: str, mime_type: str | None, value: Any) -> list[Any]:
    if isinstance(value, str):
        return [TextResourceContents(uri=uri, text=value, mime_type=mime_type)]
    if isinstance(value, bytes | bytearray | memoryview):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [BlobResourceContents(uri=uri, blob=blob, mime_type=mime_type)]
    if isinstance(value, TextResourceContents | BlobResourceContents):
        return [value]
    if isinstance(value, list | tuple):
        return [item for part in value for item in _contents(uri, mime_type, part)]
    raise TypeError(f"a resource function returned {type(value).__name__}")


@final
@attrs.frozen
class RegisteredResource:
    """A static resource or a template, with its function."""

    description: Resource | ResourceTemplate
    template: UriTemplate | None
    binding: _Binding

    @property
    def mime_type(self) -> str | None:
        return self.description.mime_type

    async def read(self, ctx: object, uri: str, variables: dict[str, Any]) -> dict[str, Any]:
        value = await self.binding.call(ctx, variables)
        if isinstance(value, ReadResourceResult):
            return unstructure(value)  # type: ignore[no-any-return]
        return unstructure(ReadResourceResult(contents=_contents(uri, self.mime_type, value)))  # type: ignore[no-any-return]


@final
class ResourceRegistry:
    """Static resources (by URI) and templates, in registration order."""

    def __init__(self, on_change: Callable[[], None], workers: WorkerThreads) -> None:
        self._workers = workers
        self._static: dict[str, RegisteredResource] = {}
        self._templates: dict[str, RegisteredResource] = {}
        self._subscriptions: weakref.WeakKeyDictionary[Session, set[str]] = (
            weakref.WeakKeyDictionary()
        )
        self._on_change = on_change

    def __len__(self) -> int:
        return len(self._static) + len(self._templates)

    def add(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> RegisteredResource:
        """Register a static resource at ``uri``; one at the same URI is replaced."""
        resource = Resource(
            uri=uri,
            name=name or str(getattr(fn, "__name__", uri)),
            title=title,
            description=description if description is not None else inspect.getdoc(fn),
            mime_type=mime_type,
            size=size,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        registered = RegisteredResource(resource, None, _bind(fn, (), self._workers))
        self._static.pop(uri, None)
        self._static[uri] = registered
        self._on_change()
        return registered

    def add_template(
        self,
        fn: Callable[..., Any],
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> RegisteredResource:
        """Register a template (``UriTemplateError`` if malformed); same text replaces."""
        template = UriTemplate(uri_template)
        described = ResourceTemplate(
            uri_template=uri_template,
            name=name or str(getattr(fn, "__name__", uri_template)),
            title=title,
            description=description if description is not None else inspect.getdoc(fn),
            mime_type=mime_type,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        registered = RegisteredResource(
            described, template, _bind(fn, template.variables, self._workers)
        )
        self._templates.pop(uri_template, None)
        self._templates[uri_template] = registered
        self._on_change()
        return registered

    def remove(self, uri: str) -> None:
        """Unregister a static resource or a template (``KeyError`` if neither)."""
        if self._static.pop(uri, None) is None:
            del self._templates[uri]
        self._on_change()

    def resources(self) -> list[Resource]:
        return [r.description for r in self._static.values() if isinstance(r.description, Resource)]

    def templates(self) -> list[ResourceTemplate]:
        return [
            r.description
            for r in self._templates.values()
            if isinstance(r.description, ResourceTemplate)
        ]

    def has(self, uri: str) -> bool:
        """Whether ``uri`` is served (statically or by a template)."""
        return self._find(uri) is not None

    def key_for(self, uri: str) -> str | None:
        """The URI or template under which ``uri`` is served, or ``None``."""
        found = self._find(uri)
        if found is None:
            return None
        description = found[0].description
        return description.uri if isinstance(description, Resource) else description.uri_template

    def _find(self, uri: str) -> tuple[RegisteredResource, dict[str, Any]] | None:
        static = self._static.get(uri)
        if static is not None:
            return static, {}
        for registered in self._templates.values():
            assert registered.template is not None
            variables = registered.template.match(uri)
            if variables is not None:
                return registered, variables
        return None

    async def read(self, ctx: object, uri: str) -> dict[str, Any]:
        """Answer ``resources/read`` for ``uri``."""
        found = self._find(uri)
        if found is None:
            raise resource_not_found(uri)
        registered, variables = found
        try:
            return await registered.read(ctx, uri, variables)
        except _NoMatch:
            raise resource_not_found(uri) from None
        except McpError:
            raise
        except Exception:
            if registered.template is None:
                logger.exception("resource %s raised", uri)
                raise McpError(INTERNAL_ERROR, "Resource read failed", {"uri": uri}) from None
            # Which template failed is the server's own description, safe to send; what
            # it raised (a traceback, a message with internals) only goes to the log.
            pattern = registered.template.template
            logger.exception("resource template %s raised reading %s", pattern, uri)
            raise McpError(
                INTERNAL_ERROR,
                f"Resource read failed: the template {pattern} raised an error",
                {"uri": uri, "uriTemplate": pattern},
            ) from None

    # -- subscriptions -------------------------------------------------------------
    def subscribe(self, session: Session, uri: str) -> None:
        self._subscriptions.setdefault(session, set()).add(uri)

    def unsubscribe(self, session: Session, uri: str) -> None:
        uris = self._subscriptions.get(session)
        if uris is not None:
            uris.discard(uri)

    def subscribers(self, uri: str) -> list[Session]:
        """Sessions subscribed to ``uri`` (exactly, or to a prefix it is a sub-resource of)."""
        return [
            session
            for session, uris in list(self._subscriptions.items())
            if uri in uris or any(uri.startswith(u.rstrip("/") + "/") for u in uris)
        ]

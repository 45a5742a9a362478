"""The prompts half of :class:`~trimcp.server.Server`: decorators and ``prompts/*``,
``completion/complete``.

``Server`` inherits :class:`PromptRoutes`, as it inherits ``ResourceRoutes``: the
registration API (``@server.prompt``, ``@server.completion``), the list-changed notice,
and the request handlers stay apart from the tools and lifecycle code. The ``prompts``
capability is declared only when a prompt is registered or ``declare_prompts`` is set;
without it every ``prompts/*`` request is ``-32601``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext
from trimcp.protocol import HANDSHAKE_VERSIONS, CompleteParams, GetPromptParams, Icon
from trimcp.wire import METHOD_NOT_FOUND

from ._auth import ScopeTable
from ._completion import CompletionKind, CompletionRegistry
from ._context import ToolContext
from ._downgrade import fit_prompt_result
from ._pagination import page_result, paginate
from ._prompts import CompletionProvider, PromptRegistry

__all__ = ["PromptRoutes"]

F = TypeVar("F", bound=Callable[..., Any])


class PromptRoutes:
    """Prompt and completion registration and handlers, mixed into ``Server``."""

    prompts: PromptRegistry
    declared_scopes: ScopeTable
    completions: CompletionRegistry
    page_size: int

    # ------------------------------------------------------------------ registration
    def prompt(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        complete: dict[str, CompletionProvider] | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Callable[[F], F]:
        """Register a function (``async def``, or a plain ``def`` run in a worker thread) as
        a prompt; its ``str`` parameters are the prompt's
        arguments (see :mod:`trimcp.server._prompts`). ``complete`` maps argument names
        to completion providers. With authorization, ``scopes`` are the OAuth scopes
        getting it needs."""

        def register(func: F) -> F:
            registered = self.prompts.add(
                func, name=name, title=title, description=description, icons=icons,
                meta=meta, complete=complete,
            )  # fmt: skip
            self.declared_scopes.declare("prompt", registered.prompt.name, scopes)
            return func

        return register

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt; live sessions get ``notifications/prompts/list_changed``."""
        self.prompts.remove(name)

    def completion(
        self, kind: CompletionKind, ref: str, argument: str
    ) -> Callable[[CompletionProvider], CompletionProvider]:
        """Register ``async (value, context_arguments) -> list[str]`` as the completion
        of ``argument`` of prompt ``ref`` (``kind="prompt"``) or of variable ``argument``
        of URI template ``ref`` (``kind="resource"``)."""

        def register(func: CompletionProvider) -> CompletionProvider:
            self.completions.add(kind, ref, argument, func)
            return func

        return register

    # ------------------------------------------------------------------ handlers
    async def _list_prompts(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        if ctx.session.server_capabilities.prompts is None:
            raise McpError(METHOD_NOT_FOUND, "Method not found: prompts/list")
        cursor = params.get("cursor") if isinstance(params, dict) else None
        page, next_cursor = paginate("prompts", self.prompts.ordered(), cursor, self.page_size)
        version = ctx.session.protocol_version or HANDSHAKE_VERSIONS[-1]
        return page_result("prompts", [prompt.to_wire(version) for prompt in page], next_cursor)

    async def _get_prompt(self, ctx: HandlerContext, params: GetPromptParams) -> Any:
        if ctx.session.server_capabilities.prompts is None:
            raise McpError(METHOD_NOT_FOUND, "Method not found: prompts/get")
        result = await self.prompts.render(ToolContext(ctx), params.name, params.arguments or {})
        return fit_prompt_result(ctx.session.protocol_version, result)

    async def _complete(self, ctx: HandlerContext, params: CompleteParams) -> dict[str, Any]:
        if ctx.session.server_capabilities.completions is None:
            raise McpError(METHOD_NOT_FOUND, "Method not found: completion/complete")
        return await self.completions.complete(params, ctx.session.protocol_version)

"""The server's completion: ``completion/complete`` for prompt arguments and
resource-template variables.

Providers are registered per (reference, argument): for a prompt argument either with
``complete=`` on the prompt decorator or with ``@server.completion("prompt", name, arg)``,
for a template variable with ``@server.completion("resource", uri_template, variable)``.
A provider is ``async (value, context_arguments) -> list[str]``; the answer carries at
most :data:`~trimcp.protocol.MAX_COMPLETION_VALUES` values, with ``total`` and
``hasMore`` telling the client how many there were.

What is not known is answered, not refused, except where the spec names an error: a
``ref/prompt`` naming no prompt of this server is ``-32602`` (the spec's "invalid prompt
name"); an argument or template without a provider gets an empty completion, because
"nothing to suggest" is a valid answer and clients ask for completions as the user
types. ``context.arguments`` reaches providers only from 2025-06-18 on, the revision that
introduced it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, final

from trimcp.binding import unstructure
from trimcp.dispatch import McpError
from trimcp.protocol import (
    MAX_COMPLETION_VALUES,
    CompleteParams,
    CompleteResult,
    Completion,
    Feature,
    PromptReference,
    supports,
)
from trimcp.wire import INVALID_PARAMS

from ._prompts import CompletionProvider, PromptRegistry

__all__ = ["CompletionRegistry", "cap_completion"]

logger = logging.getLogger("trimcp.server")

CompletionKind = Literal["prompt", "resource"]


def cap_completion(found: Sequence[str] | Completion) -> Completion:
    """Bound a provider's answer to the spec's 100 values, keeping count of the rest."""
    if isinstance(found, Completion):
        if len(found.values) <= MAX_COMPLETION_VALUES:
            return found
        total = found.total if found.total is not None else len(found.values)
        return Completion(values=found.values[:MAX_COMPLETION_VALUES], total=total, has_more=True)
    if isinstance(found, str):
        raise TypeError("a completion provider must return a list of str, not a str")
    values = list(found)
    return Completion(
        values=values[:MAX_COMPLETION_VALUES],
        total=len(values),
        has_more=len(values) > MAX_COMPLETION_VALUES,
    )


_EMPTY = Completion(values=[], total=0, has_more=False)


@final
class CompletionRegistry:
    """Completion providers of one server, keyed by (kind, reference, argument)."""

    def __init__(self, prompts: PromptRegistry) -> None:
        self._prompts = prompts
        self._providers: dict[tuple[CompletionKind, str, str], CompletionProvider] = {}

    def __len__(self) -> int:
        return len(self._providers)

    def add(
        self, kind: CompletionKind, ref: str, argument: str, provider: CompletionProvider
    ) -> None:
        """Register ``provider`` for ``argument`` of prompt / URI template ``ref``."""
        if kind not in ("prompt", "resource"):
            raise ValueError(f"completion kind must be 'prompt' or 'resource', not {kind!r}")
        self._providers[(kind, ref, argument)] = provider

    def remove(self, kind: CompletionKind, ref: str, argument: str) -> None:
        """Unregister a provider (``KeyError`` if there is none)."""
        del self._providers[(kind, ref, argument)]

    def _provider(self, params: CompleteParams) -> CompletionProvider | None:
        ref = params.ref
        name = params.argument.name
        if isinstance(ref, PromptReference):
            registered = self._prompts.get(ref.name)
            if registered is None:
                raise McpError(INVALID_PARAMS, f"Invalid params: unknown prompt: {ref.name}")
            return registered.completers.get(name) or self._providers.get(
                ("prompt", ref.name, name)
            )
        return self._providers.get(("resource", ref.uri, name))

    async def complete(self, params: CompleteParams, version: str | None) -> dict[str, Any]:
        """Answer ``completion/complete`` (the wire form of the result)."""
        provider = self._provider(params)
        if provider is None:
            completion = _EMPTY
        else:
            context: Mapping[str, str] = {}
            given = params.context.arguments if params.context is not None else None
            if given and (version is None or supports(version, Feature.COMPLETION_CONTEXT)):
                context = given
            completion = cap_completion(await provider(params.argument.value, context))
        return unstructure(CompleteResult(completion=completion))  # type: ignore[no-any-return]

"""The client's answers to ``elicitation/create`` in both modes, and
``notifications/elicitation/complete``.

``open_client(elicitation=...)`` takes either a plain handler ``async (ctx, ElicitParams)
-> ElicitResult`` (form mode, as before) or an :class:`Elicitation`, which names a
handler per mode:

* ``form``: ``async (ctx, FormRequest) -> ElicitResult``. The request carries the typed
  :class:`~trimcp.client.ElicitationForm`; ``request.accept(values)`` builds the answer.
  An accepted answer is checked against the form before it is sent, and with
  ``fill_defaults`` the fields the handler left out get their schema ``default``.
* ``url`` (2025-11-25+): ``async (ctx, ElicitUrlParams) -> ElicitResult``; accepting means
  the user agreed to open the URL (``content`` is never sent in URL mode).
* ``on_complete``: ``async (elicitation_id) -> None`` for
  ``notifications/elicitation/complete``; ids are also kept (the last
  :data:`MAX_COMPLETED_IDS`) so :meth:`Elicitation.wait_complete` can wait for one, e.g.
  after a call failed with :class:`~trimcp.UrlElicitationRequiredError` (``-32042``).

The capability declared follows the handlers: ``form`` only is ``{}`` (what every
revision understands), ``url`` adds ``{"url": {}}`` and then ``form`` is named
explicitly. A request for a mode without a handler, or (for an :class:`Elicitation`) a
form schema outside the restriction, is answered ``-32602``. A plain handler gets the
params and answers as they are, unchecked, as it always did.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

import attrs
import trio

from trimcp.binding import structure, unstructure
from trimcp.dispatch import McpError, Registry
from trimcp.nursery import HandlerContext, Session
from trimcp.protocol import ElicitationCapability, ElicitParams, ElicitResult, ElicitUrlParams
from trimcp.wire import INVALID_PARAMS

from ._form import ElicitationForm, FormSchemaError

__all__ = [
    "MAX_COMPLETED_IDS",
    "Elicitation",
    "FormHandler",
    "FormRequest",
    "UrlHandler",
    "install_elicitation",
]

#: Completed elicitation ids an :class:`Elicitation` remembers.
MAX_COMPLETED_IDS: Final = 256


@final
@attrs.frozen
class FormRequest:
    """A form-mode elicitation, typed."""

    message: str
    form: ElicitationForm
    params: ElicitParams
    fill_defaults: bool = False

    def accept(self, content: dict[str, Any] | None = None) -> ElicitResult:
        """Accept with ``content`` (defaults filled in when the client asked for that);
        ``ValueError`` if it does not fit the form."""
        answer = self.form.complete(content or {}, fill_defaults=self.fill_defaults)
        return ElicitResult(action="accept", content=answer)

    @staticmethod
    def decline() -> ElicitResult:
        return ElicitResult(action="decline")

    @staticmethod
    def cancel() -> ElicitResult:
        return ElicitResult(action="cancel")


FormHandler = Callable[[HandlerContext, FormRequest], Awaitable[ElicitResult]]
UrlHandler = Callable[[HandlerContext, ElicitUrlParams], Awaitable[ElicitResult]]
CompleteHandler = Callable[[str], Awaitable[None]]
LegacyHandler = Callable[[HandlerContext, ElicitParams], Awaitable[ElicitResult]]


@final
@attrs.define(kw_only=True)
class Elicitation:
    """The client's elicitation handlers (see the module doc)."""

    form: FormHandler | None = None
    url: UrlHandler | None = None
    on_complete: CompleteHandler | None = None
    fill_defaults: bool = False
    _completed: collections.deque[str] = attrs.field(
        init=False, factory=lambda: collections.deque(maxlen=MAX_COMPLETED_IDS)
    )
    _changed: trio.Event = attrs.field(init=False, factory=trio.Event)
    #: A plain handler given to ``open_client`` (form mode, unchecked).
    _plain: LegacyHandler | None = attrs.field(default=None, alias="plain")

    def capability(self) -> ElicitationCapability | None:
        form = self.form is not None or self._plain is not None
        if self.url is not None:
            return ElicitationCapability(form={} if form else None, url={})
        return ElicitationCapability() if form else None

    def completed(self, elicitation_id: str) -> bool:
        """Whether the server said ``elicitation_id`` is complete (recently)."""
        return elicitation_id in self._completed

    async def wait_complete(self, elicitation_id: str) -> None:
        """Wait until the server sends ``notifications/elicitation/complete`` for it
        (a checkpoint even when it already has)."""
        if elicitation_id in self._completed:
            await trio.lowlevel.checkpoint()
        while elicitation_id not in self._completed:
            await self._changed.wait()

    async def _complete(self, elicitation_id: str) -> None:
        self._completed.append(elicitation_id)
        self._changed.set()
        self._changed = trio.Event()
        if self.on_complete is not None:
            await self.on_complete(elicitation_id)


def install_elicitation(
    registry: Registry, given: Elicitation | LegacyHandler | None
) -> Elicitation | None:
    """Answer ``elicitation/create`` with ``given``; returns the :class:`Elicitation`."""
    if given is None:
        return None
    elicitation = given if isinstance(given, Elicitation) else Elicitation(plain=given)
    legacy = elicitation._plain

    async def create(ctx: HandlerContext, params: Any) -> Any:
        raw = params if isinstance(params, dict) else {}
        if raw.get("mode") == "url":
            if elicitation.url is None:
                raise McpError(INVALID_PARAMS, "Invalid params: this client has no URL mode")
            url_params = _structure(raw, ElicitUrlParams)
            result = await elicitation.url(ctx, url_params)
            return unstructure(ElicitResult(action=result.action, meta=result.meta))
        if legacy is not None:
            return unstructure(await legacy(ctx, _structure(raw, ElicitParams)))
        if elicitation.form is None:
            raise McpError(INVALID_PARAMS, "Invalid params: this client has no form mode")
        form_params = _structure(raw, ElicitParams)
        try:
            form = ElicitationForm.parse(form_params.requested_schema)
        except FormSchemaError as exc:
            raise McpError(INVALID_PARAMS, f"Invalid params: requestedSchema: {exc}") from None
        request = FormRequest(form_params.message, form, form_params, elicitation.fill_defaults)
        result = await elicitation.form(ctx, request)
        if result.action == "accept":
            content = form.complete(result.content or {}, fill_defaults=elicitation.fill_defaults)
            result = ElicitResult(action="accept", content=content, meta=result.meta)
        return unstructure(result)

    registry.add_request("elicitation/create", create)

    async def complete(_session: Session, params: dict[str, Any] | None) -> None:
        elicitation_id = (params or {}).get("elicitationId")
        if isinstance(elicitation_id, str):
            await elicitation._complete(elicitation_id)

    registry.add_notification("notifications/elicitation/complete", complete)
    return elicitation


def _structure(raw: dict[str, Any], cls: type[Any]) -> Any:
    try:
        return structure(raw, cls)
    except Exception as exc:
        raise McpError(INVALID_PARAMS, f"Invalid params: {exc}") from None

"""Elicitation modes on the server: the form/URL capability checks, URL-mode elicitation,
``-32042`` and ``notifications/elicitation/complete``.

The client declares its modes in ``capabilities.elicitation`` (2025-11-25+): ``form``,
``url``, or both; an empty object means form only (and is all 2025-06-18 knows). The
server MUST NOT send a mode the client did not declare, so every entry point here checks
first and raises :class:`~trimcp.server.CapabilityError` before anything goes on the
wire.

URL mode (``Feature.URL_ELICITATION``) sends the user to a URL out of band; accepting
means consent to open it, not that the work there is done. In 2025-11-25 each URL
elicitation has an ``elicitationId`` (``Feature.ELICITATION_COMPLETE``, which also covers
the ``-32042`` error and the completion notification: all three exist in 2025-11-25 only);
the server generates it with a CSPRNG unless given one, and may later tell the client the
out-of-band step finished with :func:`complete_elicitation`, from the tool itself or from
detached background work.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from trimcp.binding import structure
from trimcp.dispatch import UrlElicitationRequiredError
from trimcp.nursery import BackgroundContext, HandlerContext, Session, SessionState
from trimcp.protocol import ElicitResult, ElicitUrlParams, Feature, supports

if TYPE_CHECKING:
    from ._context import CapabilityError

__all__ = [
    "ELICITATION_ID_BYTES",
    "complete_elicitation",
    "form_elicitation_error",
    "new_elicitation_id",
    "parse_elicit_result",
    "url_elicitation_error",
    "url_elicitation_params",
    "url_elicitation_required",
]

#: Random bytes in a generated ``elicitationId`` (URL-safe base64, so 22 characters).
ELICITATION_ID_BYTES = 16


def new_elicitation_id() -> str:
    """A fresh, unguessable elicitation id (``secrets``, 128 bits)."""
    return secrets.token_urlsafe(ELICITATION_ID_BYTES)


def _supports(state: SessionState, feature: Feature) -> bool:
    version = state.protocol_version
    return version is not None and supports(version, feature)


def _error(capability: str) -> CapabilityError:
    # Imported here: the error class lives with the context, which imports this module.
    from ._context import CapabilityError

    mode = capability.rpartition(".")[2]
    required: dict[str, Any] = {"elicitation": {mode: {}} if mode != "elicitation" else {}}
    return CapabilityError(capability, required=required)


def form_elicitation_error(state: SessionState) -> CapabilityError | None:
    """The error for a form-mode elicitation the client cannot take, or ``None``.

    No ``elicitation`` capability at all is ``"elicitation"``; a client that declared
    only ``url`` (2025-11-25+) is ``"elicitation.form"``.
    """
    capability = state.client_capabilities.elicitation
    if capability is None or not _supports(state, Feature.ELICITATION):
        # 2024-11-05 and 2025-03-26 have no elicitation, whatever the client declared.
        return _error("elicitation")
    if capability.url is not None and capability.form is None:
        return _error("elicitation.form")
    return None


def url_elicitation_error(state: SessionState) -> CapabilityError | None:
    """The error for a URL-mode elicitation the client cannot take, or ``None``: the
    revision has no URL mode, or the client did not declare ``elicitation.url``."""
    capability = state.client_capabilities.elicitation
    if not _supports(state, Feature.URL_ELICITATION) or capability is None:
        return _error("elicitation.url")
    if capability.url is None:
        return _error("elicitation.url")
    return None


def url_elicitation_params(
    state: SessionState, message: str, url: str, elicitation_id: str | None
) -> ElicitUrlParams:
    """The URL-mode params for this session: an id (given or generated) where the
    revision has one (2025-11-25), none in the stateless era. Raises the capability
    error when the client cannot take URL mode."""
    problem = url_elicitation_error(state)
    if problem is not None:
        raise problem
    if _supports(state, Feature.ELICITATION_COMPLETE):
        elicitation_id = elicitation_id or new_elicitation_id()
    else:
        elicitation_id = None
    return ElicitUrlParams(message=message, url=url, elicitation_id=elicitation_id)


def url_elicitation_required(
    state: SessionState, message: str, url: str, elicitation_id: str | None = None
) -> UrlElicitationRequiredError:
    """The ``-32042`` error for one URL elicitation, for a handler to ``raise``.

    Only 2025-11-25 has the error, and only a client that declared ``elicitation.url``
    may get it; otherwise the capability error is raised here instead.
    """
    params = url_elicitation_params(state, message, url, elicitation_id)
    if params.elicitation_id is None:
        raise _error("elicitation.url")
    return UrlElicitationRequiredError([params])


def parse_elicit_result(raw: dict[str, Any]) -> ElicitResult:
    """The client's answer to a URL-mode elicitation; any ``content`` is dropped (it
    belongs to accepted forms only)."""
    result = structure(raw, ElicitResult)
    if result.content is None:
        return result
    return ElicitResult(action=result.action, meta=result.meta)


async def complete_elicitation(
    target: HandlerContext | BackgroundContext | Session, elicitation_id: str
) -> None:
    """Send ``notifications/elicitation/complete`` for ``elicitation_id`` (2025-11-25).

    ``target`` is where the elicitation came from: the request's context while it runs
    (the notice then travels with the request), detached work's
    :class:`~trimcp.BackgroundContext`, or the session itself. Send it only to the
    client that got the elicitation, and only for ids this server issued there.

    Raises:
      CapabilityError: the revision has no completion notice, or the client did not
        declare ``elicitation.url``.
      ConnectionClosedError: the session has ended.
    """
    state = target.state if isinstance(target, Session) else target.session
    problem = url_elicitation_error(state)
    if problem is None and not _supports(state, Feature.ELICITATION_COMPLETE):
        problem = _error("elicitation.url")
    if problem is not None:
        raise problem
    params = {"elicitationId": elicitation_id}
    method = "notifications/elicitation/complete"
    if isinstance(target, HandlerContext):
        if target.closed:
            await target.session_object.notify(method, params)
        else:
            await target.notify(method, params)
    else:
        await target.notify(method, params)

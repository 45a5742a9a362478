"""Where the HTTP client channel meets the authorization layer (see ``_client_auth``).

:class:`AuthGate` is the channel's only handle on an :class:`HttpAuthSession`: it adds
credentials to a request's headers, recognises a challenge (``401``/``403`` while
authorization is configured), reads the refusal's body so the connection stays
reusable, and turns the layer's answer into "send again" or the error the request
fails with. Without ``auth`` the channel has no gate and nothing here runs.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Final, final

import h11

from trimcp.wire import ErrorObject

from ._client_auth import (
    AUTH_HEADERS,
    AuthorizationError,
    AuthResponse,
    HttpAuthSession,
    authorization_error,
    response_of,
)
from ._client_conn import HttpConnection, ResponseTooLarge
from ._client_errors import http_error, phrase
from ._client_hooks import HttpRequestInfo

__all__ = ["RETRY", "AuthGate", "Challenge"]

logger = logging.getLogger("trimcp.http.client")

_BODY_LIMIT: Final = 64 * 1024
#: :meth:`AuthGate.answer`'s "send the request again".
RETRY: Final = True


@final
class Challenge:
    """A ``401``/``403`` answer, read whole."""

    __slots__ = ("body", "reason", "response")

    def __init__(self, response: AuthResponse, reason: str, body: bytes) -> None:
        self.response = response
        self.reason = reason
        self.body = body


@final
class AuthGate:
    """The channel's side of the authorization hooks (see the module doc)."""

    def __init__(self, session: HttpAuthSession, max_retries: int) -> None:
        self.session = session
        self.max_retries = max_retries
        #: Challenges seen on this connection (for the era probe and for tests).
        self.challenges = 0

    async def headers(
        self, info: HttpRequestInfo, headers: list[tuple[str, str]]
    ) -> list[tuple[str, str]]:
        """``headers`` without any caller-supplied credentials, plus the layer's."""
        kept = [(k, v) for k, v in headers if k.lower() not in AUTH_HEADERS]
        kept.extend(await self.session.headers(info))
        return kept

    @staticmethod
    def sent(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """The credentials among ``headers``."""
        return [(k, v) for k, v in headers if k.lower() in AUTH_HEADERS]

    @staticmethod
    def is_challenge(response: h11.Response) -> bool:
        return response.status_code in (401, 403)

    async def read(self, conn: HttpConnection, response: h11.Response) -> Challenge:
        """Read a challenge's body (bounded) so the connection can be reused."""
        body = b""
        with contextlib.suppress(ResponseTooLarge):
            body = await conn.read_body(_BODY_LIMIT)
        reason = response.reason.decode("latin-1", "replace") or phrase(response.status_code)
        return Challenge(response_of(response.status_code, response.headers), reason, body)

    def observe(self, info: HttpRequestInfo, response: h11.Response) -> None:
        try:
            self.session.observe(info, response_of(response.status_code, response.headers))
        except Exception:
            logger.exception("the authorization layer failed to observe an answer")

    async def answer(
        self,
        info: HttpRequestInfo,
        sent: Sequence[tuple[str, str]],
        challenge: Challenge,
        retries_left: int,
    ) -> ErrorObject | bool:
        """:data:`RETRY`, or the error the request fails with."""
        self.challenges += 1
        status = challenge.response.status
        if retries_left <= 0:
            return authorization_error(
                status, f"still refused after {self.max_retries} authorized retries"
            )
        try:
            again = await self.session.challenged(info, sent, challenge.response)
        except AuthorizationError as exc:
            return authorization_error(status, str(exc))
        except Exception as exc:
            # Never the message: a layer's unexpected error may quote what it sent.
            logger.error("the authorization layer failed (%s)", type(exc).__name__)
            return authorization_error(status, "the authorization layer failed")
        if again:
            return RETRY
        return http_error(status, challenge.reason, challenge.body)

    async def settled(self) -> bool:
        """Whether authorization ran on this connection (waits while it runs)."""
        return await self.session.settled() or self.challenges > 0

"""``ResourceServer``: the OAuth 2.1 resource-server half of an MCP server.

It implements what the transports ask of an authorization layer
(:class:`trimcp.transports.http.Authenticator`):

* **metadata**: the protected resource metadata (RFC 9728) at the path-aware well-known
  URL of the endpoint, ``/.well-known/oauth-protected-resource/mcp`` for ``/mcp``;
* **authenticate**: the ``Authorization`` header's token (``Bearer``, or ``DPoP`` with
  its proof) checked by the verifier (JWT with a key set, introspection, or one of the
  application's own), then the checks every verifier shares: ``aud`` names this resource,
  the token is not expired (``leeway`` seconds of skew), a DPoP-bound token comes with a
  valid proof of its key and never as a plain bearer token, and the scopes every request
  needs (``required_scopes``) are granted;
* **authorize**: a request's own scopes (403 ``insufficient_scope`` naming them).

Refusals follow RFC 6750 §3 and the MCP authorization spec: 401 with
``WWW-Authenticate: Bearer resource_metadata="..."`` (and ``scope`` when some are always
needed) for a request without a token, ``error="invalid_token"`` for a bad one,
``error="invalid_request"`` for a malformed header or a token in the query string, 403
``error="insufficient_scope"`` with the ``scope`` needed, 503 with ``Retry-After`` when the
verifier cannot reach what it needs. Descriptions never carry the token, and nothing is
logged about a token but why it was refused.

The resource identifier (the audience tokens must name) is ``resource`` when given
(required behind a proxy or TLS terminator), else the URL of the endpoint on the local
address the request arrived on: never the ``Host`` header, which a client chooses.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Final, Protocol, final
from urllib.parse import parse_qs, urlsplit

import trio

from trimcp.nursery import Caller
from trimcp.transports.http import AuthRefusal, AuthRequest
from trimcp.wire import Request

from ._challenge import challenge
from ._dpop import DpopError, DpopVerifier
from ._principal import InvalidToken, Principal, VerifierUnavailable
from ._urls import metadata_path, metadata_url, same_resource, url_for

__all__ = ["DEFAULT_MAX_TOKEN_BYTES", "ResourceServer", "TokenVerifier"]

logger = logging.getLogger("trimcp.auth")

DEFAULT_MAX_TOKEN_BYTES: Final = 8 * 1024
"""Bytes of access token accepted at most (longer ones are refused unparsed)."""
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class TokenVerifier(Protocol):
    """Turns an access token into a :class:`Principal`, or raises
    :class:`~._principal.InvalidToken` (or ``VerifierUnavailable``). The principal's
    ``audience`` must list what the token was issued for: the resource server refuses a
    principal whose audience does not name it."""

    async def verify(self, token: str) -> Principal: ...


@final
class ResourceServer:
    """Authorization of an MCP server's HTTP and WebSocket endpoints (module doc).

    Args:
      verifier: checks tokens (:class:`~._jwt.JwtVerifier`,
        :class:`~._introspection.IntrospectionVerifier`, or the application's own).
      authorization_servers: issuer URLs clients get tokens from (in the metadata).
      resource: this server's resource identifier (the MCP endpoint's public URL).
      audiences: further audiences accepted (a resource known under several names).
      scopes_supported: the scopes named in the metadata (default: every scope the
        server's tools, prompts and resources declare, and ``required_scopes``).
      required_scopes: scopes every request needs.
      resource_name: a human-readable name shown by clients (metadata).
      resource_documentation: a URL of documentation shown by clients (metadata).
      dpop: checks DPoP proofs; without it the ``DPoP`` scheme is not accepted.
      dpop_required: refuse plain bearer tokens (needs ``dpop``).
      max_token_bytes: longer tokens are refused unparsed.
      leeway: seconds of clock skew tolerated on expiry.
      clock: Unix seconds (tests pass a fake one).
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        authorization_servers: Sequence[str],
        resource: str | None = None,
        audiences: Sequence[str] = (),
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Iterable[str] = (),
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        dpop: DpopVerifier | None = None,
        dpop_required: bool = False,
        max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES,
        leeway: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not authorization_servers:
            raise ValueError("name at least one authorization server")
        if dpop_required and dpop is None:
            raise ValueError("dpop_required needs a DpopVerifier")
        self.verifier = verifier
        self.authorization_servers = tuple(authorization_servers)
        self.resource = resource
        self.audiences = tuple(audiences)
        self.scopes_supported = None if scopes_supported is None else tuple(scopes_supported)
        self.required_scopes = frozenset(required_scopes)
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.dpop = dpop
        self.dpop_required = dpop_required
        self.max_token_bytes = max_token_bytes
        self.leeway = leeway
        self.clock = clock

    # ------------------------------------------------------------------ metadata
    def resource_for(self, request: AuthRequest) -> str:
        """The resource identifier ``request`` is judged against (module doc)."""
        if self.resource is not None:
            return self.resource
        if request.server is not None:
            host, port = request.server
            return url_for(request.scheme, host, port, request.resource_path)
        return f"{request.scheme}://localhost{request.resource_path}"

    def metadata(self, request: AuthRequest, extra_scopes: Iterable[str] = ()) -> bytes | None:
        """The protected resource metadata, for a request of its well-known path."""
        if request.path != metadata_path(request.resource_path):
            return None
        document: dict[str, object] = {
            "resource": self.resource_for(request),
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        scopes = self.scopes_supported
        if scopes is None:
            scopes = tuple(sorted(self.required_scopes | set(extra_scopes)))
        if scopes:
            document["scopes_supported"] = list(scopes)
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            document["resource_documentation"] = self.resource_documentation
        if self.dpop is not None:
            document["dpop_signing_alg_values_supported"] = list(self.dpop.algorithms)
            document["dpop_bound_access_tokens_required"] = self.dpop_required
        return json.dumps(document, separators=(",", ":")).encode()

    # ------------------------------------------------------------------ authenticate
    async def authenticate(self, request: AuthRequest) -> Principal:
        """The verified principal of ``request``, or :class:`AuthRefusal`. A checkpoint
        on every path, refusals included."""
        await trio.lowlevel.checkpoint()
        if "access_token" in parse_qs(request.query.decode("latin-1")):
            raise self._refuse(
                request, 401, "invalid_request", "access tokens are not accepted in the URL"
            )
        values = request.headers.get_all("authorization")
        if len(values) > 1:
            raise self._refuse(request, 401, "invalid_request", "more than one Authorization")
        scheme, _, token = values[0].strip().partition(" ") if values else ("", "", "")
        scheme, token = scheme.lower(), token.strip()
        if scheme not in ("bearer", "dpop") or (scheme == "dpop" and self.dpop is None):
            scope = " ".join(sorted(self.required_scopes)) or None
            raise self._refuse(request, 401, None, "an access token is required", scope=scope)
        if not token:
            raise self._refuse(request, 401, "invalid_request", "the token is empty", scheme)
        if len(token) > self.max_token_bytes:
            raise self._refuse(request, 401, "invalid_token", "the token is too large", scheme)
        if _B64TOKEN.fullmatch(token) is None:
            raise self._refuse(request, 401, "invalid_token", "the token is malformed", scheme)
        if scheme == "bearer" and self.dpop_required:
            raise self._refuse(request, 401, "invalid_token", "a DPoP-bound token is required")
        principal = await self._verify(request, token, scheme)
        if scheme == "dpop":
            self._check_proof(request, token, principal)
        elif principal.jkt is not None:
            raise self._refuse(
                request, 401, "invalid_token", "a DPoP-bound token needs the DPoP scheme", scheme
            )
        self.require(principal, request, self.required_scopes)
        return principal

    async def _verify(self, request: AuthRequest, token: str, scheme: str) -> Principal:
        resource = self.resource_for(request)
        try:
            principal = await self.verifier.verify(token)
        except InvalidToken as exc:
            raise self._refuse(request, 401, "invalid_token", str(exc), scheme) from None
        except VerifierUnavailable as exc:
            raise self._unavailable(exc) from None
        accepted = (resource, *self.audiences)
        if not any(same_resource(a, r) for a in principal.audience for r in accepted):
            raise self._refuse(
                request, 401, "invalid_token", "the token was not issued for this resource", scheme
            )
        expires = principal.expires_at
        if expires is not None and expires + self.leeway < self.clock():
            raise self._refuse(request, 401, "invalid_token", "the token has expired", scheme)
        return principal

    def _check_proof(self, request: AuthRequest, token: str, principal: Principal) -> None:
        assert self.dpop is not None
        proofs = request.headers.get_all("dpop")
        if principal.jkt is None:
            raise self._refuse(
                request, 401, "invalid_token", "the token is not bound to a DPoP key", "dpop"
            )
        if len(proofs) != 1:
            raise self._refuse(
                request, 401, "invalid_dpop_proof", "send exactly one DPoP proof", "dpop"
            )
        origin = urlsplit(self.resource_for(request))
        urls = [f"{origin.scheme}://{origin.netloc}{request.path}"]
        if request.host:
            urls.append(f"{request.scheme}://{request.host}{request.path}")
        try:
            self.dpop.check(
                proofs[0], method=request.method, urls=urls, token=token, jkt=principal.jkt
            )
        except DpopError as exc:
            error = "use_dpop_nonce" if exc.use_nonce else "invalid_dpop_proof"
            refusal = self._refuse(request, 401, error, str(exc), "dpop")
            if exc.use_nonce:
                refusal.headers.append((b"dpop-nonce", self.dpop.nonce().encode()))
            raise refusal from None
        except VerifierUnavailable as exc:
            raise self._unavailable(exc) from None

    # ------------------------------------------------------------------ authorize
    def authorize(self, caller: Caller, request: AuthRequest, message: Request) -> None:
        """Requests need nothing beyond ``required_scopes`` here (checked already); a
        server's gate adds the scopes its tools, prompts and resources declare."""

    def require(self, caller: Caller, request: AuthRequest, needed: frozenset[str]) -> None:
        """403 ``insufficient_scope`` unless ``caller`` was granted every scope ``needed``."""
        granted = caller.scopes if isinstance(caller, Principal) else frozenset()
        if needed <= granted:
            return
        scheme = "dpop" if isinstance(caller, Principal) and caller.jkt is not None else None
        raise self._refuse(
            request,
            403,
            "insufficient_scope",
            "the token lacks a scope this request needs",
            scheme,
            scope=" ".join(sorted(needed)),
        )

    # ------------------------------------------------------------------ refusals
    def _refuse(
        self,
        request: AuthRequest,
        status: int,
        error: str | None,
        description: str,
        scheme: str | None = None,
        *,
        scope: str | None = None,
    ) -> AuthRefusal:
        """The refusal of ``request``: its challenges, the error on the scheme used."""
        logger.debug("request refused (%d %s): %s", status, error or "no token", description)
        params = [
            ("error_description", description if error is not None else None),
            ("scope", scope),
            ("resource_metadata", metadata_url(self.resource_for(request))),
        ]
        headers = []
        if not self.dpop_required:
            bearer_error = error if scheme != "dpop" else None
            detail = params if bearer_error is not None else params[1:]
            headers.append(challenge("Bearer", [("error", bearer_error), *detail]))
        if self.dpop is not None:
            dpop_error = error if scheme == "dpop" or self.dpop_required else None
            detail = params if dpop_error is not None else params[1:]
            algs = " ".join(self.dpop.algorithms)
            headers.append(challenge("DPoP", [("error", dpop_error), *detail, ("algs", algs)]))
        return AuthRefusal(status, f"{_TITLES[status]}: {description}", headers, error=error)

    def _unavailable(self, exc: VerifierUnavailable) -> AuthRefusal:
        headers = [(b"retry-after", str(exc.retry_after).encode())]
        return AuthRefusal(503, f"Service Unavailable: {exc}", headers)


_TITLES: Final = {401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"}

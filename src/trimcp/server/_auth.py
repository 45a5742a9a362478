"""Authorization inside a :class:`~trimcp.server.Server` (``Server(auth=...)``).

The resource server (:class:`trimcp.auth.ResourceServer`) verifies tokens; this module
ties it to one server:

* :class:`ScopeTable` holds the scopes each tool, prompt, resource and resource template
  declared at registration (``@server.tool(scopes=[...])``) and tells which ones a
  request needs;
* :class:`AuthGate` is what the transports call (an
  :class:`~trimcp.transports.http.Authenticator`): the resource server, plus those
  scopes in its metadata and in each request's authorization (403
  ``insufficient_scope`` over HTTP, before anything is delivered);
* :func:`guard` wraps every route: it puts the request's principal on its handler
  context (``ctx.principal``), and refuses a request whose principal lacks a scope it
  needs with a ``-32000`` error (the check for transports without an HTTP status per
  request: WebSocket; over HTTP the gate refused already);
* :func:`principal_identity` binds per-caller state to its creator: tasks (the task
  store's ``owner``) and sealed input-round state (MRTR) are bound to the identity of the
  principal that made them, and are unknown to anyone else.

Transports that authenticate nobody (stdio, in-memory) serve requests with
``ctx.principal`` ``None`` and no scope checks: whoever holds such a channel started the
server or shares its process. This module imports nothing of :mod:`trimcp.auth` at run
time, so a server without authorization needs no JOSE library.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, Literal, final

from trimcp.dispatch import McpError
from trimcp.nursery import Caller, HandlerContext
from trimcp.transports.http import AuthenticatedCaller, AuthRequest
from trimcp.transports.http._auth import caller_of
from trimcp.wire import Request

from ._resources import ResourceRegistry

if TYPE_CHECKING:
    from trimcp.auth import ResourceServer

__all__ = ["AuthGate", "ScopeTable", "guard", "principal_identity"]

#: The JSON-RPC code of a refusal for want of a scope (as in the HTTP 403's body).
FORBIDDEN: Final = -32000

Kind = Literal["tool", "prompt", "resource"]
Handler = Callable[[HandlerContext, Any], Awaitable[Any]]


@final
class ScopeTable:
    """The scopes tools, prompts and resources declared, and what a request needs."""

    def __init__(self, resources: ResourceRegistry) -> None:
        self._resources = resources
        self._table: dict[Kind, dict[str, frozenset[str]]] = {
            "tool": {},
            "prompt": {},
            "resource": {},
        }

    def declare(self, kind: Kind, name: str, scopes: Iterable[str] | None) -> None:
        """``name`` (a tool or prompt name, a resource URI or template) needs ``scopes``."""
        needed = frozenset([scopes] if isinstance(scopes, str) else scopes or ())
        if needed:
            self._table[kind][name] = needed
        else:
            self._table[kind].pop(name, None)

    def all(self) -> frozenset[str]:
        """Every scope declared (for ``scopes_supported``)."""
        return frozenset(s for table in self._table.values() for v in table.values() for s in v)

    def needed(self, method: str, params: object) -> frozenset[str]:
        """The scopes a ``method`` request with ``params`` needs (empty: none)."""
        if not isinstance(params, dict):
            return frozenset()
        if method == "tools/call":
            return self._lookup("tool", params.get("name"))
        if method == "prompts/get":
            return self._lookup("prompt", params.get("name"))
        if method in ("resources/read", "resources/subscribe"):
            return self._resource(params.get("uri"))
        if method == "completion/complete":
            ref = params.get("ref")
            if isinstance(ref, dict) and ref.get("type") == "ref/prompt":
                return self._lookup("prompt", ref.get("name"))
            if isinstance(ref, dict) and ref.get("type") == "ref/resource":
                return self._lookup("resource", ref.get("uri"))
        return frozenset()

    def _lookup(self, kind: Kind, name: object) -> frozenset[str]:
        table = self._table[kind]
        if not table or not isinstance(name, str):
            return frozenset()
        return table.get(name, frozenset())

    def _resource(self, uri: object) -> frozenset[str]:
        if not self._table["resource"] or not isinstance(uri, str):
            return frozenset()
        return self._lookup("resource", self._resources.key_for(uri))


@final
class AuthGate:
    """The server's :class:`~trimcp.transports.http.Authenticator` (module doc)."""

    def __init__(self, resource_server: ResourceServer, table: ScopeTable) -> None:
        self.resource_server = resource_server
        self.table = table

    def metadata(self, request: AuthRequest) -> bytes | None:
        return self.resource_server.metadata(request, self.table.all())

    async def authenticate(self, request: AuthRequest) -> AuthenticatedCaller:
        return await self.resource_server.authenticate(request)

    def authorize(self, caller: Caller, request: AuthRequest, message: Request) -> None:
        needed = self.table.needed(message.method, message.params)
        if needed:
            self.resource_server.require(caller, request, needed)


def guard(method: str, handler: Handler, table: ScopeTable) -> Handler:
    """``handler`` with the request's principal on its context and its scopes checked."""

    def run(ctx: HandlerContext, params: Any) -> Awaitable[Any]:
        principal = ctx.principal = caller_of(ctx.session_object.channel, ctx.request_id)
        if principal is not None:
            needed = table.needed(method, params)
            granted: frozenset[str] = getattr(principal, "scopes", frozenset())
            if not needed <= granted:
                scope = " ".join(sorted(needed))
                raise McpError(
                    FORBIDDEN,
                    "Forbidden: the token lacks a scope this request needs",
                    {"error": "insufficient_scope", "scope": scope},
                )
        return handler(ctx, params)

    return run


def principal_identity(ctx: HandlerContext) -> str | None:
    """Who owns what ``ctx``'s request creates (``None``: nobody authenticated)."""
    principal = ctx.principal
    return principal.identity if principal is not None else None

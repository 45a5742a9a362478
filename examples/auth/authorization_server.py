"""A small OAuth 2.1 authorization server for trying trimcp's authorization locally.

    python examples/auth/authorization_server.py --port 9000

It does what a real one does for an MCP client, step by step, and nothing more:

* metadata (RFC 8414) at ``/.well-known/oauth-authorization-server`` (and the OpenID
  discovery path), naming every endpoint below;
* dynamic client registration (RFC 7591) at ``/register``: loopback or https redirect
  URIs only; ``none``, ``client_secret_post`` or ``client_secret_basic``;
* the authorization code flow at ``/authorize`` with PKCE S256 required, the RFC 8707
  ``resource`` indicator and the RFC 9207 ``iss`` in the redirect. There is no login
  page: the one demo user, ``demo-user``, consents at once and the browser (or a
  headless client) is redirected with the code. Scopes are granted as asked, within
  ``scopes_supported``;
* the token endpoint ``/token``: ``authorization_code`` (single-use codes, 60 s, the
  verifier checked) and ``refresh_token`` (rotated on each use). Access tokens are
  ES256-signed JWTs (RFC 9068) with ``aud`` set to the requested resource;
* the key set at ``/jwks`` and token introspection (RFC 7662) at ``/introspect``
  for resource servers holding the credentials given as ``introspection_clients``.

JOSE is joserfc's; everything is in memory and bounded (clients, codes, refresh tokens).
Loopback only: this is a development stand-in, not a server to deploy. The tests use it
as the real authorization server of their end-to-end flows.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from functools import partial
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import trio
from joserfc import jwk, jwt
from joserfc.errors import JoseError

from trimcp.transports.http import HttpServerLimits, serve_h11

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

MAX_BODY = 64 * 1024
MAX_CLIENTS = 1000
MAX_CODES = 1000
MAX_REFRESH = 10_000
CODE_TTL = 60.0
USER = "demo-user"


class OAuthError(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _bounded_put(table: OrderedDict[str, Any], key: str, value: Any, limit: int) -> None:
    table[key] = value
    while len(table) > limit:
        table.popitem(last=False)


def _redirect_ok(uri: str) -> bool:
    parts = urlsplit(uri)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    return not parts.fragment and (parts.scheme == "https" or (parts.scheme == "http" and loopback))


class AuthorizationServer:
    """The server's state and its ASGI app (see the module doc)."""

    def __init__(
        self,
        issuer: str | None = None,
        *,
        scopes_supported: tuple[str, ...] = ("mcp:tools", "notes:write", "offline_access"),
        token_ttl: int = 600,
        introspection_clients: dict[str, str] | None = None,
    ) -> None:
        #: The issuer URL; ``None`` until :meth:`serve` has bound a port.
        self.issuer = issuer.rstrip("/") if issuer is not None else ""
        self.scopes_supported = scopes_supported
        self.token_ttl = token_ttl
        self.introspection_clients = dict(introspection_clients or {})
        self.key = jwk.ECKey.generate_key("P-256", private=True, parameters={"kid": "as-1"})
        self.clients: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.codes: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.refresh_tokens: OrderedDict[str, dict[str, Any]] = OrderedDict()
        #: What happened, for tests and curious readers: registrations, grants ...
        self.events: Counter[str] = Counter()

    # ------------------------------------------------------------------ documents
    def metadata(self) -> dict[str, Any]:
        base = self.issuer
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks",
            "introspection_endpoint": f"{base}/introspect",
            "scopes_supported": list(self.scopes_supported),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_post",
                "client_secret_basic",
            ],
            "authorization_response_iss_parameter_supported": True,
        }

    def jwks(self) -> dict[str, Any]:
        return {"keys": [{**self.key.as_dict(private=False), "use": "sig", "alg": "ES256"}]}

    # ------------------------------------------------------------------ endpoints
    def register(self, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            request = json.loads(body)
        except ValueError:
            raise OAuthError("invalid_client_metadata", "the body is not JSON") from None
        if not isinstance(request, dict):
            raise OAuthError("invalid_client_metadata", "the body is not an object")
        uris = request.get("redirect_uris")
        if (
            not isinstance(uris, list)
            or not uris
            or not all(isinstance(u, str) and _redirect_ok(u) for u in uris)
        ):
            raise OAuthError("invalid_redirect_uri", "redirect URIs must be loopback or https")
        method = request.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in ("none", "client_secret_post", "client_secret_basic"):
            raise OAuthError("invalid_client_metadata", "unsupported token_endpoint_auth_method")
        client: dict[str, Any] = {
            "client_id": "client-" + secrets.token_urlsafe(12),
            "client_id_issued_at": int(time.time()),
            "redirect_uris": uris,
            "token_endpoint_auth_method": method,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
        for name in ("client_name", "scope", "client_uri"):
            if isinstance(request.get(name), str):
                client[name] = request[name]
        if method != "none":
            client["client_secret"] = secrets.token_urlsafe(24)
            client["client_secret_expires_at"] = 0
        _bounded_put(self.clients, client["client_id"], client, MAX_CLIENTS)
        self.events["register"] += 1
        return 201, client

    def authorize(self, query: dict[str, str]) -> str:
        """The redirect URL answering an authorization request (the user consents)."""
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None or redirect_uri not in client["redirect_uris"]:
            raise OAuthError("invalid_request", "unknown client or redirect_uri")
        state = query.get("state")

        def back(params: dict[str, str]) -> str:
            if state is not None:
                params["state"] = state
            params["iss"] = self.issuer
            return f"{redirect_uri}?{urlencode(params)}"

        if query.get("response_type") != "code":
            return back({"error": "unsupported_response_type"})
        challenge = query.get("code_challenge", "")
        if query.get("code_challenge_method") != "S256" or not 43 <= len(challenge) <= 128:
            return back({"error": "invalid_request", "error_description": "PKCE S256 needed"})
        scopes = self._scopes(query.get("scope"))
        if scopes is None:
            return back({"error": "invalid_scope"})
        code = secrets.token_urlsafe(24)
        grant = {
            "client_id": client["client_id"],
            "redirect_uri": redirect_uri,
            "challenge": challenge,
            "scope": scopes,
            "resource": query.get("resource"),
            "expires": time.monotonic() + CODE_TTL,
        }
        _bounded_put(self.codes, code, grant, MAX_CODES)
        self.events["authorize"] += 1
        return back({"code": code})

    def token(self, form: dict[str, str], authorization: str | None) -> dict[str, Any]:
        client = self._client(form, authorization)
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)  # single use
            if grant is None or grant["expires"] < time.monotonic():
                raise OAuthError("invalid_grant", "unknown or expired code")
            if grant["client_id"] != client["client_id"]:
                raise OAuthError("invalid_grant", "the code was issued to another client")
            if form.get("redirect_uri") != grant["redirect_uri"]:
                raise OAuthError("invalid_grant", "redirect_uri differs")
            verifier = form.get("code_verifier", "")
            computed = _b64(hashlib.sha256(verifier.encode()).digest())
            if not 43 <= len(verifier) <= 128 or not hmac.compare_digest(
                computed, grant["challenge"]
            ):
                raise OAuthError("invalid_grant", "the PKCE verifier does not match")
            resource = form.get("resource", grant["resource"])
            if grant["resource"] is not None and resource != grant["resource"]:
                raise OAuthError("invalid_target", "resource differs from the authorization")
            scope = grant["scope"]
            self.events["token:authorization_code"] += 1
        elif grant_type == "refresh_token":
            held = self.refresh_tokens.pop(form.get("refresh_token", ""), None)  # rotated
            if held is None or held["client_id"] != client["client_id"]:
                raise OAuthError("invalid_grant", "unknown refresh token")
            resource, scope = form.get("resource", held["resource"]), held["scope"]
            if resource != held["resource"]:
                raise OAuthError("invalid_target", "resource differs from the grant")
            self.events["token:refresh_token"] += 1
        else:
            raise OAuthError("unsupported_grant_type", "authorization_code or refresh_token")
        return self._issue(client["client_id"], scope, resource)

    def introspect(self, form: dict[str, str], authorization: str | None) -> dict[str, Any]:
        user, secret = _basic(authorization)
        known = self.introspection_clients.get(user or "")
        if known is None or not hmac.compare_digest(known, secret or ""):
            raise OAuthError(
                "invalid_client", "introspection needs resource server credentials", 401
            )
        try:
            token = jwt.decode(form.get("token", ""), self.key, algorithms=["ES256"])
        except (JoseError, ValueError, TypeError):
            return {"active": False}
        claims = dict(token.claims)
        if claims.get("exp", 0) < time.time():
            return {"active": False}
        return {"active": True, **claims}

    # ------------------------------------------------------------------ helpers
    def _scopes(self, requested: str | None) -> str | None:
        wanted = (requested or "").split()
        if any(s not in self.scopes_supported for s in wanted):
            return None
        return " ".join(dict.fromkeys(wanted))

    def _client(self, form: dict[str, str], authorization: str | None) -> dict[str, Any]:
        user, secret = _basic(authorization)
        client_id = user or form.get("client_id", "")
        secret = secret if user else form.get("client_secret")
        client = self.clients.get(client_id)
        if client is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if client["token_endpoint_auth_method"] != "none" and not hmac.compare_digest(
            client.get("client_secret", ""), secret or ""
        ):
            raise OAuthError("invalid_client", "client authentication failed", 401)
        return client

    def _issue(self, client_id: str, scope: str, resource: str | None) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": USER,
            "client_id": client_id,
            "scope": scope,
            "iat": now,
            "exp": now + self.token_ttl,
            "jti": secrets.token_urlsafe(12),
        }
        if resource is not None:
            claims["aud"] = resource
        header = {"alg": "ES256", "typ": "at+jwt", "kid": self.key.kid}
        refresh = secrets.token_urlsafe(32)
        held = {"client_id": client_id, "scope": scope, "resource": resource}
        _bounded_put(self.refresh_tokens, refresh, held, MAX_REFRESH)
        return {
            "access_token": jwt.encode(header, claims, self.key),
            "token_type": "Bearer",
            "expires_in": self.token_ttl,
            "refresh_token": refresh,
            "scope": scope,
        }

    # ------------------------------------------------------------------ ASGI
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path, method = scope["path"], scope["method"]
        try:
            body = await _read(receive)
            status, answer = await self._route(method, path, scope, headers, body)
        except OAuthError as exc:
            answer = {"error": exc.error, "error_description": exc.description}
            await _send(send, exc.status, json.dumps(answer).encode())
            return
        if isinstance(answer, str):
            await _send(send, 302, b"", [(b"location", answer.encode())])
        else:
            await _send(send, status, json.dumps(answer).encode())

    async def _route(
        self, method: str, path: str, scope: Scope, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, Any] | str]:
        if method == "GET" and path in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            return 200, self.metadata()
        if method == "GET" and path == "/jwks":
            return 200, self.jwks()
        if method == "GET" and path == "/authorize":
            query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
            return 302, self.authorize(query)
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        if method == "POST" and path == "/register":
            return self.register(body)
        if method == "POST" and path == "/token":
            return 200, self.token(form, headers.get("authorization"))
        if method == "POST" and path == "/introspect":
            return 200, self.introspect(form, headers.get("authorization"))
        raise OAuthError("not_found", "no such endpoint", 404)

    async def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve on ``host:port`` (trimcp's h11 engine) until cancelled; ``task_status``
        gets the issuer URL (``http://host:port``, the port bound when ``port`` is 0)."""
        async with trio.open_nursery() as nursery:
            serve = partial(serve_h11, self, host=host, port=port, limits=HttpServerLimits())
            bound = await nursery.start(serve)
            if not self.issuer:
                self.issuer = f"http://{host}:{bound}"
            task_status.started(self.issuer)


def _basic(authorization: str | None) -> tuple[str | None, str | None]:
    if not authorization or not authorization.lower().startswith("basic "):
        return None, None
    try:
        user, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
    except ValueError:
        return None, None
    return unquote(user), unquote(secret)


async def _read(receive: Receive) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise OAuthError("invalid_request", "the body is too large", 413)
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send(
    send: Send, status: int, body: bytes, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _main(port: int) -> None:
    server = AuthorizationServer(introspection_clients={"resource-server": "rs-secret"})
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(partial(server.serve, "127.0.0.1", port))
        print(f"authorization server on {issuer}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9000)
    trio.run(_main, parser.parse_args().port)

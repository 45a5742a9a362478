"""A protected MCP server and its authorization server, scripted, on 127.0.0.1.

:class:`World` runs two :class:`~tests.http_client._fake.FakeServer` apps in the test's
nursery: the *resource server* (``/mcp``, an MCP endpoint that wants a token, and its
protected resource metadata) and the *authorization server* (metadata, ``/authorize``
that redirects at once, ``/token``, ``/register``, and an identity provider's
``/idp/token``). Every knob a test turns is an attribute; every request is recorded.
Tokens are opaque strings the authorization server remembers with their scopes; DPoP
proofs are verified with joserfc (signature, ``htm``, ``htu``, ``ath``, nonce).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import attrs
import trio
from joserfc import jwt
from joserfc.jwk import ECKey

from ..http_client._fake import Exchange, FakeRequest, FakeServer, mcp_app, start_server

ALL = object()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@attrs.define
class World:
    """The two servers and their knobs (see the module doc)."""

    rs: FakeServer | None = None
    auth: FakeServer | None = None
    # -- resource server
    prm_at: str | None = "path"  # "path", "root" or None (a 2025-03-26 server)
    link: bool = True  # resource_metadata in the challenge
    prm_resource: str | None = None  # override of the resource in the metadata
    scopes_supported: list[str] | None = None
    challenge_scope: str | None = None
    needs: dict[str, list[str]] = attrs.field(factory=dict)  # method -> scopes (403)
    always_403: bool = False
    dpop_challenge: bool = False
    rs_nonce: str | None = None
    stateless: bool = False  # answer server/discover (the 2026-07-28 era)
    # -- authorization server
    as_path: str = ""
    metadata_at: str | None = "oauth"  # "oauth", "oidc" or None
    issuer: str | None = None  # override of the issuer in the metadata
    auth_methods: list[str] = attrs.field(factory=lambda: ["none"])
    registration: bool = True
    cimd: bool = False
    iss_supported: bool = False
    iss_mode: str = "correct"  # "correct", "wrong", "slash", "omit"
    authorization_endpoint: str | None = None  # override in the metadata
    as_scopes: list[str] | None = None
    grant_types: list[str] | None = None
    refresh: bool = False
    expires_in: int = 3600
    dpop_algs: list[str] | None = None
    as_nonce: str | None = None
    refuse_grants: bool = False
    refuse_refresh: bool = False
    prm_as: str | None = None  # another authorization server named in the metadata
    client_prefix: str = "client"
    # -- what happened
    authorize: list[dict[str, str]] = attrs.field(factory=list)
    token: list[tuple[dict[str, str], dict[str, str]]] = attrs.field(factory=list)
    registered: list[dict[str, Any]] = attrs.field(factory=list)
    mcp_auth: list[str | None] = attrs.field(factory=list)
    proofs: list[dict[str, Any]] = attrs.field(factory=list)
    issued: dict[str, list[str]] = attrs.field(factory=dict)
    bound: dict[str, str] = attrs.field(factory=dict)  # token -> jkt
    challenges: dict[str, str] = attrs.field(factory=dict)  # code -> challenge
    _ids: Any = attrs.field(factory=lambda: itertools.count(1))

    # ------------------------------------------------------------------ urls
    @property
    def url(self) -> str:
        assert self.rs is not None
        return f"http://127.0.0.1:{self.rs.port}/mcp"

    @property
    def rs_origin(self) -> str:
        assert self.rs is not None
        return f"http://127.0.0.1:{self.rs.port}"

    @property
    def as_origin(self) -> str:
        assert self.auth is not None
        return f"http://127.0.0.1:{self.auth.port}"

    @property
    def as_url(self) -> str:
        return self.as_origin + self.as_path

    async def start(self, nursery: trio.Nursery) -> World:
        self.auth = await start_server(nursery, self._as_app)
        self.rs = await start_server(nursery, self._rs_app)
        return self

    # ------------------------------------------------------------------ resource server
    def _prm_path(self) -> str | None:
        if self.prm_at == "path":
            return "/.well-known/oauth-protected-resource/mcp"
        if self.prm_at == "root":
            return "/.well-known/oauth-protected-resource"
        return None

    def _challenge(
        self, status: int, error: str | None, scope: str | None
    ) -> list[tuple[str, str]]:
        scheme = "DPoP" if self.dpop_challenge else "Bearer"
        params = []
        if error:
            params.append(f'error="{error}"')
        if scope:
            params.append(f'scope="{scope}"')
        if self.link and self._prm_path():
            params.append(f'resource_metadata="{self.rs_origin}{self._prm_path()}"')
        return [("WWW-Authenticate", f"{scheme} {', '.join(params)}".strip())]

    async def _rs_app(self, request: FakeRequest, ex: Exchange) -> None:
        if request.method == "GET" and request.target == self._prm_path():
            resource = self.prm_resource or (self.url if self.prm_at == "path" else self.rs_origin)
            document: dict[str, Any] = {
                "resource": resource,
                "authorization_servers": [self.prm_as or self.as_url],
            }
            if self.scopes_supported is not None:
                document["scopes_supported"] = self.scopes_supported
            await ex.json(document)
            return
        if request.target != "/mcp":
            await ex.json({"error": "not_found"}, status=404)
            return
        header = request.headers.get("authorization")
        self.mcp_auth.append(header)
        _scheme, _, token = (header or "").partition(" ")
        if token not in self.issued:
            await ex.json(
                {"error": "invalid_token"}, 401, self._challenge(401, None, self.challenge_scope)
            )
            return
        if token in self.bound:
            refusal = self._check_proof(request, token)
            if refusal is not None:
                await ex.json({"error": refusal}, 401, refusal_headers(self, refusal))
                return
        method = request.rpc_method or ""
        wanted = self.needs.get(method, [])
        if self.always_403 or not set(wanted) <= set(self.issued[token]):
            scope = " ".join(wanted or ["mcp:admin"])
            await ex.json(
                {"error": "insufficient_scope"},
                403,
                self._challenge(403, "insufficient_scope", scope),
            )
            return
        await mcp_app({"server/discover": _discover} if self.stateless else None)(request, ex)

    def _check_proof(self, request: FakeRequest, token: str) -> str | None:
        proof = request.headers.get("dpop")
        if proof is None:
            return "invalid_dpop_proof"
        claims, jkt = verify_proof(proof, request.method, self.url)
        self.proofs.append(claims)
        if jkt != self.bound[token]:
            return "invalid_dpop_proof"
        if claims.get("ath") != b64url(hashlib.sha256(token.encode()).digest()):
            return "invalid_dpop_proof"
        if self.rs_nonce is not None and claims.get("nonce") != self.rs_nonce:
            return "use_dpop_nonce"
        return None

    # ------------------------------------------------------------------ authorization server
    def _metadata(self) -> dict[str, Any]:
        base = self.as_url
        document: dict[str, Any] = {
            "issuer": self.issuer or base,
            "authorization_endpoint": self.authorization_endpoint or f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
        }
        if self.registration:
            document["registration_endpoint"] = f"{base}/register"
        if self.cimd:
            document["client_id_metadata_document_supported"] = True
        if self.iss_supported:
            document["authorization_response_iss_parameter_supported"] = True
        if self.as_scopes is not None:
            document["scopes_supported"] = self.as_scopes
        if self.grant_types is not None:
            document["grant_types_supported"] = self.grant_types
        if self.dpop_algs is not None:
            document["dpop_signing_alg_values_supported"] = self.dpop_algs
        return document

    def metadata_path(self) -> str | None:
        if self.metadata_at == "oauth":
            return f"/.well-known/oauth-authorization-server{self.as_path}"
        if self.metadata_at == "oidc":
            return f"{self.as_path}/.well-known/openid-configuration"
        return None

    async def _as_app(self, request: FakeRequest, ex: Exchange) -> None:
        path = urlsplit(request.target).path
        if request.method == "GET" and path == self.metadata_path():
            await ex.json(self._metadata())
        elif path == f"{self.as_path}/authorize":
            await self._authorize(request, ex)
        elif path == f"{self.as_path}/token":
            await self._token(request, ex)
        elif path == f"{self.as_path}/register" and self.registration:
            body = json.loads(request.body)
            self.registered.append(body)
            n = next(self._ids)
            answer = {"client_id": f"{self.client_prefix}-{n}", "client_secret": f"secret-{n}"}
            await ex.json(answer, status=201)
        elif path == "/idp/token":
            await self._idp(request, ex)
        else:
            await ex.json({"error": "not_found"}, status=404)

    async def _authorize(self, request: FakeRequest, ex: Exchange) -> None:
        query = {k: v[0] for k, v in parse_qs(urlsplit(request.target).query).items()}
        self.authorize.append(query)
        code = f"code-{next(self._ids)}"
        self.challenges[code] = query.get("code_challenge", "")
        back = {"code": code, "state": query.get("state", "")}
        if self.iss_mode == "correct":
            back["iss"] = self.issuer or self.as_url
        elif self.iss_mode == "wrong":
            back["iss"] = "https://evil.example"
        elif self.iss_mode == "slash":
            back["iss"] = (self.issuer or self.as_url) + "/"
        location = f"{query['redirect_uri']}?{urlencode(back)}"
        await ex.respond(302, headers=[("Location", location)])

    async def _token(self, request: FakeRequest, ex: Exchange) -> None:
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        self.token.append((form, request.headers))
        jkt = None
        proof = request.headers.get("dpop")
        if proof is not None:
            claims, jkt = verify_proof(proof, "POST", f"{self.as_url}/token")
            if self.as_nonce is not None and claims.get("nonce") != self.as_nonce:
                await ex.json({"error": "use_dpop_nonce"}, 400, [("DPoP-Nonce", self.as_nonce)])
                return
        if self.refuse_grants:
            await ex.json({"error": "invalid_grant", "error_description": "no"}, 400)
            return
        grant = form.get("grant_type")
        if grant == "authorization_code":
            verifier = form.get("code_verifier", "")
            expected = self.challenges.get(form.get("code", ""))
            if b64url(hashlib.sha256(verifier.encode()).digest()) != expected:
                await ex.json({"error": "invalid_grant"}, 400)
                return
            scopes = (self.authorize[-1].get("scope") or "").split()
        elif grant == "refresh_token" and self.refuse_refresh:
            await ex.json({"error": "invalid_grant"}, 400)
            return
        elif grant == "refresh_token":
            scopes = self.issued.get(form.get("refresh_token", "").removeprefix("r-"), [])
        else:
            scopes = (form.get("scope") or "").split()
        token = f"tok-{next(self._ids)}"
        self.issued[token] = scopes
        answer: dict[str, Any] = {"access_token": token, "token_type": "Bearer"}
        if jkt is not None and self.dpop_algs:
            self.bound[token] = jkt
            answer["token_type"] = "DPoP"
        answer["expires_in"] = self.expires_in
        if scopes:
            answer["scope"] = " ".join(scopes)
        if self.refresh:
            answer["refresh_token"] = f"r-{token}"
        await ex.json(answer)

    async def _idp(self, request: FakeRequest, ex: Exchange) -> None:
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        self.token.append((form, request.headers))
        await ex.json(
            {
                "access_token": "id-jag-for-" + form.get("subject_token", ""),
                "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "token_type": "N_A",
            }
        )


async def _discover(request: FakeRequest, ex: Exchange) -> None:
    await ex.json(
        {
            "jsonrpc": "2.0",
            "id": request.message["id"],
            "result": {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"},
                "resultType": "complete",
            },
        }
    )


def refusal_headers(world: World, refusal: str) -> list[tuple[str, str]]:
    headers = [("WWW-Authenticate", f'DPoP error="{refusal}"')]
    if refusal == "use_dpop_nonce" and world.rs_nonce is not None:
        headers.append(("DPoP-Nonce", world.rs_nonce))
    return headers


def verify_proof(proof: str, method: str, url: str) -> tuple[dict[str, Any], str]:
    """A DPoP proof's claims and key thumbprint, checked (RFC 9449 §4.3)."""
    head = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
    assert head["typ"] == "dpop+jwt"
    assert head["alg"] == "ES256"
    assert "d" not in head["jwk"]
    key = ECKey.import_key(head["jwk"])
    token = jwt.decode(proof, key, algorithms=["ES256"])
    claims = dict(token.claims)
    assert claims["htm"] == method, claims
    assert claims["htu"] == url, claims
    assert isinstance(claims["jti"], str)
    assert isinstance(claims["iat"], int)
    return claims, key.thumbprint()

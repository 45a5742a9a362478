"""Machine grants (client credentials, JWT bearer, enterprise-managed) and DPoP."""

from __future__ import annotations

import base64
import json

import pytest
import trio
import trio.testing
from joserfc import jwt
from joserfc.jwk import ECKey

import trimcp
from trimcp import auth

from ._world import World
from .test_code_flow import refused, run


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.02)


def basic(header: str) -> str:
    return base64.b64decode(header.removeprefix("Basic ")).decode()


async def test_client_credentials_with_a_secret(clock: trio.testing.MockClock) -> None:
    world = World(auth_methods=["client_secret_basic"], challenge_scope="mcp")
    await run(world, auth.ClientCredentials(client_id="svc", client_secret="pw"))
    (form, headers), *_ = world.token
    assert form["grant_type"] == "client_credentials"
    assert form["scope"] == "mcp"
    assert form["resource"] == world.url
    assert basic(headers["authorization"]) == "svc:pw"
    assert world.authorize == []
    assert world.registered == []


async def test_client_credentials_with_a_signed_assertion(clock: trio.testing.MockClock) -> None:
    key = ECKey.generate_key("P-256", private=True)
    pem = key.as_pem(private=True).decode()
    world = World(auth_methods=["private_key_jwt"])
    grant = auth.ClientCredentials(client_id="svc", private_key=pem, signing_algorithm="ES256")
    assert "BEGIN" not in repr(grant)
    await run(world, grant)
    (form, headers), *_ = world.token
    assert "authorization" not in headers
    assert "client_secret" not in form
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    public = ECKey.import_key(key.as_dict(private=False))
    claims = jwt.decode(form["client_assertion"], public, algorithms=["ES256"]).claims
    assert claims["iss"] == claims["sub"] == "svc"
    assert claims["aud"] == world.as_url  # the issuer (RFC 7523bis)
    assert claims["exp"] > claims["iat"]
    assert claims["jti"]


async def test_jwt_bearer_is_not_retried(clock: trio.testing.MockClock) -> None:
    calls = 0

    async def assertion() -> str:
        nonlocal calls
        calls += 1
        return "workload.jwt"

    world = World(refuse_grants=True)
    message = await refused(world, auth.JwtBearer(assertion=assertion, client_id="wl"))
    assert "invalid_grant" in message
    assert len(world.token) == 1
    assert calls == 1
    form, _ = world.token[0]
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert form["assertion"] == "workload.jwt"
    assert form["client_id"] == "wl"


async def test_enterprise_managed_exchanges_then_bears(clock: trio.testing.MockClock) -> None:
    world = World(auth_methods=["client_secret_basic"])

    def grant(world: World) -> auth.Grant:
        return auth.EnterpriseManaged(
            id_token="id.token",
            idp_token_endpoint=f"{world.as_origin}/idp/token",
            idp_client_id="idp-client",
            client_id="mcp-client",
            client_secret="mcp-secret",
        )

    await run(world, grant)
    (exchange, _), (bearer, headers) = world.token
    assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert exchange["subject_token"] == "id.token"
    assert exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert exchange["audience"] == world.as_url
    assert exchange["resource"] == world.url
    assert exchange["client_id"] == "idp-client"
    assert bearer["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert bearer["assertion"] == "id-jag-for-id.token"
    assert basic(headers["authorization"]) == "mcp-client:mcp-secret"


@pytest.mark.parametrize("nonces", [False, True])
async def test_dpop_bound_tokens(clock: trio.testing.MockClock, nonces: bool) -> None:
    world = World(dpop_challenge=True, dpop_algs=["ES256"])
    if nonces:
        world.as_nonce, world.rs_nonce = "as-nonce", "rs-nonce"
    oauth = await run(world)
    token_requests = [h for f, h in world.token if f.get("grant_type") == "authorization_code"]
    assert all("dpop" in h for h in token_requests)
    assert len(token_requests) == (2 if nonces else 1)  # one retry with the AS nonce
    (token,) = world.bound
    assert world.bound[token] == oauth.dpop_key.thumbprint
    sent = [h for h in world.mcp_auth if h]
    assert sent
    assert set(sent) == {f"DPoP {token}"}
    jtis = [p["jti"] for p in world.proofs]
    assert len(jtis) == len(set(jtis))  # a fresh proof for every request
    if nonces:
        assert world.proofs[0].get("nonce") is None  # challenged once ...
        assert all(p.get("nonce") == "rs-nonce" for p in world.proofs[1:])  # ... then kept


async def test_dpop_auto_stays_bearer_without_a_dpop_challenge(
    clock: trio.testing.MockClock,
) -> None:
    world = World(dpop_algs=["ES256"])
    await run(world)
    assert not world.bound
    assert all("dpop" not in h for _, h in world.token)
    world = World(dpop_algs=["ES256"])
    await run(world, dpop=True)
    assert world.bound


def test_token_type_is_case_insensitive_and_kept() -> None:
    from trimcp.auth.client._discovery import ServerMetadata
    from trimcp.auth.client._jose import NonceBook
    from trimcp.auth.client._token_endpoint import Endpoint
    from trimcp.transports.http import AuthorizationError, HttpFetcher

    server = ServerMetadata(issuer="https://as.example", token_endpoint="https://as.example/t")
    endpoint = Endpoint(
        fetcher=HttpFetcher(),
        server=server,
        resource="https://rs.example/mcp",
        dpop=None,
        nonces=NonceBook(),
        now=lambda: 100.0,
    )
    tokens = endpoint.tokens(
        {"access_token": "a", "token_type": "bearer", "expires_in": 10, "scope": "x y"}, None
    )
    assert tokens.token_type == "Bearer"
    assert tokens.expires_at == 110.0
    assert tokens.scope == ("x", "y")
    assert tokens.issuer == "https://as.example"
    for bad in (
        {"token_type": "bearer"},
        {"access_token": "a", "token_type": "mac"},
        {"access_token": "a", "token_type": "DPoP"},
    ):
        with pytest.raises(AuthorizationError):
            endpoint.tokens(bad, None)
    assert json.dumps(tokens.scope)


async def test_a_rotated_dpop_nonce_is_taken_up_by_concurrent_calls(
    clock: trio.testing.MockClock,
) -> None:
    """Calls already sent with the old nonce each prove again with the new one."""
    world = World(dpop_challenge=True, dpop_algs=["ES256"])
    world.rs_nonce = "n1"

    async def body(client: trimcp.Client) -> None:
        await client.call_tool("add", {"a": 0, "b": 0})
        world.rs_nonce = "n2"
        async with trio.open_nursery() as nursery:
            for i in range(5):
                nursery.start_soon(client.call_tool, "add", {"a": i, "b": 1})

    await run(world, body=body)
    assert world.proofs[-1]["nonce"] == "n2"
    assert len(world.authorize) == 1

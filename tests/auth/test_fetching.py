"""Key sets and introspection fetched for real, over trimcp's HTTP client, from the
example authorization server on 127.0.0.1."""

from __future__ import annotations

import pytest
import trio

from trimcp.auth import (
    IntrospectionVerifier,
    InvalidToken,
    JwksCache,
    JwtVerifier,
    VerifierUnavailable,
)

from .test_sdk_oauth import authorization_server


async def test_a_token_verifies_against_the_fetched_key_set() -> None:
    with trio.fail_after(20):
        async with authorization_server() as issuer:
            token = issuer._issue("client-x", "mcp:tools", "http://127.0.0.1:1/mcp")
            verifier = JwtVerifier(issuer=issuer.issuer, jwks_url=issuer.issuer + "/jwks")
            principal = await verifier.verify(token["access_token"])
            assert (principal.subject, principal.client_id) == ("demo-user", "client-x")
            assert principal.audience == ("http://127.0.0.1:1/mcp",)
            assert verifier.jwks.fetches == 1


async def test_introspection_over_http() -> None:
    with trio.fail_after(20):
        async with authorization_server() as issuer:
            token = issuer._issue("client-x", "mcp:tools", "http://127.0.0.1:1/mcp")
            endpoint = issuer.issuer + "/introspect"
            check = IntrospectionVerifier(endpoint, client_id="rs", client_secret="rs-secret")
            principal = await check.verify(token["access_token"])
            assert principal.scopes == {"mcp:tools"}
            with pytest.raises(InvalidToken):
                await check.verify("not-a-token")
            wrong = IntrospectionVerifier(endpoint, client_id="rs", client_secret="nope")
            with pytest.raises(VerifierUnavailable):  # the endpoint refused us: HTTP 401
                await wrong.verify(token["access_token"])


async def test_key_set_bounds_and_an_unreachable_server() -> None:
    with trio.fail_after(20):
        async with authorization_server() as issuer:
            tiny = JwksCache(issuer.issuer + "/jwks", max_bytes=50)
            with pytest.raises(VerifierUnavailable):
                await tiny.key("as-1")
            missing = JwksCache(issuer.issuer + "/no-such-path")
            with pytest.raises(VerifierUnavailable):
                await missing.key("as-1")
        # The server has stopped: its port refuses connections now.
        gone = JwksCache(issuer.issuer + "/jwks", timeout=5)
        with pytest.raises(VerifierUnavailable):
            await gone.key("as-1")

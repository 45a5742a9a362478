"""DPoP-bound tokens (RFC 9449) at the resource server."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing

from trimcp.auth import DpopVerifier, ResourceServer
from trimcp.transports.http import AuthRefusal

from ._issuer import RESOURCE, DpopKey, Issuer
from .test_resource_server import request


def setup(**options: Any) -> tuple[Issuer, DpopKey, ResourceServer, str]:
    issuer, client = Issuer(), DpopKey()
    required = options.pop("dpop_required", False)
    rs = issuer.resource_server(dpop=DpopVerifier(**options), dpop_required=required)
    return issuer, client, rs, issuer.token(cnf={"jkt": client.jkt})


def dpop(token: str, proof: str) -> list[tuple[str, str]]:
    return [("authorization", f"DPoP {token}"), ("dpop", proof)]


async def refusal_of(rs: ResourceServer, *headers: tuple[str, str]) -> AuthRefusal:
    with pytest.raises(AuthRefusal) as caught:
        await rs.authenticate(request(*headers))
    return caught.value


async def test_a_bound_token_with_its_proof_authenticates() -> None:
    _, client, rs, token = setup()
    principal = await rs.authenticate(request(*dpop(token, client.proof("POST", RESOURCE, token))))
    assert principal.jkt == client.jkt


async def test_the_proof_may_name_the_host_the_client_used() -> None:
    _, client, rs, token = setup()
    url = "http://127.0.0.1:8000/mcp?ignored=1"
    assert await rs.authenticate(request(*dpop(token, client.proof("POST", url, token))))


BAD_PROOFS: dict[str, Callable[[DpopKey, str], str]] = {
    "another key": lambda c, t: c.proof("POST", RESOURCE, t, key=DpopKey().key),
    "wrong method": lambda c, t: c.proof("GET", RESOURCE, t),
    "wrong url": lambda c, t: c.proof("POST", "http://127.0.0.1:8000/other", t),
    "another server": lambda c, t: c.proof("POST", "https://evil.example/mcp", t),
    "no ath": lambda c, t: c.proof("POST", RESOURCE, None),
    "ath of another token": lambda c, t: c.proof("POST", RESOURCE, t + "x"),
    "too old": lambda c, t: c.proof("POST", RESOURCE, t, iat=int(time.time()) - 600),
    "from the future": lambda c, t: c.proof("POST", RESOURCE, t, iat=int(time.time()) + 600),
    "no jti": lambda c, t: c.proof("POST", RESOURCE, t, jti=None),
    "no iat": lambda c, t: c.proof("POST", RESOURCE, t, iat=None),
    "typ JWT": lambda c, t: c.proof("POST", RESOURCE, t, header={"typ": "JWT"}),
    "private key in jwk": lambda c, t: c.proof(
        "POST", RESOURCE, t, header={"jwk": c.key.as_dict(private=True)}
    ),
    "not a JWT": lambda c, t: "not-a-proof",
    "oversized": lambda c, t: "a." * 5000 + "b",
}


@pytest.mark.parametrize("case", sorted(BAD_PROOFS))
async def test_bad_proofs_are_401_invalid_dpop_proof(case: str) -> None:
    _, client, rs, token = setup()
    refusal = await refusal_of(rs, *dpop(token, BAD_PROOFS[case](client, token)))
    assert refusal.status == 401
    assert refusal.error == "invalid_dpop_proof"
    dpop_challenge = [v for k, v in refusal.headers if v.startswith(b"DPoP ")]
    assert b'error="invalid_dpop_proof"' in dpop_challenge[0]
    assert b'algs="ES256' in dpop_challenge[0]


async def test_a_proof_is_accepted_once(clock: trio.testing.MockClock) -> None:
    _, client, rs, token = setup(max_age=300, leeway=60)
    proof = client.proof("POST", RESOURCE, token)
    await rs.authenticate(request(*dpop(token, proof)))
    refusal = await refusal_of(rs, *dpop(token, proof))
    assert "already used" in refusal.message
    clock.jump(1000)  # the replay window is over: the entry is gone (time checks aside)
    assert rs.dpop is not None
    rs.dpop._remember(client.jkt, "fresh")
    assert len(rs.dpop._seen) == 1


async def test_the_replay_cache_is_bounded_and_refuses_when_full() -> None:
    _, client, rs, token = setup(max_replay_entries=3)
    for _ in range(3):
        await rs.authenticate(request(*dpop(token, client.proof("POST", RESOURCE, token))))
    refusal = await refusal_of(rs, *dpop(token, client.proof("POST", RESOURCE, token)))
    assert refusal.status == 503


async def test_exactly_one_proof_is_needed() -> None:
    _, client, rs, token = setup()
    one = client.proof("POST", RESOURCE, token)
    for headers in ([("authorization", f"DPoP {token}")], [*dpop(token, one), ("dpop", one)]):
        refusal = await refusal_of(rs, *headers)
        assert refusal.error == "invalid_dpop_proof"


async def test_a_bound_token_sent_as_bearer_is_refused() -> None:
    _, _, rs, token = setup()
    refusal = await refusal_of(rs, ("authorization", f"Bearer {token}"))
    assert refusal.error == "invalid_token"
    assert "DPoP scheme" in refusal.message


async def test_an_unbound_token_sent_as_dpop_is_refused() -> None:
    issuer, client, rs, _ = setup()
    plain = issuer.token()
    refusal = await refusal_of(rs, *dpop(plain, client.proof("POST", RESOURCE, plain)))
    assert refusal.error == "invalid_token"


async def test_dpop_required_refuses_bearer_tokens_with_a_dpop_challenge() -> None:
    issuer, _, rs, _ = setup(dpop_required=True)
    refusal = await refusal_of(rs, ("authorization", f"Bearer {issuer.token()}"))
    assert refusal.status == 401
    values = [v for k, v in refusal.headers if k == b"www-authenticate"]
    assert len(values) == 1
    assert values[0].startswith(b'DPoP error="invalid_token"')


async def test_a_required_nonce_is_asked_for_then_accepted() -> None:
    _, client, rs, token = setup(require_nonce=True)
    refusal = await refusal_of(rs, *dpop(token, client.proof("POST", RESOURCE, token)))
    assert refusal.status == 401
    assert refusal.error == "use_dpop_nonce"
    nonce = dict(refusal.headers)[b"dpop-nonce"].decode()
    proof = client.proof("POST", RESOURCE, token, nonce=nonce)
    assert await rs.authenticate(request(*dpop(token, proof)))
    stale = client.proof("POST", RESOURCE, token, nonce="AAAAAAAAAAA")
    assert (await refusal_of(rs, *dpop(token, stale))).error == "use_dpop_nonce"


def test_dpop_is_advertised_in_the_metadata() -> None:
    _, _, rs, _ = setup()
    body = rs.metadata(request(path="/.well-known/oauth-protected-resource/mcp", method="GET"))
    assert body is not None
    assert b'"dpop_bound_access_tokens_required":false' in body
    assert b'"dpop_signing_alg_values_supported":["ES256"' in body

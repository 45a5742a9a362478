"""JWT access tokens: what is accepted, and every way a token is refused."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joserfc import jwk

from trimcp.auth import InvalidToken, JwtVerifier, Principal

from ._issuer import ISSUER, RESOURCE, Issuer, b64, unsigned


async def test_a_valid_token_gives_its_principal() -> None:
    issuer = Issuer()
    token = issuer.token(scope="mcp:tools files:read", cnf={"jkt": "abc"})
    principal = await issuer.verifier().verify(token)
    assert principal.subject == "alice"
    assert principal.client_id == "client-1"
    assert principal.scopes == {"mcp:tools", "files:read"}
    assert principal.issuer == ISSUER
    assert principal.audience == (RESOURCE,)
    assert principal.jkt == "abc"
    assert principal.claims["jti"]
    assert principal.identity == Principal("alice", "client-1", issuer=ISSUER).identity


async def test_scp_lists_and_azp_are_understood() -> None:
    issuer = Issuer()
    token = issuer.token(scope=None, scp=["a", "b"], client_id=None, azp="client-2")
    principal = await issuer.verifier().verify(token)
    assert principal.scopes == {"a", "b"}
    assert principal.client_id == "client-2"


async def test_expiry_and_not_before_allow_the_leeway_and_no_more() -> None:
    issuer = Issuer()
    now = int(time.time())
    verifier = issuer.verifier(leeway=30)
    await verifier.verify(issuer.token(exp=now - 20))
    with pytest.raises(InvalidToken, match="expired"):
        await verifier.verify(issuer.token(exp=now - 40))
    await verifier.verify(issuer.token(nbf=now + 20))
    with pytest.raises(InvalidToken):
        await verifier.verify(issuer.token(nbf=now + 40))


def _forged_hs256(issuer: Issuer) -> str:
    # Algorithm confusion: HMAC keyed with the issuer's *public* key (which joserfc
    # would refuse to do, so it is done by hand).
    public = jwk.import_key(issuer.keys["k1"].as_dict(private=False)).as_pem()
    head = b64(json.dumps({"alg": "HS256", "kid": "k1"}).encode())
    body = b64(json.dumps(issuer.claims()).encode())
    mac = hmac.new(public, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


REFUSED: dict[str, Any] = {
    "expired": lambda i: i.token(exp=int(time.time()) - 3600),
    "no exp": lambda i: i.token(exp=None),
    "other issuer": lambda i: i.token(iss="https://evil.example"),
    "no issuer": lambda i: i.token(iss=None),
    "no audience": lambda i: i.token(aud=None),
    "alg none": lambda i: unsigned({"alg": "none", "kid": "k1"}, i.claims()),
    "alg none, signature kept": lambda i: ".".join(
        [b64(b'{"alg":"none","kid":"k1"}'), *i.token().split(".")[1:]]
    ),
    "HS256 with the public key": _forged_hs256,
    "wrong key, same kid": lambda i: i.token(
        key=jwk.ECKey.generate_key("P-256", private=True, parameters={"kid": "k1"})
    ),
    "unknown kid": lambda i: i.token(
        key=jwk.ECKey.generate_key("P-256", private=True, parameters={"kid": "zz"})
    ),
    "tampered claims": lambda i: ".".join(
        [i.token().split(".")[0], b64(b'{"sub":"root"}'), i.token().split(".")[2]]
    ),
    "a DPoP proof": lambda i: i.token(header={"typ": "dpop+jwt"}),
    "an ID token type": lambda i: i.token(header={"typ": "id_token+jwt"}),
    "not a JWT": lambda i: "abc.def",
    "encrypted shape": lambda i: "a.b.c.d.e",
    "bad base64": lambda i: "!!!.???.***",
    "empty parts": lambda i: "..",
}


@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_bad_tokens_are_invalid_never_an_other_error(case: str) -> None:
    issuer = Issuer()
    token = REFUSED[case](issuer)
    with pytest.raises(InvalidToken) as caught:
        await issuer.verifier().verify(token)
    assert token not in str(caught.value)


def test_none_and_symmetric_algorithms_cannot_be_configured() -> None:
    issuer = Issuer()
    for alg in ("none", "HS256"):
        with pytest.raises(ValueError, match="signed asymmetrically"):
            JwtVerifier(issuer=ISSUER, jwks=issuer.verifier().jwks, algorithms=[alg])


_ISSUER = Issuer()
_VALID = _ISSUER.token()
_SEGMENTS = r"[A-Za-z0-9_\-]{0,40}(\.[A-Za-z0-9_\-]{0,40}){2}"


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    """The valid token with a slice replaced by other base64url characters."""
    start = draw(st.integers(0, len(_VALID) - 1))
    end = draw(st.integers(start, min(len(_VALID), start + 8)))
    filler = draw(st.text("ABCabc019-_.", min_size=1, max_size=8))
    return _VALID[:start] + filler + _VALID[end:]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=300), st.from_regex(_SEGMENTS), _mutated()))
async def test_any_string_is_the_valid_token_or_invalid(token: str) -> None:
    """Bytes from a hostile client never raise anything but InvalidToken, and no
    changed token verifies (property: decoding never surprises)."""
    verifier = _ISSUER.verifier()
    try:
        principal = await verifier.verify(token)
    except InvalidToken:
        return
    assert principal.claims == (await verifier.verify(_VALID)).claims

"""Properties of authorization: hostile credentials never get past 401 or crash a request,
state is served only to its owner, and every public async API is a checkpoint."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.auth import InvalidToken, JwksCache, VerifierUnavailable
from trimcp.transports.http import AuthRefusal

from ..http_server._asgi import rpc, running
from ._issuer import JWKS_URL, Issuer
from ._server import auth_headers, open_session, post, protected_server
from .test_introspection import Endpoint, active, verifier
from .test_resource_server import bearer, request

_ISSUER = Issuer()
_HEADER_TEXT = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"),
    max_size=200,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scheme=st.sampled_from(["Bearer ", "bearer ", "DPoP ", "Basic ", "", "Bearer  "]),
    value=st.one_of(_HEADER_TEXT, st.just(_ISSUER.token(aud="x"))),
    query=st.sampled_from([b"", b"access_token=abc", b"a=1&access_token="]),
)
async def test_hostile_credentials_are_always_401(scheme: str, value: str, query: bytes) -> None:
    """Whatever a client puts in ``Authorization`` (and the query), the answer is a 401
    challenge: never a 500, never the token echoed, never a request served."""
    rs = _ISSUER.resource_server()
    header = ("authorization", (scheme + value).strip() or "Bearer")
    with pytest.raises(AuthRefusal) as caught:
        await rs.authenticate(request(header, query=query))
    assert caught.value.status == 401
    assert all(k == b"www-authenticate" for k, _ in caught.value.headers)
    if len(value) > 3 and value in caught.value.message:
        # Not an echo when the refusal says the same for another credential: the value
        # is only a piece of the server's own words ("acce" of "access tokens ...").
        other_header = ("authorization", (scheme + "zzzz").strip())
        with pytest.raises(AuthRefusal) as other:
            await rs.authenticate(request(other_header, query=query))
        assert value in other.value.message


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    owner=st.tuples(st.sampled_from(["alice", "bob"]), st.sampled_from(["c1", "c2"])),
    presenter=st.tuples(st.sampled_from(["alice", "bob"]), st.sampled_from(["c1", "c2"])),
)
async def test_a_session_serves_exactly_its_owner(
    owner: tuple[str, str], presenter: tuple[str, str]
) -> None:
    async with running(protected_server(_ISSUER)) as client:
        session = await open_session(client, _ISSUER.token(sub=owner[0], client_id=owner[1]))
        token = _ISSUER.token(sub=presenter[0], client_id=presenter[1])
        reply = await post(client, token, rpc(2, "ping"), session)
        assert reply.status == (200 if owner == presenter else 404)


async def test_the_public_async_apis_are_checkpoints() -> None:
    issuer = Issuer()
    keys = JwksCache(JWKS_URL, fetcher=issuer.fetch)
    await keys.key("k1")
    with trio.testing.assert_checkpoints():
        await keys.key("k1")  # cached
    with trio.testing.assert_checkpoints(), pytest.raises(InvalidToken):
        await keys.key("unknown")
    rs = issuer.resource_server()
    with trio.testing.assert_checkpoints(), pytest.raises(AuthRefusal):
        await rs.authenticate(request())  # refused before any verification
    with trio.testing.assert_checkpoints():
        await rs.authenticate(request(bearer(issuer.token())))
    endpoint = Endpoint()
    endpoint.answers["tok"] = active()
    check = verifier(endpoint)
    await check.verify("tok")
    with trio.testing.assert_checkpoints():
        await check.verify("tok")  # cached
    issuer.down = True
    down = JwksCache(JWKS_URL, fetcher=issuer.fetch)
    with trio.testing.assert_checkpoints(), pytest.raises(VerifierUnavailable):
        await down.key("k1")


async def test_hostile_credentials_over_http_never_make_a_session() -> None:
    async with running(protected_server(_ISSUER)) as client:
        for value in ("Bearer", "Bearer \x00", "DPoP x", "Bearer " + "a" * 20000, "Bearer ."):
            headers = auth_headers(None)
            headers["authorization"] = value
            reply = await client.request("POST", rpc(1, "initialize", {}), headers)
            assert reply.status in (401, 431), (value, reply.status)
        assert not client.app.manager

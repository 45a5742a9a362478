"""ResourceServer.authenticate and its refusals, straight from request parts."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from trimcp.auth import InvalidToken, Principal, ResourceServer, VerifierUnavailable
from trimcp.transports.http import AuthRefusal, AuthRequest
from trimcp.transports.http._guards import Headers

from ._issuer import ISSUER, RESOURCE, Issuer

METADATA = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


def request(
    *headers: tuple[str, str], path: str = "/mcp", query: bytes = b"", method: str = "POST"
) -> AuthRequest:
    raw = [(b"host", b"127.0.0.1:8000"), *((k.encode(), v.encode()) for k, v in headers)]
    return AuthRequest(
        method=method,
        scheme="http",
        host="127.0.0.1:8000",
        path=path,
        query=query,
        server=("127.0.0.1", 8000),
        headers=Headers(raw),
        resource_path="/mcp",
    )


def bearer(token: str) -> tuple[str, str]:
    return ("authorization", f"Bearer {token}")


async def refused(rs: ResourceServer, req: AuthRequest) -> AuthRefusal:
    with pytest.raises(AuthRefusal) as caught:
        await rs.authenticate(req)
    return caught.value


def challenges(refusal: AuthRefusal) -> list[str]:
    return [v.decode() for k, v in refusal.headers if k == b"www-authenticate"]


async def test_a_valid_bearer_token_authenticates() -> None:
    issuer = Issuer()
    principal = await issuer.resource_server().authenticate(request(bearer(issuer.token())))
    assert isinstance(principal, Principal)
    assert principal.subject == "alice"


async def test_no_token_is_401_with_the_metadata_url_and_no_error() -> None:
    issuer = Issuer()
    refusal = await refused(issuer.resource_server(required_scopes=["mcp:tools"]), request())
    assert refusal.status == 401
    assert challenges(refusal) == [f'Bearer scope="mcp:tools", resource_metadata="{METADATA}"']
    assert refusal.error is None


async def test_another_scheme_counts_as_no_token() -> None:
    issuer = Issuer()
    refusal = await refused(issuer.resource_server(), request(("authorization", "Basic eDp5")))
    assert refusal.status == 401
    assert "error=" not in challenges(refusal)[0]


@pytest.mark.parametrize(
    ("headers", "query", "error"),
    [
        ([("authorization", "Bearer ")], b"", "invalid_request"),
        ([("authorization", "Bearer a"), ("authorization", "Bearer b")], b"", "invalid_request"),
        ([], b"access_token=abc", "invalid_request"),
        ([("authorization", "Bearer " + "a" * 9000)], b"", "invalid_token"),
        ([("authorization", "Bearer a b")], b"", "invalid_token"),
        ([("authorization", 'Bearer "quoted"')], b"", "invalid_token"),
        ([("authorization", "Bearer abc.def.ghi")], b"", "invalid_token"),
    ],
)
async def test_malformed_credentials_are_401_with_an_error(
    headers: list[tuple[str, str]], query: bytes, error: str
) -> None:
    issuer = Issuer()
    refusal = await refused(issuer.resource_server(), request(*headers, query=query))
    assert refusal.status == 401
    assert refusal.error == error
    assert f'error="{error}"' in challenges(refusal)[0]
    assert f'resource_metadata="{METADATA}"' in challenges(refusal)[0]


async def test_a_token_for_another_resource_is_refused() -> None:
    """RFC 8707: no token passthrough, even one the same issuer signed."""
    issuer = Issuer()
    token = issuer.token(aud="http://127.0.0.1:9999/mcp")
    refusal = await refused(issuer.resource_server(), request(bearer(token)))
    assert refusal.status == 401
    assert "not issued for this resource" in refusal.message
    token = issuer.token(aud=["https://other.example", RESOURCE + "/"])
    assert await issuer.resource_server().authenticate(request(bearer(token)))


async def test_a_configured_resource_and_extra_audiences() -> None:
    issuer = Issuer()
    rs = issuer.resource_server(resource="https://mcp.example/mcp", audiences=["urn:mcp"])
    with pytest.raises(AuthRefusal):
        await rs.authenticate(request(bearer(issuer.token())))
    for aud in ("https://MCP.example:443/mcp", "urn:mcp"):
        assert await rs.authenticate(request(bearer(issuer.token(aud=aud))))


async def test_missing_required_scopes_are_403_insufficient_scope() -> None:
    issuer = Issuer()
    rs = issuer.resource_server(required_scopes=["mcp:tools", "mcp:admin"])
    refusal = await refused(rs, request(bearer(issuer.token())))
    assert refusal.status == 403
    assert refusal.error == "insufficient_scope"
    assert 'scope="mcp:admin mcp:tools"' in challenges(refusal)[0]


async def test_an_unreachable_key_set_is_503_with_retry_after() -> None:
    issuer = Issuer()
    issuer.down = True
    refusal = await refused(issuer.resource_server(), request(bearer(issuer.token())))
    assert refusal.status == 503
    assert dict(refusal.headers)[b"retry-after"] == b"30"


class _Verifier:
    def __init__(self, principal: Principal | Exception) -> None:
        self.principal = principal

    async def verify(self, token: str) -> Principal:
        if isinstance(self.principal, Exception):
            raise self.principal
        return self.principal


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        (InvalidToken("revoked"), 401),
        (VerifierUnavailable("down", retry_after=7), 503),
        (Principal("bob", "c", audience=()), 401),  # a verifier that named no audience
        (Principal("bob", "c", audience=[RESOURCE], expires_at=time.time() - 3600), 401),
        (Principal("bob", "c", audience=[RESOURCE], jkt="thumb"), 401),  # DPoP-bound
        (Principal("bob", "c", audience=[RESOURCE]), None),
    ],
)
async def test_the_checks_every_verifier_shares(outcome: Any, status: int | None) -> None:
    rs = ResourceServer(_Verifier(outcome), authorization_servers=[ISSUER])
    if status is None:
        assert await rs.authenticate(request(bearer("opaque-token")))
        return
    refusal = await refused(rs, request(bearer("opaque-token")))
    assert refusal.status == status


def test_the_metadata_document_is_served_at_the_path_aware_url() -> None:
    issuer = Issuer()
    rs = issuer.resource_server(resource_name="Demo", required_scopes=["mcp:tools"])
    assert rs.metadata(request(path="/.well-known/oauth-protected-resource")) is None
    assert rs.metadata(request(path="/mcp")) is None
    body = rs.metadata(
        request(path="/.well-known/oauth-protected-resource/mcp", method="GET"), ["files:read"]
    )
    assert body is not None
    assert json.loads(body) == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["files:read", "mcp:tools"],
        "resource_name": "Demo",
    }


def test_the_resource_follows_the_local_address_never_the_host_header() -> None:
    issuer = Issuer()
    rs = issuer.resource_server()
    forged = request(("host", "evil.example"))
    assert rs.resource_for(forged) == RESOURCE
    v6 = AuthRequest("GET", "http", "x", "/mcp", b"", ("::1", 80), Headers([]), "/mcp")
    assert rs.resource_for(v6) == "http://[::1]/mcp"


async def test_refusals_never_carry_the_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    issuer = Issuer()
    tokens = [issuer.token(exp=1), issuer.token(aud="x"), "secret-opaque-token-value"]
    for token in tokens:
        refusal = await refused(issuer.resource_server(), request(bearer(token)))
        assert token not in refusal.message
        assert all(token.encode() not in v for _, v in refusal.headers)
    assert not any(t in caplog.text for t in tokens)

"""The pieces on their own: challenge parsing, the URL policy and well-known URLs,
PKCE, storage and nonce bounds, and the era probe meeting a challenge."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

import trimcp
from trimcp.auth import ClientInfo, MemoryTokenStorage, Tokens
from trimcp.auth.client._authcode import pkce_pair, s256
from trimcp.auth.client._challenge import parse_challenges
from trimcp.auth.client._jose import NonceBook
from trimcp.auth.client._urls import (
    authorization_server_urls,
    is_allowed_url,
    protected_resource_urls,
    resource_matches,
)

from ..http_client._fake import Exchange, FakeRequest, mcp_app, start_server


def test_challenges_are_parsed() -> None:
    (one,) = parse_challenges(
        [
            'Bearer realm="mcp", error="insufficient_scope", scope="a b",'
            ' resource_metadata="https://rs.example/.well-known/x", error_description="q\\"d"'
        ]
    )
    assert one.scheme == "bearer"
    assert one.error == "insufficient_scope"
    assert one.scope == ["a", "b"]
    assert one.resource_metadata == "https://rs.example/.well-known/x"
    assert one.params["error_description"] == 'q"d'
    dpop, bearer = parse_challenges(['DPoP algs="ES256", error=use_dpop_nonce, Bearer x=1'])
    assert (dpop.scheme, dpop.error, dpop.params["algs"]) == ("dpop", "use_dpop_nonce", "ES256")
    assert (bearer.scheme, bearer.params) == ("bearer", {"x": "1"})
    basic, token68 = parse_challenges(["Basic, Negotiate abc==", ""])
    assert basic.params == {}
    assert token68.scheme == "negotiate"
    assert token68.params == {}
    assert parse_challenges(["=", ",,,", '"unterminated']) == []


@given(st.lists(st.text(max_size=200), max_size=4))
def test_challenge_parsing_never_raises(values: list[str]) -> None:
    for challenge in parse_challenges(values):
        assert challenge.scheme
        assert challenge.scheme == challenge.scheme.lower()


_token = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=12)
_value = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


@given(_token, st.dictionaries(_token, _value, max_size=5))
def test_quoted_parameters_round_trip(scheme: str, params: dict[str, str]) -> None:
    """Whatever a server quotes, the client reads back exactly."""
    quoted = ", ".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in params.items()
    )
    (challenge,) = parse_challenges([f"{scheme} {quoted}"])
    assert challenge.scheme == scheme
    assert challenge.params == params


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://as.example/authorize?x=1", True),
        ("http://127.0.0.1:8080/token", True),
        ("http://localhost/token", True),
        ("http://[::1]:9/t", True),
        ("http://as.example/token", False),  # clear text beyond loopback
        ("http://127.0.0.1.evil.example/t", False),
        ("javascript:alert(1)", False),
        ("file:///etc/passwd", False),
        ("https://user:pw@as.example/", False),
        ("https://as.example/#frag", False),
        ("https:///nohost", False),
        ("https://as.example:99999/", False),
        ("https://as.example/\nx", False),
        ("https://as.example/" + "a" * 5000, False),
    ],
)
def test_url_policy(url: str, allowed: bool) -> None:
    assert is_allowed_url(url) is allowed


def test_well_known_urls() -> None:
    assert protected_resource_urls("https://rs.example/mcp") == [
        "https://rs.example/.well-known/oauth-protected-resource/mcp",
        "https://rs.example/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_urls("https://rs.example/") == [
        "https://rs.example/.well-known/oauth-protected-resource"
    ]
    assert authorization_server_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]
    assert authorization_server_urls("https://as.example/t/1") == [
        "https://as.example/.well-known/oauth-authorization-server/t/1",
        "https://as.example/.well-known/openid-configuration/t/1",
        "https://as.example/t/1/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "server", "ok"),
    [
        ("https://rs.example/mcp", "https://rs.example/mcp", True),
        ("https://rs.example", "https://rs.example/mcp", True),
        ("https://RS.example:443/", "https://rs.example/mcp", True),
        ("https://rs.example/api", "https://rs.example/api/mcp", True),
        ("https://rs.example/mc", "https://rs.example/mcp", False),
        ("https://rs.example/other", "https://rs.example/mcp", False),
        ("https://evil.example/mcp", "https://rs.example/mcp", False),
        ("http://rs.example/mcp", "https://rs.example/mcp", False),
        ("https://rs.example:8443/mcp", "https://rs.example/mcp", False),
        ("https://rs.example/mcp?x", "https://rs.example/mcp", False),
    ],
)
def test_resource_matching(resource: str, server: str, ok: bool) -> None:
    assert resource_matches(resource, server) is ok


def test_pkce() -> None:
    # RFC 7636 appendix B
    assert (
        s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )
    pairs = {pkce_pair() for _ in range(20)}
    assert len(pairs) == 20
    for verifier, challenge in pairs:
        assert 43 <= len(verifier) <= 128
        assert s256(verifier) == challenge
        assert set(verifier) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        )


async def test_memory_storage_is_bounded_and_checkpoints() -> None:
    storage = MemoryTokenStorage(max_entries=2)
    for i in range(3):
        with trio.testing.assert_checkpoints():
            await storage.set_tokens(f"r{i}", Tokens(access_token=f"t{i}"))
        with trio.testing.assert_checkpoints():
            await storage.set_client(f"i{i}", ClientInfo(client_id=f"c{i}"))
    with trio.testing.assert_checkpoints():
        assert await storage.get_tokens("r0") is None  # the oldest went first
    with trio.testing.assert_checkpoints():
        assert await storage.get_client("i0") is None
    assert (await storage.get_tokens("r2")) == Tokens(access_token="t2")
    await storage.set_tokens("r2", None)
    assert await storage.get_tokens("r2") is None
    with pytest.raises(ValueError, match="max_entries"):
        MemoryTokenStorage(max_entries=0)


def test_nonce_book_is_bounded() -> None:
    book = NonceBook(max_origins=2)
    assert book.put("https://a.example/x", "n1")
    assert not book.put("https://a.example/y", "n1")
    assert book.get("https://a.example/z") == "n1"
    assert not book.put("https://b.example/", "bad\nnonce")
    assert not book.put("https://b/", "")
    book.put("https://b.example/", "n2")
    book.put("https://c.example/", "n3")
    assert book.get("https://a.example/") is None
    assert book.get("https://c.example/") == "n3"


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.02)


async def test_probe_raises_a_challenge_instead_of_falling_back(
    clock: trio.testing.MockClock,
) -> None:
    """Without auth, a 401 to server/discover is raised; initialize is never tried."""

    async def challenge(request: FakeRequest, ex: Exchange) -> None:
        await ex.json(
            {"error": "invalid_token"},
            401,
            [("WWW-Authenticate", 'Bearer resource_metadata="http://127.0.0.1:1/x"')],
        )

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"server/discover": challenge}))
        transport = trimcp.streamable_http(server.url, listen=False)

        async def connect() -> None:
            with trio.fail_after(10):
                async with trimcp.open_client(transport, era="auto"):
                    pass

        with pytest.raises(trimcp.McpError) as caught:
            await connect()
        nursery.cancel_scope.cancel()
    assert caught.value.data["httpStatus"] == 401
    assert [r.rpc_method for r in server.of("POST")] == ["server/discover"]


@given(
    st.sampled_from(["http", "https", "HTTP", "ftp", "javascript", "file", ""]),
    st.sampled_from(
        ["127.0.0.1", "localhost", "[::1]", "127.9.9.9", "example.com", "10.0.0.1", "", "a@b"]
    ),
    st.text(max_size=30),
)
def test_url_policy_property(scheme: str, host: str, rest: str) -> None:
    """Never raises; whatever it allows is https, or http to a loopback host."""
    url = f"{scheme}://{host}/{rest}"
    if is_allowed_url(url):
        lowered = url.lower()
        assert lowered.startswith("https://") or host in (
            "127.0.0.1",
            "localhost",
            "[::1]",
            "127.9.9.9",
        )
        assert "@" not in url.split("/")[2]

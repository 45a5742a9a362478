"""The authorization code flow end to end against a scripted server pair on 127.0.0.1:
discovery and its fallbacks, PKCE, resource indicators, registration, iss checks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp import auth

from ._world import World

WAIT = 30


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after 20 ms of real idleness (real loopback I/O)."""
    return trio.testing.MockClock(autojump_threshold=0.02)


def code_grant(**kwargs: Any) -> auth.AuthorizationCode:
    kwargs.setdefault("redirect", auth.fetch_redirect)
    return auth.AuthorizationCode(**kwargs)


async def run(
    world: World,
    grant: auth.Grant | Callable[[World], auth.Grant] | None = None,
    body: Callable[[trimcp.Client], Awaitable[Any]] | None = None,
    **options: Any,
) -> auth.OAuth:
    """Serve ``world``, connect with OAuth(grant), run ``body`` (default: call a tool).

    ``grant`` may be a function of the started world (for URLs that need its ports).
    """
    failure: trimcp.McpError | None = None
    async with trio.open_nursery() as nursery:
        await world.start(nursery)
        made = grant(world) if callable(grant) else grant
        oauth = auth.OAuth(made or code_grant(), **options)
        transport = trimcp.streamable_http(world.url, listen=False, auth=oauth)
        try:
            with trio.fail_after(WAIT):
                async with trimcp.open_client(transport, era="auto") as client:
                    if body is None:
                        await client.call_tool("add", {"a": 1, "b": 2})
                    else:
                        await body(client)
        except trimcp.McpError as exc:
            failure = exc
        finally:
            nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return oauth


async def refused(
    world: World, grant: auth.Grant | Callable[[World], auth.Grant] | None = None, **options: Any
) -> str:
    """The message of the McpError the first call fails with."""
    with pytest.raises(trimcp.McpError) as caught:
        await run(world, grant, **options)
    assert caught.value.data["httpStatus"] in (401, 403)
    return caught.value.message


async def test_full_flow_pkce_resource_and_bearer(clock: trio.testing.MockClock) -> None:
    world = World(scopes_supported=["mcp:read", "mcp:write"])
    await run(world)
    (query,) = world.authorize
    assert query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43
    assert query["resource"] == world.url
    assert query["scope"] == "mcp:read mcp:write"  # all of scopes_supported
    assert query["client_id"] == "client-1"
    form, _ = world.token[0]
    assert form["resource"] == query["resource"]  # identical in both requests
    assert 43 <= len(form["code_verifier"]) <= 128
    assert form["client_id"] == "client-1"  # auth method "none": the id in the form
    assert "client_secret" not in form
    (registration,) = world.registered
    assert registration["application_type"] == "native"
    assert registration["token_endpoint_auth_method"] == "none"
    assert registration["redirect_uris"] == ["http://127.0.0.1:33418/callback"]
    # every MCP request after the first challenge carries the token
    (token,) = world.issued
    first = world.mcp_auth.index(f"Bearer {token}")
    assert world.mcp_auth[:first] == [None]  # the probe, challenged
    assert set(world.mcp_auth[first:]) == {f"Bearer {token}"}


async def test_scope_from_challenge_wins_and_is_omitted_when_undefined(
    clock: trio.testing.MockClock,
) -> None:
    world = World(scopes_supported=["a", "b"], challenge_scope="mcp:basic")
    await run(world)
    assert world.authorize[0]["scope"] == "mcp:basic"
    world = World()
    await run(world)
    assert "scope" not in world.authorize[0]


@pytest.mark.parametrize(("link", "prm_at"), [(True, "path"), (False, "path"), (False, "root")])
async def test_resource_metadata_locations(
    clock: trio.testing.MockClock, link: bool, prm_at: str
) -> None:
    world = World(link=link, prm_at=prm_at)
    await run(world)
    assert world.rs is not None
    asked = [r.target for r in world.rs.of("GET")]
    if prm_at == "path":
        assert asked == ["/.well-known/oauth-protected-resource/mcp"]
    else:  # the path-based URL first, then the root one
        assert asked == [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ]
    # the resource sent is the metadata's, verbatim (the root: no trailing slash)
    expected = world.url if prm_at == "path" else world.rs_origin
    assert world.authorize[0]["resource"] == expected


@pytest.mark.parametrize("metadata_at", ["oauth", "oidc"])
async def test_issuer_with_a_path(clock: trio.testing.MockClock, metadata_at: str) -> None:
    world = World(as_path="/tenant1", metadata_at=metadata_at)
    await run(world)
    assert world.auth is not None
    asked = [r.target for r in world.auth.of("GET") if "well-known" in r.target]
    order = [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration",
    ]
    assert asked == order[: order.index(world.metadata_path() or "") + 1]
    assert "/.well-known/oauth-authorization-server" not in asked  # never the root


async def test_legacy_server_without_any_metadata(clock: trio.testing.MockClock) -> None:
    """2025-03-26: no resource metadata, no AS metadata: /authorize etc. at the origin."""
    world = World(prm_at=None, metadata_at=None)
    async with trio.open_nursery() as nursery:
        await world.start(nursery)
        world.as_path = ""
        # the resource server is its own authorization server: point both at one origin
        assert world.rs is not None
        assert world.auth is not None
        world.rs.app = _merged(world)
        oauth = auth.OAuth(code_grant())
        transport = trimcp.streamable_http(world.url, listen=False, auth=oauth)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="auto") as client:
                await client.list_tools()
        nursery.cancel_scope.cancel()
    assert world.registered
    assert world.authorize
    assert world.token
    assert "resource" not in world.authorize[0]  # no metadata named a resource


def _merged(world: World) -> Any:
    rs_app, as_app = world._rs_app, world._as_app

    async def app(request: Any, ex: Any) -> None:
        if request.target.startswith("/mcp"):
            await rs_app(request, ex)
        else:
            await as_app(request, ex)

    world.auth = world.rs  # the metadata and endpoints live at the resource's origin
    return app


async def test_resource_mismatch_is_refused_before_authorizing(
    clock: trio.testing.MockClock,
) -> None:
    world = World(prm_resource="https://evil.example/mcp")
    message = await refused(world)
    assert "another resource" in message
    assert world.authorize == []
    assert world.registered == []


async def test_issuer_mismatch_is_refused_and_its_endpoints_unused(
    clock: trio.testing.MockClock,
) -> None:
    world = World(issuer="https://attacker.example")
    message = await refused(world)
    assert "another issuer" in message
    assert world.authorize == []
    assert world.registered == []
    assert world.token == []


@pytest.mark.parametrize(
    ("supported", "mode", "accepted"),
    [
        (True, "correct", True),
        (False, "omit", True),
        (True, "omit", False),
        (True, "wrong", False),
        (False, "wrong", False),
    ],
)
async def test_iss_parameter(
    clock: trio.testing.MockClock, supported: bool, mode: str, accepted: bool
) -> None:
    world = World(iss_supported=supported, iss_mode=mode)
    if accepted:
        await run(world)
        assert world.token
    else:
        await refused(world)
        assert world.authorize
        assert not world.token


async def test_trailing_slash_iss_is_a_mismatch(clock: trio.testing.MockClock) -> None:
    """RFC 9207: simple string comparison, no URL normalization."""
    world = World(iss_supported=True, iss_mode="slash")
    await refused(world)
    assert world.authorize
    assert not world.token


async def test_state_mismatch_is_refused(clock: trio.testing.MockClock) -> None:
    async def forged(url: str) -> str:
        landed = await auth.fetch_redirect(url)
        return landed.replace("state=", "state=x")

    world = World()
    message = await refused(world, code_grant(redirect=forged))
    assert "state" in message
    assert not world.token


@pytest.mark.parametrize(
    ("methods", "header", "in_form"),
    [
        (["client_secret_basic"], True, {"client_id"}),
        (["client_secret_post"], False, {"client_id", "client_secret"}),
        (["none"], False, {"client_id"}),
    ],
)
async def test_token_endpoint_auth_follows_the_server(
    clock: trio.testing.MockClock, methods: list[str], header: bool, in_form: set[str]
) -> None:
    world = World(auth_methods=methods)
    await run(world)
    form, headers = world.token[0]
    assert ("authorization" in headers) is header
    if header:
        assert headers["authorization"] == "Basic Y2xpZW50LTE6c2VjcmV0LTE="  # client-1:secret-1
    assert in_form == {k for k in form if k in ("client_id", "client_secret")}


async def test_pre_registered_client_without_registration(clock: trio.testing.MockClock) -> None:
    world = World(registration=False, auth_methods=["client_secret_basic"])
    client = auth.ClientInfo(client_id="pre id", client_secret="s:cret")
    await run(world, code_grant(client=client))
    _, headers = world.token[0]
    # RFC 6749 §2.3.1: both form-encoded before Basic
    assert headers["authorization"] == "Basic cHJlJTIwaWQ6cyUzQWNyZXQ="
    assert world.authorize[0]["client_id"] == "pre id"
    assert not world.registered


async def test_no_way_to_register_is_a_clear_refusal(clock: trio.testing.MockClock) -> None:
    message = await refused(World(registration=False))
    assert "ClientInfo" in message


async def test_client_id_metadata_document(clock: trio.testing.MockClock) -> None:
    url = "https://client.example/metadata.json"
    world = World(cimd=True)
    await run(world, code_grant(client_metadata_url=url))
    assert world.authorize[0]["client_id"] == url
    assert not world.registered


async def test_offline_access_only_when_listed(clock: trio.testing.MockClock) -> None:
    world = World(as_scopes=["mcp", "offline_access"], challenge_scope="mcp")
    await run(world)
    assert world.authorize[0]["scope"] == "mcp offline_access"
    assert world.registered[0]["grant_types"] == ["authorization_code", "refresh_token"]
    world = World(as_scopes=["mcp"], challenge_scope="mcp", grant_types=["authorization_code"])
    await run(world)
    assert world.authorize[0]["scope"] == "mcp"
    assert world.registered[0]["grant_types"] == ["authorization_code"]


async def test_refused_redirect_scheme(clock: trio.testing.MockClock) -> None:
    """A server-supplied URL outside the policy is never fetched nor shown."""
    shown: list[str] = []

    async def redirect(url: str) -> str:
        shown.append(url)
        return url

    world = World(authorization_endpoint="javascript:alert(1)")
    message = await refused(world, code_grant(redirect=redirect))
    assert "authorization endpoint URL" in message
    assert shown == []
    assert world.registered == []


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_loopback_redirect_catches_the_browsers_return(
    clock: trio.testing.MockClock,
) -> None:
    """A stand-in browser follows the authorization server's redirect to the listener."""
    from trimcp.transports.http import HttpFetcher

    opened: list[str] = []

    async def browser(url: str) -> None:
        opened.append(url)
        fetcher = HttpFetcher()
        try:
            assert (
                await fetcher.request("GET", f"http://127.0.0.1:{port}/favicon.ico")
            ).status == 404
            landed = await auth.fetch_redirect(url)
            answer = await fetcher.request("GET", landed)
            assert answer.status == 200
            assert b"close this window" in answer.body
        finally:
            await fetcher.aclose()

    port = free_port()
    catcher = auth.LoopbackRedirect(browser, port=port)
    world = World()
    await run(world, code_grant(redirect=catcher, redirect_uri=catcher.redirect_uri))
    assert len(opened) == 1
    assert world.authorize[0]["redirect_uri"] == f"http://127.0.0.1:{port}/callback"
    assert world.token  # the code came back through the listener

"""The authorization guides run as written: the protected server refuses a caller
without a token as the page says, and the OAuth client gets in, steps up and prints
what the page shows, against examples/auth's authorization server (127.0.0.1 only)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import pytest
import trio

import trimcp

from ..auth._flow import authorization_server
from ._load import load
from ._pages import SNIPPETS


@asynccontextmanager
async def protected(issuer: str) -> AsyncIterator[str]:
    server = load("howto/auth_server.py", ISSUER=issuer).server
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(trimcp.serve_http, server, port=0))
        yield f"http://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


async def test_a_caller_without_a_token_gets_401() -> None:
    with trio.fail_after(60):
        async with authorization_server() as issuer, protected(issuer.issuer) as url:
            with pytest.raises(trimcp.McpError) as refused:
                async with trimcp.open_client(trimcp.streamable_http(url)):
                    pass
    assert refused.value.data["httpStatus"] == 401


async def test_the_oauth_client_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    client = load("howto/auth_client.py")
    with trio.fail_after(60):
        async with authorization_server() as issuer, protected(issuer.issuer) as url:
            await client.main(url)
    expected = (SNIPPETS / "howto/auth_client.txt").read_text(encoding="utf-8")
    assert capsys.readouterr().out == expected
    assert issuer.events["authorize"] == 2  # the first authorization, then the step-up


def test_the_desktop_grant_catches_the_browser_on_loopback() -> None:
    grant = load("howto/auth_client.py").desktop_grant()
    assert grant.redirect_uri == "http://127.0.0.1:33418/callback"

"""Interop: trimcp's OAuth client against the official Python SDK's authorization and
resource server (``sdk_auth_server.py``, on uvicorn, as a subprocess on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

import trimcp
from trimcp import auth

from ..http_client._sdk import served

SERVER = Path(__file__).with_name("sdk_auth_server.py")
WAIT = 30

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    yield from served(SERVER)


def text(result: trimcp.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, trimcp.TextContent)
    return block.text


async def test_code_flow_then_refresh_against_the_sdk(url: str) -> None:
    now = [0.0]
    storage = auth.MemoryTokenStorage()
    steps: list[str] = []

    async def user(authorization_url: str) -> str:
        steps.append(authorization_url)
        return await auth.fetch_redirect(authorization_url)

    oauth = auth.OAuth(
        auth.AuthorizationCode(redirect=user, client_name="trimcp-interop"),
        storage=storage,
        clock=lambda: 1_000_000.0 + now[0],
    )
    with trio.fail_after(WAIT):
        async with trimcp.open_client(trimcp.streamable_http(url, auth=oauth)) as client:
            assert text(await client.call_tool("add", {"a": 2, "b": 3})) == "sum=5"
            first = await storage.get_tokens(url)
            assert first is not None
            assert first.refresh_token is not None
            assert first.scope == ("mcp:tools",)
            now[0] += 3600 - 10  # about to expire: refreshed before the next call
            assert text(await client.call_tool("add", {"a": 1, "b": 1})) == "sum=2"
            second = await storage.get_tokens(url)
            assert second is not None
            assert second.access_token != first.access_token
    assert len(steps) == 1  # one user step; the refresh needed none
    assert "resource=http" in steps[0]
    assert "code_challenge_method=S256" in steps[0]

"""End to end: the official Python SDK's OAuth client (``mcp.client.auth``) completes the
whole flow against a protected trimcp server and a real authorization server, all on
127.0.0.1: metadata discovery from the 401, dynamic registration, authorization code
with PKCE through a headless redirect, the token exchange, a scope step-up on 403, a
refresh, and tool calls. The client is ``sdk_oauth_client.py``, run as a process; the
authorization server is ``examples/auth/authorization_server.py``, served in the test."""

from __future__ import annotations

from typing import Literal

import pytest

from ._flow import SDK_CLIENT, authorization_server, check_flow, protected_server, run_client


@pytest.mark.parametrize("engine", ["h11", "hypercorn"])
async def test_the_sdk_oauth_client_against_serve_http(engine: Literal["h11", "hypercorn"]) -> None:
    async with authorization_server() as issuer:
        async with protected_server(issuer.issuer, engine) as url:
            lines = await run_client(SDK_CLIENT, url)
        check_flow(lines, issuer.events, "2025-11-25")

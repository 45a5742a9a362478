"""Run the whole OAuth flow against the protected example server, then call its tools:

    python examples/auth/client.py http://127.0.0.1:8000/mcp

This is trimcp's own client-side authorization (``trimcp.auth.OAuth``), driving
``examples/auth/server.py`` and ``examples/auth/authorization_server.py``:

1. the first request gets 401 with ``WWW-Authenticate: Bearer resource_metadata=...``;
2. the client reads the protected resource metadata, then the authorization server's;
3. it registers itself (dynamic client registration);
4. it runs the authorization code flow with PKCE. The "browser" here is headless:
   ``auth.fetch_redirect`` fetches the authorization URL without following its redirect
   and returns the ``Location`` the authorization server answers with (the demo user
   consents at once). A desktop application would use ``auth.LoopbackRedirect`` instead;
5. it exchanges the code for tokens and retries with ``Authorization: Bearer``;
6. ``add_note`` needs ``notes:write``: the 403 ``insufficient_scope`` makes the client
   authorize again with the union of scopes (step-up);
7. the client's clock is then moved past the access token's lifetime, and the client
   refreshes it with the refresh token before its next call.

Every step prints one line; the last is ``ok``.
"""

from __future__ import annotations

import sys
import time
from urllib.parse import urlsplit

import trio

import trimcp
from trimcp import auth


class Clock:
    """Unix time, which this demo moves forward to make the access token expire."""

    def __init__(self) -> None:
        self.skew = 0.0

    def __call__(self) -> float:
        return time.time() + self.skew


async def headless_browser(authorization_url: str) -> str:
    """The user's step: here, no user (the demo authorization server consents at once)."""
    print(f"authorize: {urlsplit(authorization_url).path}", flush=True)
    return await auth.fetch_redirect(authorization_url)


def text(result: trimcp.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, trimcp.TextContent)
    return block.text


async def granted(storage: auth.TokenStorage, url: str) -> auth.Tokens:
    tokens = await storage.get_tokens(url)
    assert tokens is not None
    return tokens


async def main(url: str) -> None:
    storage = auth.MemoryTokenStorage()
    clock = Clock()
    grant = auth.AuthorizationCode(redirect=headless_browser, client_name="trimcp auth example")
    oauth = auth.OAuth(grant, storage=storage, clock=clock)
    async with trimcp.open_client(trimcp.streamable_http(url, auth=oauth)) as client:
        assert client.server_info is not None
        print(f"connected to {client.server_info.name} ({client.protocol_version})", flush=True)
        tokens = await granted(storage, url)
        assert tokens.issuer is not None
        registration = await storage.get_client(tokens.issuer)
        assert registration is not None
        print(f"registered as {registration.client_id[:7]}...", flush=True)
        print(f"granted: {' '.join(tokens.scope or ())}", flush=True)
        print(f"whoami: {text(await client.call_tool('whoami'))}", flush=True)
        note = await client.call_tool("add_note", {"text": "authorized"})
        print(f"add_note: {text(note)}", flush=True)
        tokens = await granted(storage, url)
        print(f"granted after step-up: {' '.join(tokens.scope or ())}", flush=True)
        # Pretend the access token's lifetime is over: the next call refreshes it first.
        assert tokens.expires_at is not None
        clock.skew = tokens.expires_at - time.time()
        print(f"whoami: {text(await client.call_tool('whoami'))}", flush=True)
        refreshed = (await granted(storage, url)).access_token != tokens.access_token
        print(f"refreshed: {refreshed}", flush=True)
        assert refreshed
    print("ok", flush=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp")

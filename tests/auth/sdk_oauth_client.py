"""The official MCP Python SDK's OAuth client through the example's whole flow: interop
proof that trimcp's resource server and the example authorization server work with it.

    python tests/auth/sdk_oauth_client.py http://127.0.0.1:8000/mcp

The client is ``mcp.client.auth.OAuthClientProvider``, driving ``examples/auth/server.py``
and ``examples/auth/authorization_server.py`` (``examples/auth/client.py`` does the same
with trimcp's own client):

1. the first request gets 401 with ``WWW-Authenticate: Bearer resource_metadata=...``;
2. the client reads the protected resource metadata, then the authorization server's;
3. it registers itself (dynamic client registration);
4. it runs the authorization code flow with PKCE. The "browser" here is headless: the
   authorization URL is fetched without following its redirect, and the code is read
   from the ``Location`` the authorization server answers with (the demo user consents
   at once);
5. it exchanges the code for tokens and retries with ``Authorization: Bearer``;
6. ``add_note`` needs ``notes:write``: the 403 ``insufficient_scope`` makes the client
   authorize again with the union of scopes (step-up);
7. the access token is then treated as expired, and the client refreshes it with the
   refresh token before its next call.

Every step prints one line; the last is ``ok``.
"""

from __future__ import annotations

import sys
import time
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp_types as types
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

REDIRECT_URI = "http://127.0.0.1:3030/callback"


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class HeadlessBrowser:
    """Visits the authorization URL and keeps the redirect it is answered with."""

    def __init__(self) -> None:
        self.location: str | None = None

    async def visit(self, authorization_url: str) -> None:
        print(f"authorize: {urlsplit(authorization_url).path}", flush=True)
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            response = await http.get(authorization_url)
        if response.status_code != 302:
            raise RuntimeError(f"the authorization server answered {response.status_code}")
        self.location = response.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        assert self.location is not None
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.location).query).items()}
        if "error" in query:
            raise RuntimeError(f"authorization refused: {query['error']}")
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def main(url: str) -> None:
    browser = HeadlessBrowser()
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="trimcp auth example",
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=storage,
        redirect_handler=browser.visit,
        callback_handler=browser.callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        print(f"connected to {init.server_info.name} ({init.protocol_version})", flush=True)
        assert storage.client is not None
        assert storage.tokens is not None
        print(f"registered as {storage.client.client_id[:7]}...", flush=True)
        print(f"granted: {storage.tokens.scope}", flush=True)
        print(f"whoami: {text(await session.call_tool('whoami', {}))}", flush=True)
        note = await session.call_tool("add_note", {"text": "authorized"})
        print(f"add_note: {text(note)}", flush=True)
        print(f"granted after step-up: {storage.tokens.scope}", flush=True)
        # Pretend the access token's lifetime is over: the next call refreshes it first.
        provider.context.token_expiry_time = time.time() - 1
        before = storage.tokens.access_token
        print(f"whoami: {text(await session.call_tool('whoami', {}))}", flush=True)
        refreshed = storage.tokens.access_token != before
        print(f"refreshed: {refreshed}", flush=True)
        assert refreshed
    print("ok", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp")

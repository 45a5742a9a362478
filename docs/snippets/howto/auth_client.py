"""Call a protected server: OAuth 2.1, PKCE, dynamic registration, step-up."""

import sys
import webbrowser

import trio

import trimcp
from trimcp import auth


def desktop_grant() -> auth.AuthorizationCode:
    """A desktop application: the user signs in with their browser, which comes back
    to a one-shot listener on 127.0.0.1 (RFC 8252)."""
    catcher = auth.LoopbackRedirect(webbrowser.open)
    return auth.AuthorizationCode(
        redirect=catcher, redirect_uri=catcher.redirect_uri, client_name="my app"
    )


def headless_grant() -> auth.AuthorizationCode:
    """An authorization server that consents at once (the one in examples/auth/): the
    redirect it answers with is all there is to fetch."""
    return auth.AuthorizationCode(redirect=auth.fetch_redirect, client_name="my app")


async def main(url: str) -> None:
    oauth = auth.OAuth(headless_grant())  # tokens kept in a MemoryTokenStorage
    async with trimcp.open_client(trimcp.streamable_http(url, auth=oauth)) as client:
        print((await client.call_tool("whoami")).content[0].text)
        # add_note needs notes:write: the server answers 403 insufficient_scope, and
        # the client authorizes again with the union of the scopes (step-up).
        print((await client.call_tool("add_note", {"text": "hello"})).content[0].text)
        print((await client.call_tool("whoami")).content[0].text)


if __name__ == "__main__":
    trio.run(main, sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp")

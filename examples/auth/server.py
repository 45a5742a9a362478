"""A protected MCP server: every request needs an access token from the local
authorization server (``examples/auth/authorization_server.py``).

    python examples/auth/authorization_server.py --port 9000 &
    export TRIMCP_AUTH_ISSUER=http://127.0.0.1:9000
    trimcp serve examples/auth/server.py --http 127.0.0.1:8000

Tokens are JWTs checked against the issuer's key set (fetched from ``/jwks`` and
cached). The server's resource identifier, the audience its tokens must name, is its
endpoint on the address it is bound to (``http://127.0.0.1:8000/mcp``): clients get it
from the protected resource metadata the server publishes at
``/.well-known/oauth-protected-resource/mcp``. Every call needs ``mcp:tools``;
``add_note`` also needs ``notes:write``, so a client holding only ``mcp:tools`` is
asked to step up (403 ``insufficient_scope``).
"""

from __future__ import annotations

import os

import trimcp
from trimcp.auth import JwtVerifier, ResourceServer

ISSUER = os.environ.get("TRIMCP_AUTH_ISSUER", "http://127.0.0.1:9000").rstrip("/")

server = trimcp.Server(
    "auth-demo",
    version="1.0",
    auth=ResourceServer(
        JwtVerifier(issuer=ISSUER, jwks_url=f"{ISSUER}/jwks"),
        authorization_servers=[ISSUER],
        required_scopes=["mcp:tools"],
        resource_name="trimcp authorization demo",
    ),
)
notes: list[str] = []


@server.tool()
async def whoami(ctx: trimcp.ToolContext) -> str:
    """Who this call acts for: the token's subject, client and scopes."""
    principal = ctx.principal
    assert principal is not None  # the server refuses requests without a valid token
    scopes = " ".join(sorted(principal.scopes))
    return f"{principal.subject} via {principal.client_id} ({scopes})"


@server.tool(scopes=["notes:write"])
async def add_note(ctx: trimcp.ToolContext, text: str) -> str:
    """Add a note (needs the notes:write scope)."""
    notes.append(text)
    assert ctx.principal is not None
    return f"note {len(notes)} added by {ctx.principal.subject}"

"""A protected MCP server: every request needs an access token from ISSUER."""

import os

import trimcp
from trimcp.auth import JwtVerifier, ResourceServer

ISSUER = os.environ.get("ISSUER", "http://127.0.0.1:9000")

server = trimcp.Server(
    "notes",
    auth=ResourceServer(
        JwtVerifier(issuer=ISSUER, jwks_url=f"{ISSUER}/jwks"),
        authorization_servers=[ISSUER],
        required_scopes=["mcp:tools"],  # every request needs this scope
    ),
)


@server.tool()
async def whoami(ctx: trimcp.ToolContext) -> str:
    """Who this call acts for."""
    principal = ctx.principal  # verified: never None on a server with auth
    return f"{principal.subject} with scopes {' '.join(sorted(principal.scopes))}"


@server.tool(scopes=["notes:write"])  # and this tool needs one more
async def add_note(ctx: trimcp.ToolContext, text: str) -> str:
    """Add a note."""
    return f"note added by {ctx.principal.subject}"

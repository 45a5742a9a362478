"""A protected server with scoped tools, prompts and resources, and requests to it."""

from __future__ import annotations

from typing import Any

import trimcp
from trimcp.transports.http._header_values import NAME_PARAM

from ..http_server._asgi import BASE, AsgiClient, Exchange, rpc
from ..stateless._support import meta
from ._issuer import Issuer

MODERN = "2026-07-28"
TASKS_CAPS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}}


def protected_server(issuer: Issuer, **options: Any) -> trimcp.Server:
    server = trimcp.Server("auth-test", version="1", auth=issuer.resource_server(**options))

    @server.tool()
    async def whoami(ctx: trimcp.ToolContext) -> str:
        """Who the request acts for."""
        p = ctx.principal
        assert p is not None
        return f"{p.subject}|{p.client_id}|{' '.join(sorted(p.scopes))}|{p.claims['iss']}"

    @server.tool(scopes=["files:write"])
    async def write(text: str) -> str:
        """Needs files:write."""
        return f"wrote {text}"

    @server.tool(task_support="optional")
    async def job(text: str) -> str:
        """Runs as a task when asked."""
        return f"job {text}"

    @server.tool()
    async def ask(ctx: trimcp.ToolContext) -> str:
        """Asks the user (an input round in the stateless era)."""
        _result, content = await ctx.elicit(
            "name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {content}"

    @server.prompt(scopes=["prompts:read"])
    async def secret() -> str:
        """Needs prompts:read."""
        return "the secret prompt"

    @server.resource("file:///secret.txt", scopes=["files:read"])
    async def secret_file() -> str:
        return "secret text"

    @server.resource_template("file:///docs/{name}", scopes=["docs:read"])
    async def doc(name: str) -> str:
        return f"doc {name}"

    @server.resource("file:///public.txt")
    async def public() -> str:
        return "public text"

    return server


def auth_headers(token: str | None, **extra: str) -> dict[str, str]:
    headers = dict(BASE)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    headers.update(extra)
    return headers


async def post(
    client: AsgiClient, token: str | None, body: bytes, session: str | None = None, **extra: str
) -> Exchange:
    headers = auth_headers(token, **extra)
    if session is not None:
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = "2025-11-25"
    return await client.request("POST", body, headers)


async def open_session(client: AsgiClient, token: str) -> str:
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "1"},
    }
    reply = await post(client, token, rpc(1, "initialize", init))
    assert reply.status == 200, reply.body
    session = reply.headers["mcp-session-id"]
    done = await post(client, token, rpc(None, "notifications/initialized"), session)
    assert done.status == 202
    return session


async def modern(
    client: AsgiClient, token: str, method: str, params: dict[str, Any], id: int = 1
) -> Exchange:
    """A stateless-era POST (its own session), with the tasks extension declared."""
    params = {**params, "_meta": meta(MODERN, TASKS_CAPS)}
    extra = {"mcp-protocol-version": MODERN, "mcp-method": method}
    key = NAME_PARAM.get(method)
    if key is not None and isinstance(params.get(key), str):
        extra["mcp-name"] = params[key]
    return await client.request("POST", rpc(id, method, params), auth_headers(token, **extra))

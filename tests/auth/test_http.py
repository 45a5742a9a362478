"""A protected server over Streamable HTTP (the ASGI app, driven in-process)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from ..http_server._asgi import Exchange, rpc, running
from ._issuer import RESOURCE, Issuer
from ._server import auth_headers, modern, open_session, post, protected_server

METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
METADATA_URL = "http://127.0.0.1:8000" + METADATA_PATH


def challenge(reply: Exchange) -> str:
    return reply.headers["www-authenticate"]


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": arguments or {}}


def text(reply: Exchange) -> str:
    assert reply.status == 200, reply.body
    result = reply.json["result"] if reply.body.startswith(b"{") else reply.messages[-1]["result"]
    value: str = result["content"][0]["text"]
    return value


async def test_without_a_token_every_endpoint_is_401_with_the_metadata_url() -> None:
    issuer = Issuer()
    async with running(protected_server(issuer)) as client:
        init = await post(client, None, rpc(1, "initialize", {}))
        get = await client.request("GET", b"", auth_headers(None, accept="text/event-stream"))
        sse = await client.request("GET", b"", auth_headers(None), path="/sse")
        for reply in (init, get, sse):
            assert reply.status == 401
            assert challenge(reply) == f'Bearer resource_metadata="{METADATA_URL}"'
            assert reply.json["error"]["code"] == -32000
        assert not client.app.manager  # no session was made for anyone
        unknown = await client.request("GET", b"", auth_headers(None), path="/other")
        assert unknown.status == 404


async def test_the_metadata_is_public_and_lists_every_declared_scope() -> None:
    issuer = Issuer()
    async with running(protected_server(issuer, resource_name="Test")) as client:
        reply = await client.request("GET", b"", {"host": "127.0.0.1:8000"}, path=METADATA_PATH)
        assert reply.status == 200
        assert reply.json == {
            "resource": RESOURCE,
            "authorization_servers": ["https://as.example"],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["docs:read", "files:read", "files:write", "prompts:read"],
            "resource_name": "Test",
        }
        root = await client.request(
            "GET", b"", {"host": "127.0.0.1:8000"}, path="/.well-known/oauth-protected-resource"
        )
        assert root.status == 404


async def test_the_principal_reaches_the_handler() -> None:
    issuer = Issuer()
    async with running(protected_server(issuer)) as client:
        token = issuer.token(scope="mcp:tools extra")
        session = await open_session(client, token)
        reply = await post(client, token, rpc(2, "tools/call", call("whoami")), session)
        assert text(reply) == "alice|client-1|extra mcp:tools|https://as.example"


@pytest.mark.parametrize(
    ("method", "params", "scope"),
    [
        ("tools/call", call("write", {"text": "x"}), "files:write"),
        ("prompts/get", {"name": "secret"}, "prompts:read"),
        ("resources/read", {"uri": "file:///secret.txt"}, "files:read"),
        ("resources/read", {"uri": "file:///docs/guide"}, "docs:read"),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "secret"},
                                 "argument": {"name": "a", "value": ""}}, "prompts:read"),
    ],
)  # fmt: skip
async def test_declared_scopes_are_403_insufficient_scope_until_granted(
    method: str, params: dict[str, Any], scope: str
) -> None:
    issuer = Issuer()
    async with running(protected_server(issuer)) as client:
        token = issuer.token()
        session = await open_session(client, token)
        refused = await post(client, token, rpc(7, method, params), session)
        assert refused.status == 403
        assert challenge(refused) == (
            'Bearer error="insufficient_scope", error_description="the token lacks a scope '
            f'this request needs", scope="{scope}", resource_metadata="{METADATA_URL}"'
        )
        assert refused.json["id"] == 7
        assert refused.json["error"]["data"] == {"error": "insufficient_scope"}
        granted = issuer.token(scope=f"mcp:tools {scope}")
        reply = await post(client, granted, rpc(8, method, params), session)
        assert reply.status == 200, reply.body
        assert "error" not in (reply.json if reply.body.startswith(b"{") else reply.messages[-1])


async def test_unscoped_items_need_nothing() -> None:
    issuer = Issuer()
    async with running(protected_server(issuer)) as client:
        token = issuer.token(scope="")
        session = await open_session(client, token)
        reply = await post(
            client, token, rpc(2, "resources/read", {"uri": "file:///public.txt"}), session
        )
        assert reply.status == 200


async def test_a_session_id_is_unknown_to_another_principal() -> None:
    """Session hijack by id: another user's valid token with a stolen session id gets
    404, exactly as for an id that never existed, on POST, GET and DELETE."""
    issuer = Issuer()
    async with running(protected_server(issuer)) as client:
        alice = issuer.token(sub="alice")
        session = await open_session(client, alice)
        for thief in (
            issuer.token(sub="mallory"),
            issuer.token(sub="alice", client_id="other-client"),
        ):
            stolen = await post(client, thief, rpc(2, "tools/call", call("whoami")), session)
            assert stolen.status == 404
            assert stolen.json["error"]["code"] == -32001
            headers = auth_headers(thief, accept="text/event-stream")
            headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            assert (await client.request("GET", b"", headers)).status == 404
            assert (await client.request("DELETE", b"", headers)).status == 404
        # Alice's session is untouched, and her refreshed token (same identity) works.
        refreshed = issuer.token(sub="alice", scope="mcp:tools")
        reply = await post(client, refreshed, rpc(3, "tools/call", call("whoami")), session)
        assert text(reply).startswith("alice|client-1|")


async def test_a_task_is_unknown_to_another_principal() -> None:
    """Tasks readable across clients: another principal's tasks/get, tasks/cancel and
    listen on a task id get what an unknown id gets."""
    issuer = Issuer()
    async with running(protected_server(issuer)) as client:
        alice, mallory = issuer.token(sub="alice"), issuer.token(sub="mallory")
        created = await modern(client, alice, "tools/call", call("job", {"text": "t"}))
        assert created.status == 200, created.body
        task_id = created.json["result"]["taskId"]
        with trio.fail_after(5):
            while True:
                mine = await modern(client, alice, "tasks/get", {"taskId": task_id})
                assert "result" in mine.json, mine.json
                if mine.json["result"]["status"] == "completed":
                    break
                await trio.sleep(0.01)
        assert mine.json["result"]["result"]["content"][0]["text"] == "job t"
        unknown = await modern(client, alice, "tasks/get", {"taskId": "no-such-task"})
        for method in ("tasks/get", "tasks/cancel"):
            theirs = await modern(client, mallory, method, {"taskId": task_id})
            assert theirs.json["error"] == unknown.json["error"]
            assert theirs.json["error"]["message"] == "Failed to retrieve task: Task not found"


async def test_sealed_request_state_opens_only_for_its_principal() -> None:
    issuer = Issuer()
    async with running(protected_server(issuer)) as client:
        alice, mallory = issuer.token(sub="alice"), issuer.token(sub="mallory")
        first = await modern(client, alice, "tools/call", call("ask"))
        result = first.json["result"]
        assert result["resultType"] == "input_required"
        (key,) = result["inputRequests"]
        answer = {"action": "accept", "content": {"name": "Ann"}}
        retry = {
            **call("ask"),
            "inputResponses": {key: answer},
            "requestState": result["requestState"],
        }
        stolen = await modern(client, mallory, "tools/call", retry, id=2)
        assert stolen.status == 400
        assert stolen.json["error"]["code"] == -32602
        assert "requestState refused" in stolen.json["error"]["message"]
        own = await modern(client, alice, "tools/call", retry, id=3)
        assert own.json["result"]["content"][0]["text"] == "hello {'name': 'Ann'}"


async def test_an_unreachable_key_set_is_503_with_retry_after() -> None:
    issuer = Issuer()
    issuer.down = True
    async with running(protected_server(issuer)) as client:
        reply = await post(client, issuer.token(), rpc(1, "initialize", {}))
        assert reply.status == 503
        assert reply.headers["retry-after"] == "30"


@pytest.mark.parametrize(
    "token",
    [
        "expired",
        "wrong-audience",
        "alg-none",
        "garbage",
        "oversized",
    ],
)
async def test_bad_tokens_are_401_and_never_logged_or_echoed(
    token: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    issuer = Issuer()
    value = {
        "expired": issuer.token(exp=1),
        "wrong-audience": issuer.token(aud="https://other.example/mcp"),
        "alg-none": issuer.token().split(".")[0][:0]
        + "eyJhbGciOiJub25lIn0."
        + issuer.token().split(".")[1]
        + ".",
        "garbage": "x" * 40,
        "oversized": "y" * 10_000,
    }[token]
    async with running(protected_server(issuer)) as client:
        reply = await post(client, value, rpc(1, "initialize", {}))
        assert reply.status == 401
        assert 'error="invalid_token"' in challenge(reply)
        assert value.encode() not in reply.body
        assert value not in challenge(reply)
    assert value not in caplog.text


async def test_the_legacy_sse_session_belongs_to_its_opener() -> None:
    from ..http_server.test_legacy_sse import Client

    issuer = Issuer()
    alice, mallory = issuer.token(sub="alice"), issuer.token(sub="mallory")
    async with running(protected_server(issuer)) as asgi:
        client = Client(asgi.app, asgi.nursery)
        stream, endpoint = await client.open_stream(authorization=f"Bearer {alice}")
        body = rpc(1, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                     "clientInfo": {"name": "x", "version": "1"}})  # fmt: skip
        json_headers = {"content-type": "application/json"}
        stolen = await client.post(
            endpoint, body, {**json_headers, "authorization": f"Bearer {mallory}"}
        )
        assert stolen.status == 404
        unauthenticated = await client.post(endpoint, body, json_headers)
        assert unauthenticated.status == 401
        own = await client.post(
            endpoint, body, {**json_headers, "authorization": f"Bearer {alice}"}
        )
        assert own.status == 202
        assert json.loads((await stream.event(1)).data)["id"] == 1
        stream.disconnect.set()

"""The OAuth flow of ``examples/auth`` on 127.0.0.1, shared by the tests that run a client
through it: the example's authorization server served in the test, the protected
example server, a client script run as a process, and what its output must show."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any, Literal

import trio

import trimcp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "auth")
#: trimcp's own OAuth client: the example.
TRIMCP_CLIENT = os.path.join(EXAMPLE, "client.py")
#: The official Python SDK's OAuth client (``mcp.client.auth``), as interop proof.
SDK_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdk_oauth_client.py")


def load(name: str, **env: str) -> ModuleType:
    """An example module, loaded afresh (its settings come from ``env``)."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        spec = importlib.util.spec_from_file_location(
            f"auth_example_{name}", f"{EXAMPLE}/{name}.py"
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@asynccontextmanager
async def authorization_server() -> AsyncIterator[Any]:
    module = load("authorization_server")
    server = module.AuthorizationServer(introspection_clients={"rs": "rs-secret"})
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve)
        yield server
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def protected_server(issuer: str, engine: Literal["h11", "hypercorn"]) -> AsyncIterator[str]:
    """``examples/auth/server.py`` served with ``serve_http``; yields its MCP URL."""
    server: trimcp.Server = load("server", TRIMCP_AUTH_ISSUER=issuer).server
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: trimcp.serve_http(
                server, port=0, engine=engine, task_status=task_status
            )
        )
        yield f"http://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


async def run_client(script: str, url: str) -> list[str]:
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, script, url],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done.stdout.decode().splitlines()


def check_flow(lines: list[str], events: Any, version: str) -> None:
    """One registration, two authorizations (the second a step-up), one refresh."""
    assert lines[0] == "authorize: /authorize"
    assert lines[1] == f"connected to auth-demo ({version})"
    assert lines[2].startswith("registered as client-")
    assert lines[3].startswith("granted: mcp:tools")
    assert "notes:write" not in lines[3]
    assert lines[4].startswith("whoami: demo-user via client-")
    assert lines[5] == "authorize: /authorize"  # the step-up
    assert lines[6] == "add_note: note 1 added by demo-user"
    assert lines[7].startswith("granted after step-up: ")
    assert "notes:write" in lines[7]
    assert lines[-2:] == ["refreshed: True", "ok"]
    assert events["register"] == 1
    assert events["authorize"] == 2
    assert events["token:authorization_code"] == 2
    assert events["token:refresh_token"] == 1

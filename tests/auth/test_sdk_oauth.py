"""End to end: the official Python SDK's OAuth client (``mcp.client.auth``) completes the
whole flow against a protected trimcp server and a real authorization server, all on
127.0.0.1: metadata discovery from the 401, dynamic registration, authorization code
with PKCE through a headless redirect, the token exchange, a scope step-up on 403, a
refresh, and tool calls. The client is ``examples/auth/client.py``, run as a process; the
authorization server is ``examples/auth/authorization_server.py``, served in the test."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any

import pytest
import trio

import trimcp

from ..stdio._child import raw_child

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "auth")


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


async def run_client(url: str) -> list[str]:
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, os.path.join(EXAMPLE, "client.py"), url],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done.stdout.decode().splitlines()


def check_flow(lines: list[str], events: Any) -> None:
    assert lines[0] == "authorize: /authorize"
    assert lines[1] == "connected to auth-demo (2025-11-25)"
    assert lines[3].startswith("granted: mcp:tools")
    assert lines[4].startswith("whoami: demo-user via client-")
    assert lines[5] == "authorize: /authorize"  # the step-up
    assert lines[6] == "add_note: note 1 added by demo-user"
    assert "notes:write" in lines[7]
    assert lines[-2:] == ["refreshed: True", "ok"]
    assert events["register"] == 1
    assert events["authorize"] == 2
    assert events["token:authorization_code"] == 2
    assert events["token:refresh_token"] == 1


@pytest.mark.parametrize("engine", ["h11", "hypercorn"])
async def test_the_sdk_oauth_client_against_serve_http(engine: str) -> None:
    async with authorization_server() as issuer:
        server: trimcp.Server = load("server", TRIMCP_AUTH_ISSUER=issuer.issuer).server
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                lambda task_status: trimcp.serve_http(
                    server, port=0, engine=engine, task_status=task_status
                )
            )
            lines = await run_client(f"http://127.0.0.1:{port}/mcp")
            nursery.cancel_scope.cancel()
        check_flow(lines, issuer.events)


async def test_the_example_as_commands_in_the_readme_run_it() -> None:
    """``trimcp serve examples/auth/server.py --http 127.0.0.1:PORT``, then the client."""
    async with authorization_server() as issuer:
        argv = [sys.executable, "-m", "trimcp", "serve", f"{EXAMPLE}/server.py",
                "--http", "127.0.0.1:0"]  # fmt: skip
        env = {**os.environ, "TRIMCP_AUTH_ISSUER": issuer.issuer}
        with trio.fail_after(60):
            async with raw_child(argv, stdin=subprocess.DEVNULL, env=env) as child:
                line = await child.err.until(b"trimcp: serving auth-demo on http://")
                url = line.decode().rsplit(" on ", 1)[1].strip()
                lines = await run_client(url)
                child.process.send_signal(signal.SIGINT)
                await child.process.wait()
        check_flow(lines, issuer.events)

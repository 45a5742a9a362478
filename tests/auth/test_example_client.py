"""End to end: ``examples/auth/client.py``, trimcp's own OAuth client, registers,
authorizes with a headless redirect, steps up to a second scope, refreshes and calls
tools against the example's authorization server and protected server, on 127.0.0.1
only; also exactly as the README's commands run it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Literal

import pytest
import trio

from ..stdio._child import raw_child
from ._flow import (
    EXAMPLE,
    TRIMCP_CLIENT,
    authorization_server,
    check_flow,
    protected_server,
    run_client,
)

#: The client's default era is "auto": the example server serves the stateless era.
VERSION = "2026-07-28"


@pytest.mark.parametrize("engine", ["h11", "hypercorn"])
async def test_the_example_client_against_serve_http(engine: Literal["h11", "hypercorn"]) -> None:
    async with authorization_server() as issuer:
        async with protected_server(issuer.issuer, engine) as url:
            lines = await run_client(TRIMCP_CLIENT, url)
        check_flow(lines, issuer.events, VERSION)


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
                lines = await run_client(TRIMCP_CLIENT, url)
                child.process.send_signal(signal.SIGINT)
                await child.process.wait()
        check_flow(lines, issuer.events, VERSION)

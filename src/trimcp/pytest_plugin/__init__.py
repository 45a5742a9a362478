"""trimcp's pytest plugin (registered as ``trimcp`` through the ``pytest11`` entry point).

Fixtures, for async tests run by pytest-trio:

* ``mcp_connect``: ``client = await mcp_connect(server, **open_client_options)`` opens an
  in-memory client of a :class:`~trimcp.Server` in this process; every client it
  opened is closed when the test ends (its sessions, their tasks and the server's
  side with them). Options are those of :func:`trimcp.open_client` (``era``,
  ``sampling``, ``elicitation``, ``roots``, ``on_log``, ``middlewares`` ...).
* ``mcp_client``: one such client of the server the test's own ``mcp_server`` fixture
  returns, in the handshake era unless ``mcp_client_options`` (a fixture returning a
  dict of options) says otherwise.

Example::

    @pytest.fixture
    def mcp_server() -> trimcp.Server:
        return make_server()

    async def test_add(mcp_client: trimcp.Client) -> None:
        result = await mcp_client.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}

The Hypothesis strategies for MCP messages and sessions are in :mod:`trimcp.testing`
(``pip install 'trimcp[testing]'``): ``from trimcp.testing import client_requests,
server_messages, responses, sessions, invalid_frames, for_tool_schema``. This module
does not import them, so the plugin costs nothing where Hypothesis is not installed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import trio

from trimcp.client import Client, open_client
from trimcp.server import Server

__all__ = ["McpConnect", "mcp_client", "mcp_client_options", "mcp_connect"]

McpConnect = Callable[..., Awaitable[Client]]


@pytest.fixture
async def mcp_connect() -> AsyncIterator[McpConnect]:
    """Open in-memory clients of servers; each is closed when the test ends.

    Each client runs in a task of this fixture's nursery (pytest-trio gives every
    fixture a task of its own), so it is opened and closed by the same task, and the
    test's end cancels them all.
    """
    async with trio.open_nursery() as nursery:

        async def connect(server: Server, **options: Any) -> Client:
            if not isinstance(server, Server):
                raise TypeError(f"mcp_connect needs a trimcp.Server, not {type(server).__name__}")
            options.setdefault("era", "handshake")
            client: Client = await nursery.start(_run_client, server, options)
            return client

        yield connect
        nursery.cancel_scope.cancel()


async def _run_client(
    server: Server, options: dict[str, Any], *, task_status: trio.TaskStatus[Client]
) -> None:
    async with open_client(server.in_memory(), **options) as client:
        task_status.started(client)
        await trio.sleep_forever()


@pytest.fixture
def mcp_client_options() -> dict[str, Any]:
    """Options of ``mcp_client`` (override this fixture to change them)."""
    return {}


@pytest.fixture
async def mcp_client(
    request: pytest.FixtureRequest, mcp_client_options: dict[str, Any]
) -> AsyncIterator[Client]:
    """A client of the test's ``mcp_server`` fixture, open for the test."""
    try:
        server = request.getfixturevalue("mcp_server")
    except pytest.FixtureLookupError:
        pytest.fail("mcp_client needs a fixture named mcp_server that returns a trimcp.Server")
    options = {"era": "handshake", **mcp_client_options}
    async with open_client(server.in_memory(), **options) as client:
        yield client

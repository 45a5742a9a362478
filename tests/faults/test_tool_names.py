"""``tools/call`` whose ``name`` is not a string is ``-32602``, whatever the server
registered (task-capable tools included), never an internal error."""

from __future__ import annotations

from typing import Any

import pytest
import trio

import trimcp


@pytest.mark.parametrize("name", [[], {}, 1, None, True])
async def test_a_name_that_is_not_a_string_is_invalid_params(name: Any) -> None:
    server = trimcp.Server("names")

    @server.tool(task_support="optional")
    async def job() -> str:
        return "done"

    with trio.fail_after(5):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            with pytest.raises(trimcp.McpError) as caught:
                await client.request("tools/call", {"name": name, "arguments": {}})
            assert caught.value.code == -32602
            assert (await client.call_tool("job")).content[0].text == "done"  # type: ignore[union-attr]

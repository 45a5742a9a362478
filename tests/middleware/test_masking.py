"""Error masking: details of errors raised on purpose stay in the server's log."""

from __future__ import annotations

import logging

import pytest

import trimcp
from trimcp.middleware import ErrorMasking

from ._servers import tool_server


async def test_an_error_is_masked_with_a_reference_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = tool_server()
    masking = ErrorMasking()
    masking.install(server.middlewares)
    with caplog.at_level(logging.WARNING, logger="trimcp.middleware.masking"):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            with pytest.raises(trimcp.McpError) as raised:
                await client.call_tool("broken")
            # protocol errors the client acts on pass unchanged
            with pytest.raises(trimcp.McpError) as missing:
                await client.read_resource("memo://nowhere")
            soft = await client.call_tool("soft")
    error = raised.value
    assert error.code == -32099
    assert error.message == "Request failed"
    assert "password" not in str(error)
    assert "10.0.0.7" not in str(error)
    reference = error.data["reference"]  # type: ignore[index]
    (record,) = caplog.records
    assert reference in record.getMessage()
    assert "password expired" in record.getMessage()
    assert "tools/call" in record.getMessage()
    assert (missing.value.code, missing.value.message) == (-32002, "Resource not found")
    assert "/srv/secret" in soft.content[0].text  # type: ignore[union-attr]
    assert masking.masked == 1


async def test_tool_errors_too_when_asked() -> None:
    server = tool_server()
    ErrorMasking("Something went wrong", tool_errors=True).install(server.middlewares)
    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        soft = await client.call_tool("soft")
        ok = await client.call_tool("echo", {"text": "fine"})
    assert soft.is_error
    text = soft.content[0].text  # type: ignore[union-attr]
    assert text.startswith("Something went wrong (reference ")
    assert "/srv" not in text
    assert ok.content[0].text == "fine"  # type: ignore[union-attr]

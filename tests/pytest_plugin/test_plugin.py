"""The pytest plugin, driven with pytester in a child pytest: its fixtures open clients
for pytest-trio tests and close them with the test."""

from __future__ import annotations

import pytest

CONFTEST = """
import pytest
import trimcp

server = trimcp.Server("plugged", version="1.0")

@server.tool()
async def add(a: int, b: int) -> int:
    return a + b

@pytest.fixture
def mcp_server():
    return server
"""


def test_mcp_client_and_mcp_connect(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        import pytest
        import trimcp
        from conftest import server

        @pytest.mark.trio
        async def test_client(mcp_client):
            result = await mcp_client.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}
            assert mcp_client.protocol_version == "2025-11-25"

        @pytest.mark.trio
        async def test_connect_twice(mcp_connect):
            one = await mcp_connect(server)
            two = await mcp_connect(server, era="stateless")
            assert two.era.stateless
            assert not one.era.stateless
            for client in (one, two):
                result = await client.call_tool("add", {"a": 1, "b": 1})
                assert result.structured_content == {"result": 2}

        @pytest.mark.trio
        async def test_closed_after_the_test(mcp_connect):
            assert server.sessions == frozenset()  # the clients above are gone
            with pytest.raises(TypeError):
                await mcp_connect("not a server")
        """
    )
    pytester.makepyfile(
        test_options="""
        import pytest

        @pytest.fixture
        def mcp_client_options():
            return {"era": "stateless"}

        @pytest.mark.trio
        async def test_options(mcp_client):
            assert mcp_client.era.stateless
        """
    )
    result = pytester.runpytest_subprocess("-p", "trio", "-q")
    result.assert_outcomes(passed=4)


def test_a_missing_mcp_server_fixture_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.trio
        async def test_client(mcp_client):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "trio", "-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*mcp_client needs a fixture named mcp_server*"])


def test_the_strategies_are_importable_as_documented(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from hypothesis import given, settings
        from trimcp.testing import client_requests

        @settings(max_examples=5, deadline=None)
        @given(client_requests("2025-11-25"))
        def test_requests(message):
            assert message["jsonrpc"] == "2.0"
            assert isinstance(message["method"], str)
        """
    )
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1)

"""The tutorial runs as written: its server, its pytest file, its client (over stdio and
over HTTP, printing what the page shows) and its ways of serving (127.0.0.1 only)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import trio

import trimcp

from ..auth._flow import run_client
from ..stdio._child import raw_child
from ._pages import SNIPPETS

HERE = SNIPPETS / "tutorial"
SERVER = SNIPPETS / "tutorial/server.py"
CLIENT = str(SNIPPETS / "tutorial/client.py")


def _expected_client_output() -> list[str]:
    return (SNIPPETS / "tutorial/client.txt").read_text(encoding="utf-8").splitlines()


async def test_the_client_over_stdio_prints_the_page() -> None:
    # python client.py, in its directory, is python client.py /path/to/server.py.
    assert await run_client(CLIENT, str(SERVER)) == _expected_client_output()


async def test_the_client_over_http_prints_the_same() -> None:
    argv = [sys.executable, str(SNIPPETS / "tutorial/serve_http.py"), "0"]
    with trio.fail_after(60):
        async with raw_child(argv, stdin=subprocess.DEVNULL) as child:
            line = await child.out.until(b"serving http://127.0.0.1:")
            lines = await run_client(CLIENT, line.decode().split()[1])
            child.process.terminate()
    expected = _expected_client_output()
    assert lines[0] == "connected to todo over streamable-http"
    assert lines[1:] == expected[1:]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_trimcp_serve_over_stdio_and_python_server_py(era: str) -> None:
    for argv in (
        [sys.executable, "-m", "trimcp", "serve", str(SERVER)],
        [sys.executable, str(SERVER)],
    ):
        with trio.fail_after(60):
            transport = trimcp.stdio_command(*argv)
            async with trimcp.open_client(transport, era=era) as client:  # type: ignore[arg-type]
                tools = [tool.name for tool in await client.list_all_tools()]
                assert tools == ["add", "finish", "review"]


async def test_trimcp_serve_over_http_then_sigint() -> None:
    argv = [sys.executable, "-m", "trimcp", "serve", "--http", "127.0.0.1:0", str(SERVER)]
    with trio.fail_after(60):
        async with raw_child(argv, stdin=subprocess.DEVNULL) as child:
            line = await child.err.until(b" on http://127.0.0.1:")
            url = line.decode().rsplit(" on ", 1)[1].strip()
            async with trimcp.open_client(trimcp.streamable_http(url)) as client:
                result = await client.call_tool("add", {"title": "over HTTP"})
                assert result.structured_content == {"id": 1, "title": "over HTTP", "done": False}
            child.process.send_signal(signal.SIGINT)
            assert await child.process.wait() == 0


def test_the_pytest_file_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        server=SERVER.read_text(encoding="utf-8"),
        test_server=(SNIPPETS / "tutorial/test_server.py").read_text(encoding="utf-8"),
    )
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=7)

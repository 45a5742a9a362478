"""The notes example end to end: its client script against its server, over stdio and
over Streamable HTTP on 127.0.0.1, each as real processes; and the server in memory."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from types import ModuleType

import trio

import trimcp
from trimcp.protocol import PromptReference

from ..core._schema_check import SchemaCheck
from ..stdio._child import raw_child

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTES = os.path.join(ROOT, "examples", "notes")
SERVER = os.path.join(NOTES, "server.py")
CLIENT = os.path.join(NOTES, "client.py")


async def _run_client(*args: str) -> list[str]:
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, CLIENT, *args],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().splitlines()


async def test_the_client_script_over_stdio() -> None:
    lines = await _run_client()
    assert lines[0] == "connected to notes 1.0 (2025-11-25)"
    assert "tools: add_note, search, tag_note, delete_note" in lines
    assert "log: info: added note 4: Structured concurrency" in lines
    assert lines[-1] == "ok", lines


async def test_the_client_script_over_http() -> None:
    argv = [sys.executable, "-m", "trimcp", "serve", "--http", "127.0.0.1:0", SERVER]
    with trio.fail_after(60):
        async with raw_child(argv, stdin=subprocess.DEVNULL) as child:
            line = await child.err.until(b"trimcp: serving notes on http://")
            url = line.decode().rsplit(" on ", 1)[1].strip()
            assert url.startswith("http://127.0.0.1:")
            lines = await _run_client(url)
            child.process.send_signal(signal.SIGINT)
            await child.process.wait()
    assert lines[0] == "connected to notes 1.0 (2025-11-25)"
    assert lines[-1] == "ok", lines


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notes_example_server", SERVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_server_in_memory_on_every_revision() -> None:
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        module = _load()  # fresh notes each time
        server: trimcp.Server = module.server
        check = SchemaCheck(server)
        async with trimcp.open_client(
            server.in_memory(), protocol_version=version, era="handshake"
        ) as client:
            found = await client.call_tool("search", {"query": "trio"})
            missing = await client.call_tool("tag_note", {"id": "99", "tag": "x"})
            deleted = await client.call_tool("delete_note", {"id": "1"})
            prompt = await client.get_prompt("summarize", {"id": "2"})
            related = await client.complete(PromptReference(name="summarize"), "id", "")
            with trio.fail_after(10):
                await client.list_all_resources()
        assert len(found.content) == 2
        assert missing.is_error
        assert missing.content[0] == trimcp.TextContent(text="no note '99'")
        assert deleted.content[0] == trimcp.TextContent(text="deleted note 1")
        assert len(prompt.messages) == 2
        assert related.values == ["2", "3"]
        seen = check.validate(version, strict=True)
        assert seen["CallToolResult"] == 3

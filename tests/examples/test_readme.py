"""The "Writing tools" example of the README runs as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
import trio

import trimcp

README = Path(__file__).resolve().parents[2] / "README.md"


def _section_code(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


async def test_the_writing_tools_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("readme_writing_tools")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look it up
    exec(compile(_section_code("Writing tools"), str(README), "exec"), module.__dict__)
    server: trimcp.Server = module.server
    with trio.fail_after(30):
        async with trimcp.open_client(server.in_memory()) as client:
            tools = {tool.name: tool for tool in await client.list_all_tools()}
            schema = tools["order"].input_schema
            assert set(schema["properties"]) == {"item", "max_results", "due"}
            assert schema["properties"]["max_results"]["minimum"] == 1
            assert schema["properties"]["due"]["description"] == "when it is needed."
            result = await client.call_tool(
                "order", {"item": {"name": "pen"}, "max_results": 3, "due": "2024-05-01"}
            )
            assert result.structured_content == {"result": [{"name": "pen", "quantity": 1}]}
            digest = await client.call_tool("checksum", {"data": "aGk="})
            assert digest.content[0].text.startswith("8f434346")  # type: ignore[union-attr]
            refused = await client.call_tool("order", {"item": {"name": "pen"}, "maxResults": 3})
            assert refused.is_error

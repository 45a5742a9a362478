"""Exercise the notes server: ``python examples/notes/client.py [URL]``.

Without a URL it starts ``trimcp serve examples/notes/server.py`` as a stdio child;
with one (``http://127.0.0.1:8765/mcp``) it talks Streamable HTTP to a server started
with ``trimcp serve --http 127.0.0.1:8765 examples/notes/server.py``. Every step prints
one line; the last line is ``ok`` when everything answered as expected.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import trio

import trimcp
from trimcp.protocol import LoggingMessageParams, PromptReference, ResourceTemplateReference

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")


def transport(argv: list[str]) -> Any:
    if len(argv) > 1:
        return trimcp.streamable_http(argv[1])
    return trimcp.stdio_command(sys.executable, "-m", "trimcp", "serve", SERVER)


async def main(argv: list[str]) -> None:
    logs: list[str] = []
    updates: list[str] = []

    async def on_log(params: LoggingMessageParams) -> None:
        logs.append(f"{params.level.value}: {params.data}")

    async def on_updated(params: Any) -> None:
        updates.append(params.uri)

    # A session (handshake era): resource subscriptions exist only there.
    async with trimcp.open_client(
        transport(argv), on_log=on_log, on_resource_updated=on_updated, era="handshake"
    ) as client:
        info = client.server_info
        assert info is not None
        print(f"connected to {info.name} {info.version} ({client.protocol_version})")
        await client.set_logging_level("info")

        tools = await client.list_all_tools()
        print("tools:", ", ".join(tool.name for tool in tools))

        await client.subscribe_resource("notes://index")
        added = await client.call_tool(
            "add_note", {"title": "Structured concurrency", "body": "Nurseries.", "tags": ["trio"]}
        )
        note = added.structured_content
        print("added:", note)

        found = await client.call_tool("search", {"query": "trio"})
        links = [block for block in found.content if isinstance(block, trimcp.ResourceLink)]
        print("search trio:", ", ".join(f"{link.title} <{link.uri}>" for link in links))

        index = await client.read_resource("notes://index")
        first = index.contents[0]
        assert isinstance(first, trimcp.TextResourceContents)
        print("index lines:", len(first.text.strip().splitlines()) - 2)

        body = await client.read_resource(note["uri"])
        text = body.contents[0]
        assert isinstance(text, trimcp.TextResourceContents)
        print("note:", text.text.splitlines()[0])

        ids = await client.complete(ResourceTemplateReference(uri="notes://note/{id}"), "id", "")
        print("ids:", ", ".join(ids.values))
        tags = await client.complete(PromptReference(name="find_related"), "tag", "t")
        print("tags starting with t:", ", ".join(tags.values))

        prompt = await client.get_prompt("summarize", {"id": note["id"]})
        print("prompt messages:", len(prompt.messages))

        templates = await client.list_all_resource_templates()
        prompts = await client.list_all_prompts()
        print("templates:", templates[0].uri_template, "prompts:", len(prompts))

        with trio.fail_after(10):
            while not logs or "notes://index" not in updates:
                await client.ping()  # the notifications travel ahead of this answer
        print("log:", logs[0])
        print("updated:", ", ".join(sorted(set(updates))))
        ok = len(links) == 3 and note["id"] in ids.values and tags.values == ["trio"]
        print("ok" if ok else "unexpected answers")


if __name__ == "__main__":
    trio.run(main, sys.argv)

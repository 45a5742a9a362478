"""Drive ``examples/demo/server.py`` as a stdio child and show what trimcp does.

Run it with ``python examples/demo/client.py``. Five calls run concurrently in one
nursery: a plain call, a call with progress, a call cancelled once it has started
(the server reports that it saw the cancellation), and two calls the server answers by
asking this client back (sampling and elicitation).
"""

from __future__ import annotations

import os
import sys

import trio

import trimcp
from trimcp.protocol import LoggingMessageParams

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")


def say(who: str, text: str) -> None:
    print(f"[{who:>9}] {text}", flush=True)


def text_of(result: trimcp.CallToolResult) -> str:
    parts = [block.text for block in result.content if isinstance(block, trimcp.TextContent)]
    return " ".join(parts) + (" (error)" if result.is_error else "")


# -- the client's side of the reverse calls ------------------------------------------
async def sampling(
    ctx: trimcp.HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    """Stand in for an LLM: answer with the prompt's first words."""
    first = params.messages[0].content
    prompt = first.text if isinstance(first, trimcp.TextContent) else "?"
    say("sampling", f"server asked the LLM: {prompt!r}")
    words = prompt.split(":", 1)[-1].split()[:4]
    return trimcp.CreateMessageResult(
        role="assistant",
        content=trimcp.TextContent(text=" ".join(words) + " ..."),
        model="demo-llm",
    )


async def elicitation(
    ctx: trimcp.HandlerContext, params: trimcp.ElicitParams
) -> trimcp.ElicitResult:
    """Stand in for a user: accept, and say why."""
    say("elicit", f"server asked the user: {params.message!r}")
    return trimcp.ElicitResult(action="accept", content={"ok": True, "note": "demo user"})


class Demo:
    """The five concurrent calls; ``cancel_confirmed`` is set by the server's log message."""

    def __init__(self) -> None:
        self.cancel_confirmed = trio.Event()

    async def on_log(self, message: LoggingMessageParams) -> None:
        say("log", f"{message.level.value} from {message.logger}: {message.data}")
        if "cancelled" in str(message.data):
            self.cancel_confirmed.set()

    async def plain(self, client: trimcp.Client) -> None:
        result = await client.call_tool("add", {"a": 2, "b": 3})
        say("add", f"2 + 3 = {(result.structured_content or {}).get('result')}")

    async def with_progress(self, client: trimcp.Client) -> None:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            say("count", f"progress {done:g}/{total:g}: {message}")

        result = await client.call_tool("count", {"steps": 4}, on_progress=progress)
        say("count", f"result: {text_of(result)}")

    async def cancelled(self, client: trimcp.Client) -> None:
        with trio.CancelScope() as scope:

            async def progress(done: float, _total: float | None, message: str | None) -> None:
                say("watch", f"{message}")
                if done >= 3:
                    say("watch", "cancelling the call")
                    scope.cancel()

            await client.call_tool("watch", {}, on_progress=progress)
        if scope.cancelled_caught:
            say("watch", "the call was cancelled; waiting for the server to confirm")
            with trio.fail_after(3):
                await self.cancel_confirmed.wait()

    async def sampled(self, client: trimcp.Client) -> None:
        text = "Trio brings structured concurrency to Python."
        result = await client.call_tool("summarize", {"text": text})
        say("summarize", f"result: {text_of(result)}")

    async def elicited(self, client: trimcp.Client) -> None:
        result = await client.call_tool("confirm", {"action": "deploy"})
        say("confirm", f"result: {text_of(result)}")


async def main() -> None:
    demo = Demo()
    command = trimcp.stdio_command(sys.executable, "-m", "trimcp", "serve", SERVER)
    with trio.fail_after(10):
        # A session (handshake era): the watch tool's report comes from detached work.
        async with trimcp.open_client(
            command, sampling=sampling, elicitation=elicitation, on_log=demo.on_log, era="handshake"
        ) as client:
            info = client.server_info
            say("client", f"connected to {info.name if info else '?'} ({client.protocol_version})")
            tools = await client.list_all_tools()
            say("client", "tools: " + ", ".join(tool.name for tool in tools))
            async with trio.open_nursery() as nursery:
                for job in (
                    demo.plain,
                    demo.with_progress,
                    demo.cancelled,
                    demo.sampled,
                    demo.elicited,
                ):
                    nursery.start_soon(job, client)
    say("client", "all calls done; the server child has exited")


if __name__ == "__main__":
    trio.run(main)

"""Cancelling a call cancels everything under it, on both sides of the connection."""

from collections import Counter

import trio

import trimcp

server = trimcp.Server("tree")
seen: Counter[str] = Counter()


@server.tool()
async def research(ctx: trimcp.ToolContext, topic: str) -> str:
    async with trio.open_nursery() as nursery:  # the handler's own child tasks
        nursery.start_soon(ask, ctx, f"Summarise {topic}")
        nursery.start_soon(ask, ctx, f"Criticise {topic}")
    return "done"


async def ask(ctx: trimcp.ToolContext, prompt: str) -> None:
    try:
        await ctx.sample(prompt, max_tokens=100)  # a reverse call, made in this task
    except trio.Cancelled:
        seen["server: reverse call cancelled"] += 1
        raise


async def slow_llm(
    ctx: trimcp.HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    seen["client: sampling handler started"] += 1
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        seen["client: sampling handler cancelled"] += 1
        raise


async def main() -> None:
    async with trimcp.open_client(server.in_memory(), sampling=slow_llm, era="handshake") as client:
        with trio.move_on_after(1):
            await client.call_tool("research", {"topic": "trio"})
        print(f"client: {client.session.pending} calls waiting for an answer")
        await client.ping()
        print("client: the session still answers ping")
    for event, count in sorted(seen.items()):
        print(f"{event}: {count}")


if __name__ == "__main__":
    trio.run(main)

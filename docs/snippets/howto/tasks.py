"""A tool that runs as a task: called now, followed, answered, fetched or cancelled."""

import trio

import trimcp

server = trimcp.Server("library")


@server.tool(task_support="required")  # "optional": callers choose
async def research(ctx: trimcp.ToolContext, topic: str) -> str:
    await ctx.report_progress(1, 2, "gathering sources")  # also the task's statusMessage
    schema = {"type": "object", "properties": {"meaning": {"type": "string"}}}
    _, choice = await ctx.elicit(f"Which {topic}?", schema)  # the task is input_required
    return f"report on {topic} ({(choice or {}).get('meaning', 'any')})"


@server.tool(task_support="optional")
async def archive(ctx: trimcp.ToolContext) -> str:
    await trio.sleep_forever()  # until the task is cancelled, or its TTL passes
    return "archived"


async def answer(ctx: trimcp.HandlerContext, params: trimcp.ElicitParams) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"meaning": "the language"})


async def main() -> None:
    # A plain call: the client runs a "required" tool as a task and waits for it, in
    # either era (here the stateless one, with the tasks extension).
    async with trimcp.open_client(server.in_memory(), elicitation=answer) as client:
        result = await client.call_tool("research", {"topic": "python"})
        print(f"{client.protocol_version}: {result.content[0].text}")

    # 2025-11-25 core tasks, by hand: client.tasks needs a handshake-era session.
    async with trimcp.open_client(
        server.in_memory(), elicitation=answer, era="handshake"
    ) as client:
        task = await client.tasks.call_tool("research", {"topic": "trio"}, ttl=600)
        result = await client.tasks.wait(task)  # polls, woken by status notifications
        print(f"{client.protocol_version}: {result.content[0].text}")
        print("status:", (await client.tasks.get(task.task_id)).status)

        slow = await client.tasks.call_tool("archive", {})
        cancelled = await client.tasks.cancel(slow.task_id)
        print("status:", cancelled.status)
        print("tasks:", sorted(t.status for t in await client.tasks.list_all()))


if __name__ == "__main__":
    trio.run(main)

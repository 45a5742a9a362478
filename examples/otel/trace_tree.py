"""Print the span tree of a tool that samples and is then cancelled.

    pip install 'trimcp[otel]' opentelemetry-sdk
    python examples/otel/trace_tree.py

The server's ``research`` tool asks the client's model twice (sampling). The first
answer comes at once; the second never does, and the client gives up on the call after
a moment. With one :class:`trimcp.otel.Telemetry` on both sides, the spans form one
trace whose tree is the nursery tree: the call, the tool run it caused on the server,
the reverse calls the tool made, and the client's handling of each, with how each one
ended (the cancellation reaches every level, and says who cancelled).
"""

from __future__ import annotations

from collections.abc import Sequence

import trio
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import trimcp
from trimcp.otel import Telemetry

server = trimcp.Server("research", version="1.0")


@server.tool()
async def research(ctx: trimcp.ToolContext, topic: str) -> str:
    """Ask the model for an outline, then for the details."""
    outline = await ctx.sample(f"outline {topic}", max_tokens=50)
    details = await ctx.sample(f"details of {outline.content}", max_tokens=500)
    return str(details.content)


async def model(
    ctx: trimcp.HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    """A model that answers the outline at once and takes forever on the details."""
    prompt = getattr(params.messages[0].content, "text", "")
    if prompt.startswith("details"):
        await trio.sleep_forever()
    return trimcp.CreateMessageResult(
        role="assistant", content=trimcp.TextContent(text="1. trio"), model="demo"
    )


def tree(spans: Sequence[ReadableSpan]) -> list[str]:
    """The spans as an indented tree, children in start order."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent, []).append(span)
    known = {span.context.span_id for span in spans}
    lines: list[str] = []

    def walk(span: ReadableSpan, prefix: str, last: bool, top: bool) -> None:
        attributes = span.attributes or {}
        outcome = str(attributes.get("trimcp.outcome", "?"))
        for event in span.events:
            if event.name == "mcp.cancelled":
                outcome += f" ({(event.attributes or {}).get('trimcp.cancel.reason')})"
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(f"{prefix}{branch}{span.name} [{span.kind.name}] {outcome}")
        below = children.get(span.context.span_id, [])
        for n, child in enumerate(below):
            more = "" if top else ("   " if last else "│  ")
            walk(child, prefix + more, n == len(below) - 1, False)

    roots = [s for s in spans if s.parent is None or s.parent.span_id not in known]
    for root in sorted(roots, key=lambda s: s.start_time or 0):
        walk(root, "", True, True)
    return lines


async def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(tracer_provider=provider)
    telemetry.instrument(server.middlewares)
    client_side = telemetry.instrument(trimcp.Middlewares())
    async with trimcp.open_client(
        server.in_memory(), sampling=model, middlewares=client_side, era="handshake"
    ) as client:
        exporter.clear()  # keep the tree to the one call
        with trio.move_on_after(0.2):
            await client.call_tool("research", {"topic": "structured concurrency"})
        # The cancellation travels on by itself: to the server's tool run, to its
        # reverse call, and back to the client's model. Wait until every span of the
        # tree (the call, the tool run, two samplings on each side) has ended.
        with trio.fail_after(5):
            while len(exporter.get_finished_spans()) < 6:  # noqa: ASYNC110 - the exporter has no event
                await trio.sleep(0.01)
    spans = list(exporter.get_finished_spans())
    print("\n".join(tree(spans)))
    provider.shutdown()


if __name__ == "__main__":
    trio.run(main)

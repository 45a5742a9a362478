"""An OpenTelemetry SDK with in-memory exporters, and a server that samples."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import trio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import trimcp
from trimcp.otel import Telemetry


@attrs.define
class Sdk:
    telemetry: Telemetry
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name == name]

    def one(self, name: str, kind: str) -> ReadableSpan:
        found = [s for s in self.named(name) if s.kind.name == kind]
        assert len(found) == 1, [(s.name, s.kind) for s in self.finished()]
        return found[0]

    def points(self, metric: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found.extend(m.data.data_points)
        return found


@contextmanager
def sdk() -> Iterator[Sdk]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    try:
        yield Sdk(
            Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider),
            spans,
            reader,
        )
    finally:
        tracer_provider.shutdown()
        meter_provider.shutdown()


def sampling_server() -> trimcp.Server:
    server = trimcp.Server("otel-demo", version="1.0")
    server.test_state = {"asked": trio.Event(), "metas": []}  # type: ignore[attr-defined]

    @server.tool()
    async def ask(ctx: trimcp.ToolContext, prompt: str) -> str:
        """Sample the client's model once."""
        result = await ctx.sample(prompt, max_tokens=5)
        return str(getattr(result.content, "text", "?"))

    @server.tool()
    async def ask_forever(ctx: trimcp.ToolContext) -> str:
        """Sample, through a client that never answers; meant to be cancelled."""
        server.test_state["asked"].set()  # type: ignore[attr-defined]
        await ctx.sample("never", max_tokens=5)
        return "unreachable"

    @server.tool()
    async def meta(ctx: trimcp.ToolContext) -> dict[str, Any]:
        """What came in the request's _meta."""
        return dict(ctx.meta)

    @server.tool()
    async def fail() -> str:
        """Raise a protocol error."""
        raise trimcp.McpError(-32042, "no such thing")

    @server.tool()
    async def soft_fail() -> str:
        """Fail as a tool (isError)."""
        raise trimcp.ToolError("broken")

    @server.tool()
    async def sleepy() -> str:
        """Sleep for a long time."""
        await trio.sleep(1000)
        return "awake"

    return server


def model(reply: str = "hi") -> Any:
    async def sampler(
        ctx: trimcp.HandlerContext, params: trimcp.CreateMessageParams
    ) -> trimcp.CreateMessageResult:
        metas = getattr(ctx, "meta", {})
        sampler.metas.append(dict(metas))  # type: ignore[attr-defined]
        if params.messages and getattr(params.messages[0].content, "text", "") == "never":
            await trio.sleep_forever()
        return trimcp.CreateMessageResult(
            role="assistant", content=trimcp.TextContent(text=reply), model="m"
        )

    sampler.metas = []  # type: ignore[attr-defined]
    return sampler

"""Spans and metrics of one call, read back with the OpenTelemetry SDK's in-memory
exporters (in production, configure an exporter or a distro instead)."""

import trio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import trimcp
from trimcp.otel import Telemetry

server = trimcp.Server("weather", version="1.0")


@server.tool()
async def forecast(city: str) -> str:
    return f"sunny in {city}"


async def main() -> None:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[metrics])

    # Without arguments, Telemetry() uses the global providers and propagator.
    telemetry = Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    telemetry.instrument(server.middlewares)  # every session this server serves
    client_side = telemetry.instrument(trimcp.Middlewares())
    async with trimcp.open_client(
        server.in_memory(), middlewares=client_side, era="handshake"
    ) as client:
        await client.call_tool("forecast", {"city": "Lyon"})

    calls = [s for s in spans.get_finished_spans() if s.name == "tools/call forecast"]
    client_span, server_span = sorted(calls, key=lambda s: s.kind.name)
    for span in (client_span, server_span):
        attributes = span.attributes or {}
        print(
            f"{span.name} [{span.kind.name}] tool={attributes['gen_ai.tool.name']}"
            f" outcome={attributes['trimcp.outcome']}"
        )
    print("same trace:", client_span.context.trace_id == server_span.context.trace_id)
    assert server_span.parent is not None
    print(
        "the server's span is a child of the client's:",
        server_span.parent.span_id == client_span.context.span_id,
    )

    data = metrics.get_metrics_data()
    names = {m.name for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    for name in sorted(names):
        print("metric", name)


if __name__ == "__main__":
    trio.run(main)

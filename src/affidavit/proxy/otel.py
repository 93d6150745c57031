"""OpenTelemetry for proxied calls (optional extra ``otel``), GenAI semantic conventions.

Without ``--otel-exporter`` nothing here is imported by the relay and no telemetry exists.
With it, each ``tools/call`` becomes a span ``execute_tool {name}`` (``gen_ai.operation.name``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, plus ``affidavit.verdict``) and one sample of the
``gen_ai.client.operation.duration`` histogram. Spans and metrics go to stderr (``console``:
stdout is the protocol channel) or to an OTLP collector (``otlp``).
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from affidavit.core.errors import UnsupportedError, UsageError


class Telemetry(Protocol):
    """What the relay reports per call."""

    def record_call(
        self, tool: str, call_id: str, seconds: float, verdict: str, error: bool
    ) -> None: ...

    def shutdown(self) -> None: ...


class _OtelTelemetry:
    def __init__(self, tracer: Any, histogram: Any, providers: tuple[Any, ...]) -> None:
        self._tracer = tracer
        self._histogram = histogram
        self._providers = providers

    def record_call(
        self, tool: str, call_id: str, seconds: float, verdict: str, error: bool
    ) -> None:
        import time

        end = time.time_ns()
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "affidavit.verdict": verdict,
        }
        if error:
            attributes["error.type"] = "tool_error"
        span = self._tracer.start_span(
            f"execute_tool {tool}", start_time=end - int(seconds * 1e9), attributes=attributes
        )
        span.end(end_time=end)
        self._histogram.record(
            seconds, {k: v for k, v in attributes.items() if k != "gen_ai.tool.call.id"}
        )

    def shutdown(self) -> None:
        for provider in self._providers:
            provider.shutdown()


def make_telemetry(exporter: str | None, endpoint: str | None) -> Telemetry | None:
    """The telemetry for ``--otel-exporter``; ``None`` (and no import at all) without it."""
    if exporter is None:
        if endpoint is not None:
            raise UsageError("--otel-endpoint needs --otel-exporter otlp")
        return None
    if exporter not in ("console", "otlp"):
        raise UsageError(f"--otel-exporter {exporter!r} is unknown", "use console or otlp")
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import (
            ConsoleMetricExporter,
            PeriodicExportingMetricReader,
        )
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        raise UnsupportedError(
            "OpenTelemetry is not installed", "install the extra: pip install 'affidavit[otel]'"
        ) from None
    resource = Resource.create({"service.name": "affidavit-proxy"})
    if exporter == "console":
        span_exporter: Any = ConsoleSpanExporter(out=sys.stderr)
        metric_exporter: Any = ConsoleMetricExporter(out=sys.stderr)
    else:
        try:
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise UnsupportedError(
                "the OTLP exporter is not installed",
                "pip install opentelemetry-exporter-otlp-proto-grpc",
            ) from None
        target = endpoint or "localhost:4317"
        span_exporter = OTLPSpanExporter(endpoint=target, insecure=True)
        metric_exporter = OTLPMetricExporter(endpoint=target, insecure=True)
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    meter_provider = MeterProvider(
        resource=resource, metric_readers=[PeriodicExportingMetricReader(metric_exporter)]
    )
    histogram = meter_provider.get_meter("affidavit.proxy").create_histogram(
        "gen_ai.client.operation.duration", unit="s", description="Duration of proxied tool calls"
    )
    return _OtelTelemetry(
        tracer_provider.get_tracer("affidavit.proxy"), histogram, (tracer_provider, meter_provider)
    )

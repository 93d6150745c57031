"""OpenTelemetry: a GenAI span per call with an exporter; nothing at all without one."""

from __future__ import annotations

import importlib.util

import pytest

from tests.support import run_cli

HAS_SDK = importlib.util.find_spec("opentelemetry.sdk") is not None


def test_without_an_exporter_opentelemetry_is_never_imported(raw_proxy):
    proxy = raw_proxy(env={"PYTHONPROFILEIMPORTTIME": "1"})
    proxy.initialize()
    proxy.call(1, "echo", {})
    assert proxy.close() == 0
    assert "affidavit.proxy.intercept" in proxy.stderr  # the import trace is really on
    assert "opentelemetry" not in proxy.stderr


@pytest.mark.skipif(not HAS_SDK, reason="the otel extra is not installed")
def test_console_exporter_writes_a_genai_span_per_call(raw_proxy):
    proxy = raw_proxy("--otel-exporter", "console")
    proxy.initialize()
    proxy.call("c-1", "echo", {"a": 1})
    assert proxy.close() == 0
    assert '"name": "execute_tool echo"' in proxy.stderr
    assert '"gen_ai.operation.name": "execute_tool"' in proxy.stderr
    assert '"gen_ai.tool.call.id": "c-1"' in proxy.stderr
    assert "gen_ai.client.operation.duration" in proxy.stderr


def test_endpoint_without_exporter_is_a_usage_error(home, tmp_path):
    result = run_cli(
        [
            "proxy",
            "--audit-log",
            str(tmp_path / "a.jsonl"),
            "--otel-endpoint",
            "localhost:4317",
            "--",
            "true",
        ],
        home,
    )
    assert result.returncode == 2 and "--otel-endpoint needs --otel-exporter otlp" in result.stderr

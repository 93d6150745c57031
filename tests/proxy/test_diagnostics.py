"""The proxy's diagnostics go through ``logging`` and reach stderr in its own words.

Each proxy module logs to its module logger; ``affidavit proxy`` routes the plane's records
to stderr as ``affidavit proxy: ...`` lines (once each, whatever ``--quiet`` says: receipts and
refusals are what a user watches for), with secrets scrubbed on the way out, and never twice
prefixed.
"""

from __future__ import annotations

import logging

from affidavit.cli.logs import ProxyLines
from tests.proxy.conftest import VERIFIER

TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"


def test_every_diagnostic_is_one_proxy_line_and_names_no_secret(raw_proxy, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("default: deny\nrules:\n  - tool: write_file\n    action: allow\n")
    proxy = raw_proxy("--policy", str(policy), "--verifier", VERIFIER)
    proxy.initialize()
    refused = proxy.call(1, TOKEN, {})["result"]
    assert refused["isError"] is True
    target = str(tmp_path / "f.txt")
    assert not proxy.call(2, "write_file", {"path": target, "content": "x"})["result"]["isError"]
    assert proxy.close() == 0
    assert proxy.saw("affidavit proxy: policy denied this call to `[redacted]`: default")
    assert proxy.saw("affidavit proxy: [affidavit receipt] UNCHECKED · test-file")
    lines = [line for line in proxy.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("affidavit proxy: ") for line in lines), lines
    assert not any(line.startswith("affidavit proxy: affidavit proxy:") for line in lines)
    assert TOKEN not in proxy.stderr


def test_a_stderr_that_is_gone_costs_the_proxy_nothing(tmp_path, capsys):
    """A client that closed the proxy's stderr must not make logging report its own error."""
    handler = ProxyLines()
    handler.setStream(open(tmp_path / "gone", "w"))  # noqa: SIM115 - closed below on purpose
    handler.stream.close()
    record = logging.LogRecord("affidavit.proxy.relay", logging.WARNING, "", 0, "x", (), None)
    handler.handle(record)
    assert "Logging error" not in capsys.readouterr().err

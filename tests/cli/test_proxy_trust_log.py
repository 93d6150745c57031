"""``affidavit proxy trust-log``: the receipt logs a user registers, and the one error each
wrong use gets (ADR 0224). Real processes on a real vault."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_cli


def _error(done) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    return "\n".join(lines)


def test_trust_list_and_remove_a_log(home: Path, cli_vault: dict[str, str], tmp_path: Path) -> None:
    log = tmp_path / "proxy" / "audit.jsonl"
    trusted = run_cli(["proxy", "trust-log", str(log)], home, env=cli_vault)
    assert trusted.returncode == 0 and trusted.stdout.strip() == f"trusted: {log}", trusted.stderr
    again = run_cli(["proxy", "trust-log", str(log)], home, env=cli_vault)
    assert again.stdout.strip() == f"already trusted: {log}"
    listed = json.loads(
        run_cli(["proxy", "trust-log", "--list", "--json"], home, env=cli_vault).stdout
    )
    assert listed["registered"] == [str(log)] and listed["default"].endswith("audit.jsonl")
    shown = run_cli(["proxy", "trust-log", "--list"], home, env=cli_vault).stdout.splitlines()
    assert shown == [f"{listed['default']} (the default log)", str(log)]
    removed = run_cli(["proxy", "trust-log", "--remove", str(log)], home, env=cli_vault)
    assert removed.stdout.strip() == f"no longer trusted: {log}", removed.stderr

    assert "not a registered receipt log" in _error(
        run_cli(["proxy", "trust-log", "--remove", str(log)], home, env=cli_vault)
    )
    assert "always trusted" in _error(
        run_cli(["proxy", "trust-log", "--remove", listed["default"]], home, env=cli_vault)
    )
    assert "pass PATH" in _error(run_cli(["proxy", "trust-log"], home, env=cli_vault))

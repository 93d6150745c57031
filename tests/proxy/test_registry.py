"""Verifier loading through real entry points: built-ins, a third-party plugin, broken ones."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from affidavit.proxy.verifiers.base import Verifier
from affidavit.proxy.verifiers.registry import load_verifiers

BUILTINS = ["ci", "docker", "filesystem", "git", "github", "resources", "sqlite"]


def test_builtins_load_from_entry_points() -> None:
    verifiers = load_verifiers()
    assert [v.name for v in verifiers] == BUILTINS
    assert all(isinstance(v, Verifier) for v in verifiers)


def _install_plugins(site: Path) -> None:
    """A real distribution on a path entry, with a good plugin and two broken ones."""
    (site / "plugin_demo.py").write_text(
        textwrap.dedent(
            """
            from affidavit.proxy.verifiers.base import Receipt, Verdict

            class TicketVerifier:
                name = "tickets"
                def applies(self, ctx): return ctx.name == "open_ticket"
                def snapshot(self, ctx): return None
                def verify(self, ctx, before, result):
                    return Receipt(Verdict.UNCHECKED, self.name, "opened a ticket")
                def still_holds(self, ctx, receipt): return False

            class NotAVerifier:
                name = "half"
            """
        )
    )
    (site / "plugin_crash.py").write_text("raise RuntimeError('plugin import exploded')\n")
    dist = site / "plugin_demo-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[affidavit.verifiers]\n"
        "tickets = plugin_demo:TicketVerifier\n"
        "half = plugin_demo:NotAVerifier\n"
        "exploding = plugin_crash:Verifier\n"
    )


def test_plugins_load_first_and_broken_ones_are_skipped_with_one_line(tmp_path: Path) -> None:
    _install_plugins(tmp_path)
    probe = (
        "import json; from affidavit.proxy.verifiers.registry import load_verifiers; "
        "print(json.dumps([v.name for v in load_verifiers()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["tickets", *BUILTINS]
    warnings = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(warnings) == 2, done.stderr
    assert any("'exploding'" in w and "plugin import exploded" in w for w in warnings)
    assert any("'half'" in w and "does not provide" in w for w in warnings)
    assert "Traceback" not in done.stderr

"""``affidavit hook install|remove claude-code``: Claude Code's settings with a fake HOME.

The file is edited surgically, backed up first, and restored byte for byte (integrate/hooks.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.support import run_cli

SETTINGS = """{
  // the user's own settings, comments and all
  "model": "opus",
  "hooks": {
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo done"}]}
    ]
  }
}
"""


def _settings(home: Path) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _stop_commands(path: Path) -> list[str]:
    from affidavit.integrate.jsonc import JsoncDocument

    stop = JsoncDocument(path.read_text()).get(("hooks", "Stop")) or []
    return [hook["command"] for group in stop for hook in group["hooks"]]


def test_install_adds_a_stop_hook_and_remove_restores_the_file_byte_for_byte(home: Path) -> None:
    path = _settings(home)
    path.write_text(SETTINGS)
    done = run_cli(["hook", "install", "claude-code"], home)
    assert done.returncode == 0, done.stderr
    (command,) = _stop_commands(path)
    assert command.endswith("hook run claude-code") and command.startswith("/")
    assert "// the user's own settings" in path.read_text() and '"echo done"' in path.read_text()
    again = run_cli(["hook", "install", "claude-code"], home)
    assert "unchanged" in again.stdout and len(_stop_commands(path)) == 1
    removed = run_cli(["hook", "remove", "claude-code"], home)
    assert removed.returncode == 0 and "restored" in removed.stdout
    assert path.read_text() == SETTINGS


def test_install_creates_a_missing_settings_file_and_remove_deletes_it(home: Path) -> None:
    path = _settings(home)
    assert run_cli(["hook", "install", "claude-code"], home).returncode == 0
    assert len(_stop_commands(path)) == 1 and path.stat().st_mode & 0o077 == 0
    assert run_cli(["hook", "remove", "claude-code"], home).returncode == 0
    assert not path.exists()


def test_remove_after_the_user_edited_the_file_takes_out_only_our_hook(home: Path) -> None:
    path = _settings(home)
    path.write_text(SETTINGS)
    run_cli(["hook", "install", "claude-code"], home)
    path.write_text(path.read_text().replace('"opus"', '"sonnet"'))
    done = run_cli(["hook", "remove", "claude-code"], home)
    assert "removed only the affidavit hook" in done.stdout
    text = path.read_text()
    assert '"sonnet"' in text and '"echo done"' in text and _stop_commands(path) == []


def test_install_refuses_a_file_it_cannot_parse_and_leaves_it(home: Path) -> None:
    path = _settings(home)
    path.write_text('{"hooks": {"Stop": "not a list"}}')
    done = run_cli(["hook", "install", "claude-code"], home)
    assert done.returncode != 0 and "hooks.Stop" in done.stderr and "Traceback" not in done.stderr
    assert path.read_text() == '{"hooks": {"Stop": "not a list"}}'

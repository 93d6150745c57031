"""Shell completion for bash, zsh and fish, driven through the real shells where installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import cli_env, run_cli

BIN = str(Path(sys.executable).parent)  # where the `affidavit` console script is installed


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = cli_env(home, extra)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


def _shell(shell: str, script: str, home: Path) -> str:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    done = subprocess.run(
        [shell, "-c", script], env=_env(home), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _bash_words(words: str, home: Path) -> list[str]:
    """What TAB offers after ``words`` in bash (COMP_WORDS / COMP_CWORD as bash sets them)."""
    script = (
        "source <(affidavit completion bash)\n"
        f"COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n"
        "_affidavit_completion affidavit\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    return _shell("bash", script, home).split()


def test_bash_registers_the_function(home: Path) -> None:
    shown = _shell("bash", "source <(affidavit completion bash); complete -p affidavit", home)
    assert shown.strip() == "complete -o nosort -F _affidavit_completion affidavit"


def test_bash_completes_groups_commands_and_options(home: Path) -> None:
    assert _bash_words("affidavit mem", home) == ["memory"]
    assert _bash_words("affidavit memory st", home) == ["status", "store"]
    assert _bash_words("affidavit proxy ''", home) == [
        "run", "replay", "trust-tools", "trust-log", "wrap", "unwrap",
    ]  # fmt: skip
    assert "--source" in _bash_words("affidavit store --", home)  # an alias completes too
    assert _bash_words("affidavit completion ''", home) == ["bash", "zsh", "fish"]


def test_zsh_script_loads_and_answers_with_whole_summaries(home: Path) -> None:
    script = run_cli(["completion", "zsh"], home).stdout
    assert script.startswith("#compdef affidavit")
    assert "_AFFIDAVIT_COMPLETE=zsh_complete" in script
    registered = _shell(
        "zsh",
        "autoload -U compinit; compinit -u; source <(affidavit completion zsh); "
        "print -r -- ${_comps[affidavit]}",
        home,
    )
    assert registered.strip() == "_affidavit_completion"
    reply = subprocess.run(
        ["affidavit"],
        env=_env(home, _AFFIDAVIT_COMPLETE="zsh_complete", COMP_WORDS="affidavit ", COMP_CWORD="1"),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    entries = dict(zip(reply[1::3], reply[2::3], strict=True))  # type, value, help
    assert list(entries)[:2] == ["demo", "memory"]
    assert entries["audit"] == "Verify a tamper-evident audit chain."  # whole, not cut at 45
    assert "store" not in entries  # aliases are not offered


def test_fish_completes(home: Path) -> None:
    script = run_cli(["completion", "fish"], home).stdout
    assert "complete --no-files --command affidavit" in script
    offered = _shell(
        "fish",
        "affidavit completion fish | source; complete --do-complete 'affidavit pack v'",
        home,
    )
    assert offered.splitlines() == ["verify\tVerify a pack as a host would, and print the report."]


def test_unknown_shell_is_one_line(home: Path) -> None:
    done = run_cli(["completion", "tcsh"], home)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "'tcsh' is not one of" in done.stderr

"""The CLI's modules: no import cycle, each importable alone, and cold paths kept lean."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

import affidavit.cli
from tests.support import PYTHON, cli_env

CLI = Path(affidavit.cli.__file__).parent
MODULES = sorted(f"affidavit.cli.{p.stem}" for p in CLI.glob("*.py") if p.stem != "__init__")


def _cli_imports(module: str) -> set[str]:
    """Every ``affidavit.cli`` module that ``module`` imports, at load time or in a body."""
    tree = ast.parse((CLI / f"{module.rsplit('.', 1)[1]}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n for n in names if n in MODULES)
    return found - {module}


def test_no_import_cycle_among_cli_modules() -> None:
    """vault.py and recall.py used to import each other (inside function bodies)."""
    graph = {module: _cli_imports(module) for module in MODULES}
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        assert module not in trail, " -> ".join((*trail, module))
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, (*trail, module))
        done.add(module)

    for module in MODULES:
        visit(module, ())


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module: str, home: Path) -> None:
    done = subprocess.run(
        [PYTHON, "-c", f"import {module}"],
        env=cli_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.__stderr__.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
from affidavit.cli.main import main
main(sys.argv[1:])
"""
HEAVY = ("typer", "rich", "pydantic", "numpy", "onnxruntime", "affidavit.cli.vault")
"""Never on a cold path: the CLI's own cost must stay click and the standard library."""
SERVER = ("mcp", "affidavit.servers", "affidavit.vault")


def _loaded(args: list[str], home: Path) -> list[str]:
    done = subprocess.run(
        [PYTHON, "-c", PROBE, *args],
        env=cli_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return json.loads(line.removeprefix("MODULES "))


@pytest.mark.parametrize(
    ("args", "forbidden"),
    [
        (["--version"], HEAVY + SERVER),
        (["pack", "verify", "/nonexistent/pack"], HEAVY + SERVER),
        (["serve", "--caller", "../x"], HEAVY),
    ],
)
def test_cold_paths_import_nothing_heavy(
    args: list[str], forbidden: tuple[str, ...], home: Path
) -> None:
    """`--version`, `pack verify` and `serve` are waited for (ADR 10, ADR 60)."""
    loaded = _loaded(args, home)
    assert [m for m in loaded if m.split(".")[0] in forbidden or m.startswith(forbidden)] == []

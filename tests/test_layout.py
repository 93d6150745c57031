"""The package layout DESIGN.md promises, read from the source with ``ast``.

- A plane (vault, recall, packs, proxy) is used from outside only through what its
  ``__init__`` exports: ``from affidavit.vault import Vault``, never
  ``from affidavit.vault.vault import Vault`` (issue 15: cli/ and servers/ reached into
  modules, so a module could not be renamed without breaking a command).
- Dependencies point one way: cli, console, integrate, servers -> planes -> crypto, core
  (``exports``, the chat-export readers, sit beside core: packs build from them).
- The modules import each other without a cycle (load-time imports; an import inside a
  function or under ``if TYPE_CHECKING:`` runs later or never), and without a hidden one
  through function-level imports either (two modules that need each other are one job split
  wrong: issue 25 removed the last two, packs/build-packs/sources and
  recall/embedder-recall/model_service).
- Each plane's ``__all__`` is exactly what its ``if TYPE_CHECKING:`` block imports (the table
  its lazy ``__getattr__`` reads), and every name resolves.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import affidavit
from affidavit.core.exports import declared_exports

SRC = Path(affidavit.__file__).parent
PLANES = ("vault", "access", "recall", "packs", "proxy", "intake")
#: What each top-level package may import besides itself (``affidavit`` itself: __version__).
ALLOWED = {
    "core": set(),
    "crypto": {"core"},
    "vault": {"core", "crypto"},
    "access": {"core", "vault"},  # callers, grants, tokens, the unlock gate (ADR 0160)
    # packs: install verifies (ADR 0135); proxy: a memory's receipt is judged by
    # proxy.check_receipt (ADR 0220); the tool plane never imports recall
    "recall": {"core", "crypto", "vault", "access", "packs", "proxy"},
    "exports": {"core"},
    "packs": {"core", "crypto", "exports"},
    "proxy": {"core", "crypto"},
    "integrate": {"core"},
    "intake": {"core", "crypto", "vault", "access", "recall", "exports"},
    "console": {"core", "crypto", *PLANES, "exports", "integrate"},
    "servers": {"core", "crypto", *PLANES},
    "desktop": {"core"},  # drives the vault through the `affidavit` command only
    "cli": {"core", "crypto", *PLANES, "exports", "servers", "integrate", "console", "desktop"},
    "__main__": {"cli"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


MODULES = _modules()


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"


def _imports(path: Path, *, load_time_only: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import in the file; with ``load_time_only``, only those that run when it loads."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not load_time_only:
        yield from (n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))
        return
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If | ast.Try | ast.With) and not _type_checking(node):
            todo.extend(ast.iter_child_nodes(node))


def _absolute(node: ast.ImportFrom, module: str) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if MODULES[module].name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _targets(node: ast.Import | ast.ImportFrom, module: str) -> list[tuple[str, str | None]]:
    """(module imported from, name imported) pairs; the name is None for ``import x``."""
    if isinstance(node, ast.Import):
        return [(alias.name, None) for alias in node.names]
    source = _absolute(node, module)
    return [(source, alias.name) for alias in node.names]


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "affidavit" else None


@pytest.mark.parametrize("plane", PLANES)
def test_each_plane_exports_what_its_init_declares(plane: str) -> None:
    package = importlib.import_module(f"affidavit.{plane}")
    declared = declared_exports(Path(package.__file__ or ""), package.__name__)
    assert sorted(declared) == sorted(package.__all__)
    for name in package.__all__:
        assert getattr(package, name) is not None, name


def test_planes_are_used_only_through_their_init() -> None:
    exported = {p: set(importlib.import_module(f"affidavit.{p}").__all__) for p in PLANES}
    wrong = []
    for module, path in MODULES.items():
        for node in _imports(path):
            for source, name in _targets(node, module):
                plane = _package(source)
                if plane not in PLANES or _package(module) == plane:
                    continue
                if source != f"affidavit.{plane}" or (
                    name is not None and name not in exported[plane]
                ):
                    shown = source if name is None else f"{source}.{name}"
                    wrong.append(f"{module}:{node.lineno} imports {shown}")
    assert wrong == []


def test_dependencies_point_one_way() -> None:
    wrong = []
    for module, path in MODULES.items():
        mine = _package(module)
        if mine is None:
            continue
        for node in _imports(path):
            for source, _ in _targets(node, module):
                theirs = _package(source)
                if theirs is not None and theirs != mine and theirs not in ALLOWED[mine]:
                    wrong.append(f"{module}:{node.lineno} ({mine}) imports {source} ({theirs})")
    assert wrong == []


def _resolve(source: str, name: str | None) -> str:
    """The module a load-time import really loads: through a plane's lazy exports, the
    module that holds the name; a submodule when the name is one."""
    if name is not None and f"{source}.{name}" in MODULES:
        return f"{source}.{name}"
    if (
        name is not None
        and _package(source) in PLANES
        and source == f"affidavit.{_package(source)}"
    ):
        table = declared_exports(MODULES[source], source)
        if name in table:
            return table[name][0]
    return source


def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        found = set()
        for node in _imports(path, load_time_only=True):
            for source, name in _targets(node, module):
                target = _resolve(source, name)
                if target in MODULES and target != module:
                    found.add(target)
        graph[module] = found
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        assert module not in trail, " -> ".join((*trail[trail.index(module) :], module))
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, (*trail, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())


def test_no_hidden_import_cycle_through_function_level_imports() -> None:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        graph[module] = {
            target
            for node in _imports(path, load_time_only=False)
            for source, name in _targets(node, module)
            if (target := _resolve(source, name)) in MODULES and target != module
        }
    cycles = {
        frozenset({module, other})
        for module, targets in graph.items()
        for other in targets
        if _reaches(graph, other, module)
    }
    assert not cycles, sorted(map(sorted, cycles))


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    """True when ``goal`` can be imported, directly or not, from ``start``."""
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False

"""A package's public API, each name imported the first time it is used (PEP 562).

A plane's ``__init__`` lists its API once, as the imports of an ``if TYPE_CHECKING:`` block
(what type checkers and readers see) mirrored by ``__all__`` (ruff holds the two equal), and
ends with::

    __getattr__, __dir__ = lazy_exports(globals())

Importing the package then costs nothing until a name is read, and reading one imports only
the module that holds it: a command that needs one function of a plane does not pay for the
rest (``affidavit pack verify`` stays lean; the memory server checks a caller name without
loading the ranking code). The table of where each name lives is read from that block of the
package's own source on first use, so there is no second list to keep in step.

``from affidavit.vault import session`` in the block exports the submodule itself.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def lazy_exports(
    namespace: dict[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose ``globals()`` is ``namespace``.

    A name, once loaded, is kept in ``namespace`` and never looked up again.
    """
    package = str(namespace["__name__"])
    table: dict[str, tuple[str, str | None]] = {}

    def __getattr__(name: str) -> Any:
        if not table:
            table.update(declared_exports(Path(namespace["__file__"]), package))
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, attribute = table[name]
        __import__(module_name)  # the import statement's path: ``-X importtime`` sees it
        module = sys.modules[module_name]
        value = module if attribute is None else getattr(module, attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __getattr__, __dir__


def declared_exports(init: Path, package: str) -> dict[str, tuple[str, str | None]]:
    """Each name the ``if TYPE_CHECKING:`` block of ``init`` imports: ``(module, attribute)``,
    the attribute ``None`` for a submodule of ``package`` exported whole."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    table: dict[str, tuple[str, str | None]] = {}
    for block in tree.body:
        if not (isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"):
            continue
        for node in block.body:
            if not isinstance(node, ast.ImportFrom) or node.module is None or node.level:
                raise TypeError(f"{init}: the export block holds only absolute `from` imports")
            for alias in node.names:
                exported = alias.asname or alias.name
                if node.module == package:
                    table[exported] = (f"{package}.{alias.name}", None)
                else:
                    table[exported] = (node.module, alias.name)
    return table

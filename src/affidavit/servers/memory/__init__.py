"""The memory MCP server: the vault's ``memory_*`` tools over stdio (or Streamable HTTP).

:mod:`.catalogue` is the published contract (names, input schemas, descriptions,
annotations), :mod:`.handlers` what each tool does (:class:`MemoryTools`, no MCP plumbing),
:mod:`.shapes` the tools' argument types, :mod:`.schemas` the output schemas generated from
the types the handlers return, :mod:`.server` the wiring and :func:`serve`, the entry
``affidavit serve`` calls. Names are loaded on first use, so running
``python -m affidavit.servers.memory.schemas`` (which regenerates the output schemas)
imports nothing else first.
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.servers.memory.server import serve

__all__ = ["serve"]
__getattr__, __dir__ = lazy_exports(globals())

"""The memory MCP server: the vault's 14 ``memory_*`` tools over stdio.

:mod:`.catalogue` is the published contract (names, schemas, descriptions, annotations),
:mod:`.handlers` what each tool does (:class:`MemoryTools`, no MCP plumbing), :mod:`.server`
the wiring on the MCP SDK and :func:`serve`, the entry ``affidavit serve`` calls.
"""

from affidavit.servers.memory.server import serve

__all__ = ["serve"]

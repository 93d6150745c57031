"""Who may do what with a vault: callers and their grants, HTTP tokens, the unlock gate.

Every front-end (the CLI, the console, each MCP server over stdio or HTTP) acts for a named
*caller*; what a caller may read and write is decided here and nowhere else, from settings
sealed in the vault, so no transport can grant more than another (ADR 0160).

Public API (every name is loaded on first use)::

    from affidavit.access import Access, Grants, check_name, default_namespace

    check_name(value, what) -> str      a caller or namespace name (InputError otherwise)
    default_namespace(caller) -> str    where a caller writes when it names no namespace
    Grants.load(vault)                  the sealed grant table: mode, readable, hides_any,
                                        require_read, require_write, writes_everywhere
    Access(vault, caller)               one caller's check of a record named by id:
                                        readable, writable, require_write, grants
    grant(vault, caller, namespace, mode) -> Grants   set and seal one grant
    Mode, MODES, ALL, DEFAULT_CALLER    rw | ro | none; "*"; "user"

    tokens        HTTP bearer tokens per caller, hashed and sealed: issue, revoke, listing,
                  caller_for, digest, TokenInfo
    unlock_gate   the memory_unlock switch (set_unlock_tool, unlock_tool_enabled), mirrored
                  beside the vault for locked servers, and its back-off after wrong tries
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.access import tokens, unlock_gate
    from affidavit.access.grants import (
        ALL,
        DEFAULT_CALLER,
        MODES,
        Access,
        Grants,
        Settings,
        check_name,
        default_namespace,
        grant,
    )
    from affidavit.access.modes import Mode

__all__ = [
    "ALL",
    "DEFAULT_CALLER",
    "MODES",
    "Access",
    "Grants",
    "Mode",
    "Settings",
    "check_name",
    "default_namespace",
    "grant",
    "tokens",
    "unlock_gate",
]
__getattr__, __dir__ = lazy_exports(globals())

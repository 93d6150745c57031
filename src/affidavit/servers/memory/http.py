"""``affidavit serve --http``: the memory tools over Streamable HTTP, one caller per token.

The gate (:mod:`affidavit.servers.http`) turns a bearer token into a caller through the hashes
sealed in the vault (:mod:`affidavit.access.tokens`); each caller then gets the same MCP
server ``affidavit serve --caller NAME`` runs over stdio, built on first use, so its grants
and namespaces are the ones the caller has everywhere. Tokens are checked against the sealed
table on every request (a revoked token fails at once); while the vault is locked no token
can be checked, and every request gets 503 with the advice to unlock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import LockedError
from affidavit.servers.http import HttpOptions, serve
from affidavit.servers.memory.handlers import MemoryTools
from affidavit.servers.memory.server import one_blas_thread, sdk_server

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from affidavit.vault import Vault


class VaultTokens:
    """The gate's authenticator: tokens looked up in the vault's sealed settings."""

    def __init__(self, vault_path: Path | None) -> None:
        self.vault_path = vault_path
        self._vault: Vault | None = None
        self._lock = threading.Lock()

    def caller_for(self, token: str) -> str | None:
        """The caller of ``token`` as the vault says right now; LockedError while locked."""
        from affidavit.access import tokens

        with self._lock:
            vault = self._open()
            try:
                vault.refresh()  # a token issued or revoked since the last request
            except LockedError:
                self.close()
                raise
            return tokens.caller_for(vault, token)

    def _open(self) -> Vault:
        from affidavit.vault import Vault

        if self._vault is None or self._vault.closed:
            # consume_once=False: a one-time unlock is left for the tools, not spent here
            self._vault = Vault.open(self.vault_path, consume_once=False)
        return self._vault

    def close(self) -> None:
        """Close the vault handle, if open."""
        if self._vault is not None:
            self._vault.close()
            self._vault = None


def serve_http(options: HttpOptions, vault_path: Path | None = None) -> None:
    """Serve the memory tools over HTTP until interrupted; callers come from their tokens."""
    from affidavit.recall import prefer_shared

    one_blas_thread()
    prefer_shared()  # every caller's tools (and other servers of this user) share one model
    opened: list[MemoryTools] = []
    auth = VaultTokens(vault_path)

    def factory(caller: str) -> Server[Any]:
        tools = MemoryTools(caller, vault_path)
        opened.append(tools)
        server: Server[Any] = sdk_server(tools)
        return server

    try:
        serve(options, auth, factory, what="the memory vault")
    finally:
        auth.close()
        for tools in opened:
            tools.close()

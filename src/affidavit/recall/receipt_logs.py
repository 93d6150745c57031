"""The proxy audit logs whose receipts a vault trusts as evidence (ADR 0224).

A receipt names its log by path and the log's hash chain holds no secret, so anyone who can
write a file could write a whole log with a valid chain and a made-up VERIFIED call, and
cite it. A receipt therefore proves something only when its log is one the vault trusts:
the proxy's default log (``~/.affidavit/proxy/audit.jsonl`` under the affidavit home) and
the logs listed in the sealed setting ``evidence.receipt_logs``. Only a process holding the
vault key can add to that list: ``affidavit proxy run --remember`` registers its own
``--audit-log`` when it opens the vault, and a person runs ``affidavit proxy trust-log PATH``.

Paths are kept in the normal form the proxy writes into receipts (absolute, ``~`` expanded,
``.``/``..`` folded; symlinks are not resolved, as a receipt's path is not).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from affidavit.core.errors import InputError

RECEIPT_LOGS_SETTING = "evidence.receipt_logs"


class Settings(Protocol):
    """The part of :class:`affidavit.vault.Vault` this module needs."""

    def get_setting(self, key: str, default: Any = None) -> Any: ...

    def set_setting(self, key: str, value: Any) -> None: ...


def log_key(path: str | Path) -> str:
    """``path`` in the form receipts carry it: absolute, ``~`` expanded, normalised."""
    return os.path.normpath(Path(path).expanduser().absolute())


def default_receipt_log() -> str:
    """The proxy's default audit log, trusted without being registered."""
    from affidavit.proxy import default_log_path

    return log_key(default_log_path())


def registered_logs(vault: Settings) -> tuple[str, ...]:
    """The logs registered in ``vault``'s sealed setting, sorted (not the default log)."""
    raw = vault.get_setting(RECEIPT_LOGS_SETTING, [])
    if not isinstance(raw, list):
        return ()
    return tuple(sorted({log_key(p) for p in raw if isinstance(p, str) and p}))


def trusted_logs(vault: Settings) -> frozenset[str]:
    """Every log whose receipts ``vault`` trusts now: the default log and the registered."""
    return frozenset((default_receipt_log(), *registered_logs(vault)))


def untrusted_problem(log: str, trusted: frozenset[str]) -> str:
    """Why a receipt of ``log`` proves nothing because of where it is; empty when trusted."""
    if log in trusted:
        return ""
    return (
        f"the receipt's log {log} is not a log this vault trusts; if the proxy wrote it, "
        f"register it with `affidavit proxy trust-log {log}` (or run the proxy with "
        "--remember, which registers its --audit-log)"
    )


def trust_log(vault: Settings, path: str | Path) -> tuple[str, bool]:
    """Register ``path`` as a trusted receipt log; its normal form and whether it was new.
    The vault is written only when the list changes (the proxy registers at every start)."""
    key = log_key(path)
    known = registered_logs(vault)
    if key == default_receipt_log() or key in known:
        return key, False
    vault.set_setting(RECEIPT_LOGS_SETTING, sorted((*known, key)))
    return key, True


def untrust_log(vault: Settings, path: str | Path) -> str:
    """Take ``path`` off the trusted list; its normal form. InputError when it is not on the
    list (the default log cannot be taken off: it is where the proxy writes unasked)."""
    key = log_key(path)
    if key == default_receipt_log():
        raise InputError(
            f"{key} is the proxy's default audit log: it is always trusted",
            "move the proxy to another --audit-log if you do not want its receipts trusted",
        )
    known = registered_logs(vault)
    if key not in known:
        raise InputError(
            f"{key} is not a registered receipt log",
            "`affidavit proxy trust-log --list` shows the registered logs",
        )
    vault.set_setting(RECEIPT_LOGS_SETTING, [p for p in known if p != key])
    return key

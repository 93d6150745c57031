"""Who may read and write which namespace: grants per caller, sealed inside the vault.

Each agent connects as a *caller* (``affidavit serve --caller NAME``, default ``user``) and
writes into its own namespace by default (the namespace named after the caller). Grants are
``rw``, ``ro`` or ``none`` per caller and namespace, or for a caller on ``*`` (every namespace).
They live in the vault's sealed settings, so an agent cannot grant itself access by editing a
plaintext file; only someone who can unlock the vault can change them (``affidavit grant``).

Defaults when nothing is granted (chosen so one person's agents share memory out of the box,
while a named agent cannot overwrite another's notes):

- caller ``user`` (you, and every client wired without ``--caller``): ``rw`` everywhere;
- any other caller: ``rw`` on its own namespace, ``ro`` on every other namespace.

Lookup order: the exact (caller, namespace) grant, then the caller's ``*`` grant, then the
default above. ``none`` hides a namespace completely: its memories are never searched, listed
or returned to that caller.

Every call that names a record by id goes through :class:`Access` (the recall layer does it,
so the CLI, the console and every MCP server, each a named caller, get the same checks):
changing a record needs ``rw`` on *its* namespace, and a record the caller cannot see is
answered exactly like an id the vault never held. See docs/adr/0064-namespace-access-by-id.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from affidavit.access.modes import Mode
from affidavit.core.errors import InputError, NotFoundError, PolicyError
from affidavit.vault import unknown_record

if TYPE_CHECKING:
    from affidavit.vault import VaultItem


MODES: tuple[Mode, ...] = tuple(Mode)
DEFAULT_CALLER = "user"
ALL = "*"
GRANTS_SETTING = "acl.grants"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


class Settings(Protocol):
    """The part of :class:`affidavit.vault.Vault` this module needs."""

    path: Path

    def get_setting(self, key: str, default: Any = None) -> Any: ...

    def set_setting(self, key: str, value: Any) -> None: ...


class Records(Settings, Protocol):
    """The part of :class:`affidavit.vault.Vault` that :class:`Access` needs."""

    def get(self, item_id: str) -> VaultItem: ...


def check_name(value: str, what: str) -> str:
    """A caller or namespace name: 1-64 letters, digits and ``_.:-``."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        raise InputError(
            f"{what} {value!r} is not valid",
            "use 1-64 letters, digits, '_', '.', ':' or '-', starting with a letter or digit",
        )
    return value


def default_namespace(caller: str) -> str:
    """Where ``caller`` writes when it names no namespace: its own."""
    return caller


def default_mode(caller: str, namespace: str) -> Mode:
    """The access ``caller`` has to ``namespace`` when no grant says otherwise."""
    if caller == DEFAULT_CALLER or namespace == default_namespace(caller):
        return Mode.RW
    return Mode.RO


class Grants:
    """The grant table as read from the vault: ``{caller: {namespace or '*': mode}}``."""

    def __init__(self, table: dict[str, dict[str, str]] | None = None) -> None:
        self.table: dict[str, dict[str, str]] = {
            caller: dict(rules) for caller, rules in (table or {}).items()
        }

    @classmethod
    def load(cls, vault: Settings) -> Grants:
        """The grants sealed in ``vault`` (an empty table if none were ever set)."""
        raw = vault.get_setting(GRANTS_SETTING, {})
        if not isinstance(raw, dict):
            return cls()
        return cls(
            {
                str(caller): {str(ns): str(mode) for ns, mode in rules.items() if mode in MODES}
                for caller, rules in raw.items()
                if isinstance(rules, dict)
            }
        )

    def mode(self, caller: str, namespace: str) -> Mode:
        """The effective access of ``caller`` to ``namespace``."""
        rules = self.table.get(caller, {})
        found = rules.get(namespace, rules.get(ALL))
        if found in MODES:
            return Mode(found)
        return default_mode(caller, namespace)

    def writes_everywhere(self, caller: str) -> bool:
        """Whether ``caller`` may write every namespace, even one no grant names yet."""
        rules = self.table.get(caller, {})
        fallback = rules.get(ALL, Mode.RW if caller == DEFAULT_CALLER else None)
        return fallback == Mode.RW and all(mode == Mode.RW for mode in rules.values())

    def hides_any(self, caller: str) -> bool:
        """Whether some grant takes ``caller``'s read access away (only ``none`` does)."""
        return Mode.NONE in self.table.get(caller, {}).values()

    def readable(self, caller: str, namespaces: Iterable[str]) -> list[str]:
        """Those of ``namespaces`` that ``caller`` may read, sorted."""
        return sorted({ns for ns in namespaces if self.mode(caller, ns) is not Mode.NONE})

    def require_read(self, caller: str, namespace: str) -> None:
        """PolicyError unless ``caller`` may read ``namespace``."""
        if self.mode(caller, namespace) is Mode.NONE:
            raise PolicyError(
                f"caller {caller!r} has no access to namespace {namespace!r}",
                f"the user can allow it with `affidavit grant {caller} {namespace} ro`",
            )

    def require_write(self, caller: str, namespace: str) -> None:
        """PolicyError unless ``caller`` may write ``namespace``."""
        mode = self.mode(caller, namespace)
        if mode is not Mode.RW:
            raise PolicyError(
                f"caller {caller!r} may not write to namespace {namespace!r} (access: {mode})",
                f"write to your own namespace {default_namespace(caller)!r}, or the user can "
                f"allow it with `affidavit grant {caller} {namespace} rw`",
            )


class Access:
    """One caller's rights over the records of one vault: the check every id-taking call makes.

    Grants are read from the vault's sealed settings at each check, so a grant set meanwhile
    applies to the next call.
    """

    def __init__(self, vault: Records, caller: str = DEFAULT_CALLER) -> None:
        self.vault = vault
        self.caller = check_name(caller, "caller")

    def grants(self) -> Grants:
        """The grant table as it is sealed in the vault right now."""
        return Grants.load(self.vault)

    def require_write(self, namespace: str) -> None:
        """PolicyError unless this caller may write ``namespace``."""
        self.grants().require_write(self.caller, namespace)

    def readable(self, item_id: str) -> VaultItem:
        """The live record ``item_id``, answered like an unknown id if the caller cannot see it.

        A caller that some namespace is hidden from also gets the unknown-id answer for ids
        that were forgotten or shredded: their namespace is sealed away with their content,
        so "was forgotten" could confirm that a hidden record once existed.
        """
        grants = self.grants()
        try:
            item = self.vault.get(item_id)
        except NotFoundError:
            if grants.hides_any(self.caller):
                raise unknown_record(item_id) from None
            raise
        if grants.mode(self.caller, item.namespace) is Mode.NONE:
            raise unknown_record(item_id)
        return item

    def writable(self, item_id: str) -> VaultItem:
        """The live record ``item_id`` if this caller may change it (``rw`` on its namespace)."""
        item = self.readable(item_id)
        self.require_write(item.namespace)
        return item

    def writes_everywhere(self) -> bool:
        """Whether this caller may write any namespace (needed to shred a forgotten record)."""
        return self.grants().writes_everywhere(self.caller)

    def scope(
        self, only: Iterable[str] | None, known: Callable[[], Iterable[str]]
    ) -> frozenset[str] | None:
        """The namespaces a read covers: ``only`` (PolicyError for one this caller may not
        read), else every namespace of ``known()`` it may read.

        None means all of them: only a ``none`` grant hides a namespace, so without one
        nothing has to be listed (the common case stays O(1)).
        """
        grants = self.grants()
        if only is not None:
            named = frozenset(only)
            for namespace in sorted(named):
                grants.require_read(self.caller, namespace)
            return named
        if not grants.hides_any(self.caller):
            return None
        return frozenset(grants.readable(self.caller, known()))


def grant(vault: Settings, caller: str, namespace: str, mode: str) -> Grants:
    """Set (and seal) one grant; return the new table."""
    check_name(caller, "caller")
    if namespace != ALL:
        check_name(namespace, "namespace")
    if mode not in MODES:
        words = ", ".join(MODES)
        raise InputError(f"access {mode!r} is not one of {words}", f"pass one of {words}")
    grants = Grants.load(vault)
    grants.table.setdefault(caller, {})[namespace] = Mode(mode).value
    vault.set_setting(GRANTS_SETTING, grants.table)
    return grants

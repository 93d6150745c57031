"""memory_unlock's gate: whether the tool is offered at all, and how soon it may be tried again.

The switch itself is a sealed setting (``affidavit unlock-tool``, ADR 0063;
:func:`set_unlock_tool`, :func:`unlock_tool_enabled`), which a locked server cannot read; yet
a server must decide, while locked, whether to list the tool, and a disabled tool must not
answer differently for a right and a wrong passphrase. So the switch
is mirrored into ``unlock-tool.json`` in the vault directory whenever it is set
(:func:`set_unlock_tool`) or read by a process that has the vault open (the memory
server, ``affidavit unlock``), together with the count of wrong passphrases in a row.
Missing or damaged means disabled.

After :data:`FREE_TRIES` wrong passphrases in a row, each further try must wait, doubling from
:data:`FIRST_PAUSE_S` up to :data:`MAX_PAUSE_S`; a right passphrase resets the count. The
count is shared by every server on the vault and survives restarts.

The file is not sealed, on purpose: whoever can write it can also copy the vault file and
guess offline at full speed, so editing it (to re-list the tool or reset the count) gains
nothing the file access does not already give. The sealed setting stays the authority: a
right passphrase while the setting is off unlocks nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from affidavit.access.grants import Settings

UNLOCK_TOOL_SETTING = "mcp.unlock_tool_enabled"
GATE_NAME = "unlock-tool.json"
FREE_TRIES = 3
FIRST_PAUSE_S = 15.0
MAX_PAUSE_S = 3600.0
_LIMIT = 4096


@dataclass(frozen=True)
class Gate:
    """The mirrored switch and the run of wrong passphrases."""

    enabled: bool = False
    failures: int = 0
    last_failure: float = 0.0

    def pause_left(self, now: float) -> float:
        """Seconds until the next try is allowed (0 when it is allowed now)."""
        if self.failures < FREE_TRIES:
            return 0.0
        pause = min(FIRST_PAUSE_S * 2.0 ** (self.failures - FREE_TRIES), MAX_PAUSE_S)
        return max(0.0, self.last_failure + pause - now)


def unlock_tool_enabled(vault: Settings) -> bool:
    """Whether the user allowed the ``memory_unlock`` MCP tool (off unless they turned it on)."""
    return vault.get_setting(UNLOCK_TOOL_SETTING, False) is True


def set_unlock_tool(vault: Settings, enabled: bool) -> None:
    """Allow or forbid the ``memory_unlock`` MCP tool (a sealed setting), and mirror the
    switch for servers that start while the vault is locked."""
    vault.set_setting(UNLOCK_TOOL_SETTING, bool(enabled))
    remember(vault.path, bool(enabled))


def read(vault_dir: Path) -> Gate:
    """The gate of the vault in ``vault_dir``; disabled when there is no readable file."""
    try:
        fd = os.open(Path(vault_dir) / GATE_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return Gate()
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return _parse(os.read(fd, _LIMIT))
    finally:
        os.close(fd)


def remember(vault_dir: Path, enabled: bool) -> None:
    """Mirror the sealed switch (called by whoever has just read it)."""
    with _update(vault_dir) as (gate, write):
        if gate.enabled != enabled:
            write(Gate(enabled, gate.failures, gate.last_failure))


def record(vault_dir: Path, *, ok: bool) -> None:
    """Count a wrong passphrase, or reset the count after a right one."""
    with _update(vault_dir) as (gate, write):
        if ok:
            if gate.failures:
                write(Gate(gate.enabled))
        else:
            write(Gate(gate.enabled, gate.failures + 1, time.time()))


@contextlib.contextmanager
def _update(vault_dir: Path) -> Iterator[tuple[Gate, Callable[[Gate], None]]]:
    """The gate under an exclusive lock, with a function that rewrites it in place."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(Path(vault_dir) / GATE_NAME, flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)

        def write(gate: Gate) -> None:
            data = json.dumps(asdict(gate), sort_keys=True).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
            os.fsync(fd)

        yield _parse(os.pread(fd, _LIMIT, 0)), write
    finally:
        os.close(fd)


def _parse(data: bytes) -> Gate:
    try:
        value = json.loads(data)
        enabled, failures, last = value["enabled"], value["failures"], value["last_failure"]
        if not (isinstance(enabled, bool) and isinstance(failures, int) and failures >= 0):
            return Gate()
        return Gate(enabled, failures, float(last))
    except (ValueError, KeyError, TypeError):
        return Gate()

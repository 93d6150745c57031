"""The proxy's audit log: one hash-chained JSONL entry per call the proxy handled.

Each line is canonical JSON ``{"body": {...}, "prev": ..., "hash": ...}`` linked with
:func:`affidavit.core.hashchain.link_hash`. Several proxies (one per MCP server a client
starts) may share one log, so an append takes an exclusive ``flock``, reads the last link and
writes the new line with one ``write`` under ``O_APPEND``: the chain stays linear across
processes. Arguments are stored redacted (secret-looking keys and values replaced, long
strings cut to a digest) so the log can back-test a new policy without holding secrets.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir
from affidavit.core.canonical import canonical_json, digest_json, sha256_hex
from affidavit.core.errors import IntegrityError
from affidavit.core.hashchain import GENESIS, ChainBreak, first_break, link_hash, link_problem
from affidavit.core.paths import affidavit_home

AUDIT_RESOURCE_URI = "affidavit://audit"
REDACTED = "[redacted]"
_SECRET_KEY = re.compile(
    r"(pass(word|phrase)?|secret|token|api[-_]?key|auth|credential|cookie|private[-_]?key)", re.I
)
_SECRET_VALUE = re.compile(
    r"^(Bearer\s+\S+|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|sk-[A-Za-z0-9_-]{16,}"
    r"|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----.*)$",
    re.S,
)
_MAX_STRING = 256


def default_log_path() -> Path:
    """Where the audit log lives when ``--audit-log`` is not given."""
    return affidavit_home() / "proxy" / "audit.jsonl"


def redact(value: Any, key: str = "") -> Any:
    """A copy of ``value`` safe to write down: secrets replaced, long strings cut to a digest."""
    if key and _SECRET_KEY.search(key):
        return REDACTED
    if isinstance(value, Mapping):
        return {str(k): redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        if _SECRET_VALUE.match(value.strip()):
            return REDACTED
        if len(value) > _MAX_STRING:
            digest = sha256_hex(value.encode("utf-8"))
            return f"{value[:64]}…({len(value)} chars, sha256 {digest[:16]})"
    return value


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """The digest recorded for a call's arguments: over the redacted form, never the secrets."""
    return digest_json(redact(arguments))


@dataclass(frozen=True)
class LogReport:
    """The result of walking a log: ``ok`` when every link verified."""

    ok: bool
    entries: int
    first_break: ChainBreak | None = None
    head: str = GENESIS


def _link(raw: bytes) -> tuple[str, str, Mapping[str, Any]]:
    """One line as ``(prev, hash, body)``; a line that is not a link reads as an empty one."""
    try:
        record = json.loads(raw)
        return str(record["prev"]), str(record["hash"]), dict(record["body"])
    except (ValueError, KeyError, TypeError):
        return "", "", {}


def _links(path: Path) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                yield _link(raw)


def verify_log(path: Path) -> LogReport:
    """Walk the chain in ``path``; report how many entries verified and the first break."""
    path = Path(path)
    if not path.exists():
        raise IntegrityError(f"no audit log at {path}", "check the path given to --audit-log")
    links = list(_links(path))
    broken = first_break(links)
    if broken is not None:
        return LogReport(ok=False, entries=broken.index, first_break=broken)
    head = links[-1][1] if links else GENESIS
    return LogReport(ok=True, entries=len(links), head=head)


def read_entries(path: Path) -> list[dict[str, Any]]:
    """Every entry body in order (for ``proxy replay``); a broken chain is refused."""
    report = verify_log(path)
    if not report.ok:
        assert report.first_break is not None
        raise IntegrityError(
            f"audit log {path} is broken at entry {report.first_break.index + 1}: "
            f"{report.first_break.reason}",
            "run `affidavit audit verify --log FILE` and use an intact log",
        )
    return [dict(body) for _, _, body in _links(path)]


def _last_hash(handle: Any) -> str:
    """The ``hash`` of the last line of an open log (reads backwards from the end)."""
    end = handle.seek(0, os.SEEK_END)
    if end == 0:
        return GENESIS
    chunk = 4096
    pos = end
    data = b""
    while pos > 0:
        step = min(chunk, pos)
        pos -= step
        handle.seek(pos)
        data = handle.read(step) + data
        stripped = data.rstrip(b"\n")
        if b"\n" in stripped or pos == 0:
            last = stripped.rsplit(b"\n", 1)[-1]
            try:
                return str(json.loads(last)["hash"])
            except (ValueError, KeyError, TypeError) as exc:
                raise IntegrityError(
                    "the audit log's last line is not a chain entry",
                    "run `affidavit audit verify --log FILE`; move the damaged log aside",
                ) from exc
        chunk *= 2
    return GENESIS


@dataclass
class AuditLog:
    """An append-only, hash-chained log shared safely by several processes."""

    path: Path
    session: str
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _session_entries: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if not self.path.parent.exists():  # a new directory is private; an existing one is kept
            ensure_private_dir(self.path.parent)

    def remember(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Add ``body`` to this session's entries now (the disk write may follow later)."""
        entry = {"session": self.session, **dict(body)}
        self._session_entries.append(entry)  # list.append is atomic; no lock against disk IO
        return entry

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append ``entry`` as the next link of the chain on disk."""
        entry = dict(entry)
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, SECRET_FILE_MODE)
            with os.fdopen(fd, "r+b") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                try:
                    prev = _last_hash(handle)
                    line = canonical_json(
                        {"body": entry, "hash": link_hash(prev, entry), "prev": prev}
                    )
                    os.write(handle.fileno(), line + b"\n")
                finally:
                    with contextlib.suppress(OSError):
                        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def append(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Remember ``body`` and write it; return the stored entry."""
        entry = self.remember(body)
        self.write(entry)
        return entry

    def check_writable(self) -> None:
        """Fail now, with one clear line, if the log's tail is damaged or unwritable."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, SECRET_FILE_MODE)
        except OSError as exc:
            raise IntegrityError(
                f"cannot open the audit log {self.path} ({exc.strerror})",
                "pass a writable --audit-log",
            ) from None
        with os.fdopen(fd, "r+b") as handle:
            _last_hash(handle)

    def session_entries(self) -> list[dict[str, Any]]:
        """This session's entries, oldest first (served as ``affidavit://audit``)."""
        return list(self._session_entries)


@dataclass(frozen=True)
class LogUpdate:
    """What a :class:`LogFollower` found since it last looked.

    ``restarted``: the log was replaced or cut shorter, so ``entries`` start again from its
    first line and what was read before no longer stands.
    """

    entries: tuple[Mapping[str, Any], ...]
    restarted: bool = False


class LogFollower:
    """Reads a log as proxies append to it: each :meth:`poll` returns the entries added since.

    Links are verified as they are read, so :attr:`report` always says whether everything read
    so far chains up (the first break is kept; later entries are still returned). Only whole
    lines are read: an append in progress is picked up on the next poll.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._offset = 0
        self._identity: tuple[int, int] | None = None
        self._expected = GENESIS
        self._count = 0
        self._break: ChainBreak | None = None

    @property
    def report(self) -> LogReport:
        """The chain's state over every entry read so far."""
        if self._break is not None:
            return LogReport(ok=False, entries=self._break.index, first_break=self._break)
        return LogReport(ok=True, entries=self._count, head=self._expected)

    def poll(self, max_bytes: int = 8 * 1024 * 1024) -> LogUpdate:
        """The entries appended since the last poll (none while the log does not exist).

        At most about ``max_bytes`` are read per poll (whole lines), so a long log is caught up
        with over several polls instead of in one read.
        """
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return LogUpdate((), self._restart(None))
        with handle:
            status = os.fstat(handle.fileno())
            restarted = self._restart((status.st_dev, status.st_ino), status.st_size)
            if status.st_size == self._offset:
                return LogUpdate((), restarted)
            handle.seek(self._offset)
            data = handle.read(min(status.st_size - self._offset, max_bytes))
            if b"\n" not in data:  # one line longer than the bound: read to its end
                data += handle.readline()
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        entries = []
        for raw in complete.splitlines():
            if not raw.strip():
                continue
            prev, stored_hash, body = _link(raw)
            problem = link_problem(self._expected, prev, stored_hash, body)
            if problem is not None and self._break is None:
                self._break = ChainBreak(self._count, problem)
            self._expected = stored_hash
            self._count += 1
            entries.append(body)
        return LogUpdate(tuple(entries), restarted)

    def _restart(self, identity: tuple[int, int] | None, size: int = 0) -> bool:
        """Start over when the file is another one than before, or shorter than what was read."""
        if identity == self._identity and size >= self._offset:
            return False
        had_read = self._identity is not None or self._offset > 0
        self._identity, self._offset, self._expected = identity, 0, GENESIS
        self._count, self._break = 0, None
        return had_read

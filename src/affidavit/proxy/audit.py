"""The proxy's audit log: one hash-chained JSONL entry per call the proxy handled.

Each line is canonical JSON ``{"body": {...}, "prev": ..., "hash": ...}`` linked with
:func:`affidavit.core.hashchain.link_hash`. Several proxies (one per MCP server a client
starts) may share one log, so an append takes an exclusive ``flock``, reads the last link and
writes the new lines with one ``write`` under ``O_APPEND``: the chain stays linear across
processes. A writer remembers where its own last append ended and which hash it wrote there;
when the file (same inode) still ends there, nobody appended since, and the tail need not be
read again. A proxy hands its entries to an :class:`AuditWriter` thread, so no reply waits
for the disk and a burst of calls takes the lock once.

Arguments are stored redacted (:func:`redact`) so the log can back-test a new policy without
holding secrets: the log is kept for good and served to the model as ``affidavit://audit``,
so nothing secret may enter it. The proxy writes frozen entry types whose fields hold only
redacted values (:mod:`affidavit.proxy.audit_entries`); :data:`AuditEntry` is their JSON as
readers (``proxy replay``, the console, ``check_receipt``) see it, in logs of any release.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir
from affidavit.core.canonical import canonical_json, sha256_hex
from affidavit.core.errors import IntegrityError
from affidavit.core.hashchain import (
    GENESIS,
    ChainBreak,
    first_break,
    link_hash_encoded,
    link_problem,
)
from affidavit.core.paths import affidavit_home
from affidavit.core.secret_text import REDACTED, scrub

AUDIT_RESOURCE_URI = "affidavit://audit"
_SECRET_KEY = re.compile(
    r"(pass(word|phrase)?|secret|token|api[-_]?key|auth|credential|cookie|private[-_]?key)", re.I
)
CONTENT_KEYS = frozenset(
    {"content", "contents", "text", "body", "data", "blob", "file_text", "patch", "diff"}
    | {"oldText", "newText", "old_str", "new_str", "old_string", "new_string"}
)
"""Arguments that carry a file's or a message's body: stored as a digest, never as text."""
_MAX_STRING = 256
_SCALARS = (bool, int, float)
BATCH_WINDOW = 0.002
"""Seconds the audit thread lets entries gather after the first wakes it: a burst of calls
costs one wake-up, one lock and one write instead of one each."""


def default_log_path() -> Path:
    """Where the audit log lives when ``--audit-log`` is not given."""
    return affidavit_home() / "proxy" / "audit.jsonl"


def content_digest(text: str) -> str:
    """What stands in for a body: its length and SHA-256 (compare it with a file's hash)."""
    return f"[{len(text)} chars, sha256 {sha256_hex(text.encode('utf-8', 'surrogatepass'))}]"


def redact(value: Any, key: str = "") -> Any:
    """A copy of ``value`` safe to write down.

    A secret-named key's value is replaced outright; bodies (:data:`CONTENT_KEYS`, or any string
    longer than 256 characters) become :func:`content_digest`; other strings are
    :func:`scrub`-bed. Redaction happens before anything is hashed.
    """
    if key and _SECRET_KEY.search(key):
        return REDACTED
    if isinstance(value, str):
        if key in CONTENT_KEYS or len(value) > _MAX_STRING:
            return content_digest(value)
        return scrub(value)
    if value is None or type(value) in _SCALARS:
        return value
    if isinstance(value, list | tuple):
        return [redact(v, key) for v in value]
    if isinstance(value, dict | Mapping):  # a plain dict is told apart without the ABC check
        return {str(k): redact(v, str(k)) for k, v in value.items()}
    return value


AuditEntry = TypedDict(
    "AuditEntry",
    {
        "session": str,  # the proxy process that wrote it (random per start)
        "ts": str,  # UTC time the entry was recorded
        "kind": Literal["call", "read", "refused", "sampling", "pin-changed"],
        "method": str,  # tools/call, resources/read
        "backend": str,
        "tool": str,
        "uri": str,  # redacted
        "arguments": Any,  # redacted (:func:`redact`)
        "arguments_sha256": str,  # of the redacted arguments
        "outcome": str,  # result, replayed, denied, refused, approval-asked, error, ...
        "policy": dict[str, Any],  # the decision: action, rule, allowed, reason
        "verdict": str | None,  # verified, contradicted, unchecked; None: no verifier ran
        "verifier": str,
        "claim": Any,  # redacted
        "evidence": list[Any],  # redacted
        "timings_ms": dict[str, float],
        "forwarded": bool,
        "from": str,  # a refused line: host or backend
        "reason": str,
        "id": Any,  # a refused line's JSON-RPC id(s)
        "line_sha256": str,
        "pinned": str,  # a changed tool definition: the pinned and the seen hash
        "seen": str,
    },
    total=False,
)
"""One entry of the audit log as ``proxy replay`` and the ``affidavit://audit`` resource read
it: the body of one chain link. Which fields an entry has depends on its ``kind``; the proxy
writes each kind from its own type in :mod:`affidavit.proxy.audit_entries`, whose fields hold
only redacted values (nothing secret)."""


@dataclass(frozen=True)
class LogReport:
    """The result of walking a log: ``ok`` when every link verified.

    ``chained`` is False for a log in another product's format that has no hash chain
    (verimcp's): its entries were read, but nothing shows they were not changed.
    """

    ok: bool
    entries: int
    first_break: ChainBreak | None = None
    head: str = GENESIS
    chained: bool = True
    format: str = "affidavit"


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


def _written_by_verimcp(path: Path) -> bool:
    """Whether ``path`` is a verimcp audit log (judged by its first non-empty line)."""
    from affidavit.proxy.verimcp_log import is_verimcp_line

    with path.open("rb") as handle:
        first = next((raw for raw in handle if raw.strip()), b"")
    return bool(first) and is_verimcp_line(first)


def verify_log(path: Path) -> LogReport:
    """Walk the chain in ``path``; report how many entries verified and the first break.

    A verimcp log is read and counted (a malformed line is refused) and reported as not
    chained."""
    path = Path(path)
    if not path.exists():
        raise IntegrityError(f"no audit log at {path}", "check the path given to --audit-log")
    if _written_by_verimcp(path):
        from affidavit.proxy.verimcp_log import FORMAT, count_verimcp_entries

        entries = count_verimcp_entries(path)
        return LogReport(ok=True, entries=entries, head="", chained=False, format=FORMAT)
    links = list(_links(path))
    broken = first_break(links)
    if broken is not None:
        return LogReport(ok=False, entries=broken.index, first_break=broken)
    head = links[-1][1] if links else GENESIS
    return LogReport(ok=True, entries=len(links), head=head)


@dataclass(frozen=True)
class ReceiptCheck:
    """Whether one entry of an audit log still proves a call the proxy judged VERIFIED.

    ``reason`` says why not (empty when it holds); ``entry`` is the entry found, if any.
    """

    holds: bool
    reason: str = ""
    entry: AuditEntry | None = None


@dataclass(frozen=True)
class ReceiptBook:
    """One reading of an audit log, for judging receipts: every entry by its link hash, or
    ``problem``, why no entry of it proves anything (unreadable, no chain, broken).

    A reader that judges many receipts of one log (a search showing memories proven by the
    same session) reads and verifies it once per change of the file, not once per receipt.
    """

    path: Path
    problem: str = ""
    entries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def check(self, entry_hash: str) -> ReceiptCheck:
        """Judge one receipt of this log (:func:`check_receipt`)."""
        if self.problem:
            return ReceiptCheck(False, self.problem)
        body = self.entries.get(entry_hash)
        if body is None:
            missing = f"the audit log {self.path} holds no entry {entry_hash[:16]}…"
            return ReceiptCheck(False, missing)
        entry = cast("AuditEntry", dict(body))
        if entry.get("kind") != "call" or entry.get("verdict") != "verified":
            verdict = entry.get("verdict") or "no verdict"
            return ReceiptCheck(False, f"entry {entry_hash[:16]}… is a {verdict} call", entry)
        return ReceiptCheck(True, "", entry)


def read_receipts(path: Path) -> ReceiptBook:
    """Read and verify the log at ``path`` once, for judging any number of its receipts; a
    log without a hash chain (verimcp's) proves nothing, whatever it says."""
    path = Path(path)
    try:
        if _written_by_verimcp(path):
            return ReceiptBook(path, f"{path} is a verimcp log: it has no hash chain")
        links = list(_links(path))
    except OSError as exc:
        return ReceiptBook(path, f"the audit log {path} cannot be read ({exc.strerror})")
    broken = first_break(links)
    if broken is not None:
        where = f"entry {broken.index + 1}: {broken.reason}"
        return ReceiptBook(path, f"the audit log {path} no longer verifies (broken at {where})")
    return ReceiptBook(path, entries={link: body for _, link, body in links})


def check_receipt(path: Path, entry_hash: str) -> ReceiptCheck:
    """Judge a receipt: the log at ``path`` verifies link by link, holds an entry whose link
    hash is ``entry_hash``, and that entry records a call with the verdict ``verified``.

    The memory plane asks this to prove a memory by a tool call (docs/evidence.md); a log
    without a hash chain (verimcp's) proves nothing, whatever it says.
    """
    return read_receipts(path).check(entry_hash)


def read_entries(path: Path) -> list[AuditEntry]:
    """Every entry body in order (for ``proxy replay``); a broken chain is refused. A verimcp
    log's entries are translated into ours (:mod:`affidavit.proxy.verimcp_log`)."""
    if Path(path).exists() and _written_by_verimcp(Path(path)):
        from affidavit.proxy.verimcp_log import read_verimcp_log

        return read_verimcp_log(path)
    report = verify_log(path)
    if not report.ok:
        assert report.first_break is not None
        raise IntegrityError(
            f"audit log {path} is broken at entry {report.first_break.index + 1}: "
            f"{report.first_break.reason}",
            "run `affidavit audit verify --log FILE` and use an intact log",
        )
    return [cast("AuditEntry", dict(body)) for _, _, body in _links(path)]


def _last_hash(fd: int) -> str:
    """The ``hash`` of the last line of an open log (reads backwards from the end)."""
    end = os.fstat(fd).st_size
    if end == 0:
        return GENESIS
    chunk = 4096
    pos = end
    data = b""
    while pos > 0:
        step = min(chunk, pos)
        pos -= step
        data = os.pread(fd, step, pos) + data
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
    _session_entries: list[AuditEntry] = field(default_factory=list, repr=False)
    _tail: tuple[int, int, int, str] | None = field(default=None, repr=False)
    """(device, inode, size, hash) right after this writer's last append."""
    _fd: int | None = field(default=None, repr=False)
    _fd_file: tuple[int, int] = field(default=(0, 0), repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if not self.path.parent.exists():  # a new directory is private; an existing one is kept
            ensure_private_dir(self.path.parent)

    def remember(self, body: Mapping[str, Any]) -> AuditEntry:
        """Add ``body`` to this session's entries now (the disk write may follow later)."""
        entry = cast("AuditEntry", {"session": self.session, **dict(body)})
        self._session_entries.append(entry)  # list.append is atomic; no lock against disk IO
        return entry

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append ``entry`` as the next link of the chain on disk."""
        self.write_many([entry])

    def write_many(self, entries: Sequence[Mapping[str, Any]]) -> list[str]:
        """Append ``entries`` in order as the next links of the chain, in one ``write``; each
        one's link hash (what a receipt names)."""
        with self._lock:
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                return self._append(fd, entries)
            finally:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def _open(self) -> int:
        """The log's fd, kept open between appends; opened again when the path names another
        file now (the log was moved aside or deleted)."""
        try:
            named = self.path.stat()
            current = (named.st_dev, named.st_ino) == self._fd_file
        except FileNotFoundError:
            current = False
        if self._fd is not None and current:
            return self._fd
        self.close()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, SECRET_FILE_MODE)
        opened = os.fstat(self._fd)
        self._fd_file = (opened.st_dev, opened.st_ino)
        return self._fd

    def close(self) -> None:
        """Close the kept fd (the next append opens the log again)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def _append(self, fd: int, entries: Sequence[Mapping[str, Any]]) -> list[str]:
        """Under the lock: link ``entries`` after the file's last hash and write them; their
        link hashes."""
        info = os.fstat(fd)
        where = (info.st_dev, info.st_ino, info.st_size)
        prev = self._tail[3] if self._tail and self._tail[:3] == where else _last_hash(fd)
        lines = []
        hashes = []
        for entry in entries:
            body = canonical_json(dict(entry))
            digest = link_hash_encoded(prev, body)
            hashes.append(digest)
            # canonical_json({"body", "hash", "prev"}) built around the body encoded once
            lines.append(
                b'{"body":%s,"hash":"%s","prev":"%s"}\n' % (body, digest.encode(), prev.encode())
            )
            prev = digest
        data = b"".join(lines)
        written = os.write(fd, data)
        if written != len(data):
            self._tail = None
            raise OSError(f"the audit log took {written} of {len(data)} bytes (disk full?)")
        self._tail = (*where[:2], where[2] + written, prev)
        return hashes

    def append(self, body: Mapping[str, Any]) -> AuditEntry:
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
        try:
            _last_hash(fd)
        finally:
            os.close(fd)

    def session_entries(self) -> list[AuditEntry]:
        """This session's entries, oldest first (served as ``affidavit://audit``)."""
        return list(self._session_entries)


class AuditWriter:
    """Completes and appends a log's entries from one background thread, a batch at a time:
    whatever waited while the last batch was written goes out together, under one lock.

    ``complete`` turns a queued item into the entry as kept and written (redaction and the
    like run here, off the threads that relay messages); ``on_error`` hears of a failed write;
    ``written(item, entry, link_hash)``, when given, hears of each entry once it is on disk
    (``proxy run --remember`` needs the hash a receipt names).
    """

    def __init__(
        self,
        log: AuditLog,
        complete: Callable[[Any], Mapping[str, Any]],
        on_error: Callable[[Exception], None],
        written: Callable[[Any, Mapping[str, Any], str], None] | None = None,
    ) -> None:
        self.log = log
        self.complete = complete
        self.on_error = on_error
        self.written = written
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="affidavit-audit", daemon=True)
        self._thread.start()

    def put(self, item: Any) -> None:
        """Queue one item (any thread; never blocks)."""
        self._queue.put(item)

    def flush(self) -> None:
        """Wait until everything queued so far is completed and written."""
        done = threading.Event()
        self._queue.put(done)
        done.wait()

    def close(self) -> None:
        """Write everything queued so far, then stop (and close the log)."""
        self._queue.put(None)
        self._thread.join()
        self.log.close()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            if batch[0] is not None:
                time.sleep(BATCH_WINDOW)  # let a burst gather: one wake-up, one lock, one write
            with contextlib.suppress(queue.Empty):
                while batch[-1] is not None:
                    batch.append(self._queue.get_nowait())
            done: list[tuple[Any, Mapping[str, Any]]] = []
            for item in batch:
                if item is None or isinstance(item, threading.Event):
                    continue
                try:
                    done.append((item, self.complete(item)))
                except Exception as exc:
                    self.on_error(exc)
            if done:
                self._write(done)
            for item in batch:
                if isinstance(item, threading.Event):
                    item.set()
            if batch[-1] is None:
                return

    def _write(self, done: list[tuple[Any, Mapping[str, Any]]]) -> None:
        """Write one batch of completed entries; tell ``written`` of each once on disk."""
        try:
            hashes = self.log.write_many([entry for _, entry in done])
        except Exception as exc:
            self.on_error(exc)
            return
        if self.written is None:
            return
        for (item, entry), link in zip(done, hashes, strict=True):
            try:
                self.written(item, entry, link)
            except Exception as exc:  # a listener's failure never stops the audit
                self.on_error(exc)


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

"""The proxy's audit log: one hash-chained JSONL entry per call the proxy handled.

Each line is canonical JSON ``{"body": {...}, "prev": ..., "hash": ...}`` linked with
:func:`affidavit.core.hashchain.link_hash`. Several proxies (one per MCP server a client
starts) may share one log, so an append takes an exclusive ``flock``, reads the last link and
writes the new line with one ``write`` under ``O_APPEND``: the chain stays linear across
processes. Arguments are stored redacted (:func:`redact`) so the log can back-test a new
policy without holding secrets: the log is kept for good and served to the model as
``affidavit://audit``, so nothing secret may enter it.
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
from typing import Any, Literal, TypedDict, cast

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir
from affidavit.core.canonical import canonical_json, digest_json, sha256_hex
from affidavit.core.errors import IntegrityError
from affidavit.core.hashchain import GENESIS, ChainBreak, first_break, link_hash
from affidavit.core.paths import affidavit_home

AUDIT_RESOURCE_URI = "affidavit://audit"
REDACTED = "[redacted]"
_SECRET_KEY = re.compile(
    r"(pass(word|phrase)?|secret|token|api[-_]?key|auth|credential|cookie|private[-_]?key)", re.I
)
_SENSITIVE_WORD = (
    r"(?:passw(?:or)?d|passphrase|secret|token|api[-_]?key|access[-_]?key|auth[-_]?key"
    r"|credential|private[-_]?key)"
)
# a whole name (or ``--flag``) holding such a word; anchored at the name's start, so the engine
# tries each name once instead of every position inside it (linear, not quadratic)
_SENSITIVE_NAME = rf"(?<![\w.-])[\w.-]*?{_SENSITIVE_WORD}[\w.-]*"
_SENSITIVE_FLAG = rf"(?<![\w.-])--?[\w.-]*?{_SENSITIVE_WORD}[\w.-]*"
# (pattern, replacement) for secrets *inside* a string, applied in this order
_INLINE_SECRETS = tuple(
    (re.compile(pattern, flags), replacement)
    for pattern, flags, replacement in (
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
            re.S,
            REDACTED,
        ),
        (r"(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*://)[^\s/@]+@", re.I, rf"\1{REDACTED}@"),  # user@
        (r"\b((?:proxy-)?authorization\s*[:=]\s*)[^\r\n'\"]+", re.I, rf"\1{REDACTED}"),
        (r"\b(Bearer|Basic|Token)\s+[\w.~+/=-]{8,}", re.I, rf"\1 {REDACTED}"),
        (
            r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|sk-[\w-]{16,}|sk_(?:live|test)_\w{16,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[\w-]{35}|glpat-[\w-]{20,}"
            r"|npm_[A-Za-z0-9]{36}|eyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]{5,}",
            0,
            REDACTED,
        ),
        (rf"({_SENSITIVE_NAME}[\"']?\s*[=:]\s*[\"']?)[^\s\"',;&]+", re.I, rf"\1{REDACTED}"),
        (rf"({_SENSITIVE_FLAG}\s+)(?!-)[^\s\"',;&]+", re.I, rf"\1{REDACTED}"),
    )
)
# every pattern above needs one of these (lower-cased): most strings (paths, names) have none
# and skip the patterns altogether
_TRIGGERS = (
    *("pass", "secret", "token", "key", "credential", "auth", "bearer", "basic", "://"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "sk-", "sk_", "xox", "akia"),
    *("aiza", "glpat", "npm_", "eyj"),
)
CONTENT_KEYS = frozenset(
    {"content", "contents", "text", "body", "data", "blob", "file_text", "patch", "diff"}
    | {"oldText", "newText", "old_str", "new_str", "old_string", "new_string"}
)
"""Arguments that carry a file's or a message's body: stored as a digest, never as text."""
_MAX_STRING = 256


def default_log_path() -> Path:
    """Where the audit log lives when ``--audit-log`` is not given."""
    return affidavit_home() / "proxy" / "audit.jsonl"


def scrub(text: str) -> str:
    """``text`` with every secret-shaped part replaced: credentials in URLs, header values,
    known token formats, private keys, ``NAME=value`` and ``--name value`` for secret names."""
    lowered = text.lower()
    if not any(trigger in lowered for trigger in _TRIGGERS):
        return text
    for pattern, replacement in _INLINE_SECRETS:
        text = pattern.sub(replacement, text)
    return text


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
    if isinstance(value, Mapping):
        return {str(k): redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if key in CONTENT_KEYS or len(value) > _MAX_STRING:
            return content_digest(value)
        return scrub(value)
    return value


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """The digest recorded for a call's arguments: over the redacted form, never the secrets."""
    return digest_json(redact(arguments))


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
"""One entry of the audit log as the proxy writes it and ``proxy replay`` and the
``affidavit://audit`` resource read it: the body of one chain link. Which fields an entry has
depends on its ``kind``; every value is redacted before it is written (nothing secret)."""


@dataclass(frozen=True)
class LogReport:
    """The result of walking a log: ``ok`` when every link verified."""

    ok: bool
    entries: int
    first_break: ChainBreak | None = None
    head: str = GENESIS


def _links(path: Path) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
                yield str(record["prev"]), str(record["hash"]), dict(record["body"])
            except (ValueError, KeyError, TypeError):
                yield "", "", {}


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


def read_entries(path: Path) -> list[AuditEntry]:
    """Every entry body in order (for ``proxy replay``); a broken chain is refused."""
    report = verify_log(path)
    if not report.ok:
        assert report.first_break is not None
        raise IntegrityError(
            f"audit log {path} is broken at entry {report.first_break.index + 1}: "
            f"{report.first_break.reason}",
            "run `affidavit audit verify --log FILE` and use an intact log",
        )
    return [cast("AuditEntry", dict(body)) for _, _, body in _links(path)]


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
    _session_entries: list[AuditEntry] = field(default_factory=list, repr=False)

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
        with os.fdopen(fd, "r+b") as handle:
            _last_hash(handle)

    def session_entries(self) -> list[AuditEntry]:
        """This session's entries, oldest first (served as ``affidavit://audit``)."""
        return list(self._session_entries)

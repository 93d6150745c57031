"""Filesystem claims: ``write_file``, ``edit_file``, ``create_directory``, ``move_file``.

What it proves: after the reply, the file the call named (resolved inside a known root) holds
exactly the bytes the call asked for — for ``edit_file``, the pre-call content with the edits
applied by the official filesystem server's own rules (exact match first, then line-by-line
ignoring indentation); the directory exists; the moved file's bytes are at the destination
and gone from the source. For the dev server's ``write_file`` the receipt it returns
(``path``, ``bytes``, ``sha256``) must describe the file actually on disk.

What it cannot prove: that nothing else was written as well (it looks only where the call
pointed), or anything about a path outside every known root (``unchecked``). A claim about a
file that was already so before the call is verified — the state is true — and the evidence
says it was already so.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt
from affidavit.proxy.verifiers.locate import resolve_file
from affidavit.proxy.verifiers.overlap import WINDOWS
from affidavit.proxy.verifiers.replies import (
    Judge,
    ToolCallVerifier,
    backend_failed,
    is_error,
    judged_in_window,
    schema_problem,
    structured,
)

# Tool -> the arguments whose meaning this verifier knows; a call with others is not judged.
TOOLS: dict[str, frozenset[str]] = {
    "write_file": frozenset({"path", "content"}),
    "edit_file": frozenset({"path", "edits", "dryRun"}),
    "create_directory": frozenset({"path"}),
    "move_file": frozenset({"source", "destination"}),
}
MAX_EDIT_SNAPSHOT = 16 * 1024 * 1024
_DEV_WRITE_RECEIPT = {
    "type": "object",
    "required": ["path", "bytes", "sha256"],
    "properties": {
        "path": {"type": "string"},
        "bytes": {"type": "integer", "minimum": 0},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    },
}
_LEADING_WS = re.compile(r"^\s*")


class EditNoMatch(Exception):
    """An edit's ``oldText`` is not in the file: the server must have refused the call."""


def file_sha256(path: Path) -> str | None:
    """Hex SHA-256 of a regular file's bytes, or None when there is no such file."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return digest.hexdigest()


def _indent(line: str) -> str:
    match = _LEADING_WS.match(line)
    return match.group(0) if match else ""


def apply_edits(content: str, edits: Sequence[Mapping[str, str]]) -> str:
    """The text the official filesystem server's ``edit_file`` produces from ``content``.

    Same rules, same order: line endings normalised to LF; an exact match replaces its first
    occurrence; otherwise the first run of lines equal after trimming is replaced, keeping the
    matched block's indentation. Raises :class:`EditNoMatch` where the server raises.
    """
    modified = content.replace("\r\n", "\n")
    for edit in edits:
        old = edit["oldText"].replace("\r\n", "\n")
        new = edit["newText"].replace("\r\n", "\n")
        if old in modified:
            modified = modified.replace(old, new, 1)
            continue
        old_lines = old.split("\n")
        lines = modified.split("\n")
        for i in range(len(lines) - len(old_lines) + 1):
            window = lines[i : i + len(old_lines)]
            if all(o.strip() == c.strip() for o, c in zip(old_lines, window, strict=True)):
                base_indent = _indent(lines[i])
                new_lines = []
                for j, line in enumerate(new.split("\n")):
                    if j == 0:
                        new_lines.append(base_indent + line.lstrip())
                        continue
                    old_indent = _indent(old_lines[j]) if j < len(old_lines) else ""
                    new_indent = _indent(line)
                    if old_indent and new_indent:
                        extra = max(0, len(new_indent) - len(old_indent))
                        new_lines.append(base_indent + " " * extra + line.lstrip())
                    else:
                        new_lines.append(line)
                lines[i : i + len(old_lines)] = new_lines
                modified = "\n".join(lines)
                break
        else:
            raise EditNoMatch(edit["oldText"][:200])
    return modified


@dataclass(frozen=True)
class _Before:
    """Pre-call state of the paths a call names (None where a path could not be placed)."""

    path: Path | None
    sha256: str | None = None
    is_dir: bool = False
    content: bytes | None = None
    destination: Path | None = None
    window: int | None = None


def _valid_edits(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(e, Mapping)
        and isinstance(e.get("oldText"), str)
        and isinstance(e.get("newText"), str)
        for e in value
    )


class FilesystemVerifier(ToolCallVerifier):
    """Re-reads the files a filesystem tool claims to have written, edited or moved."""

    name = "filesystem"
    tools = TOOLS

    @staticmethod
    def well_formed(tool: str, args: Mapping[str, Any]) -> bool:
        if tool == "move_file":
            return isinstance(args.get("source"), str) and isinstance(args.get("destination"), str)
        if not isinstance(args.get("path"), str):
            return False
        if tool == "write_file":
            return isinstance(args.get("content"), str)
        if tool == "edit_file":
            return _valid_edits(args.get("edits"))
        return True

    def snapshot(self, ctx: CallContext) -> _Before:
        before = self._snapshot(ctx)
        paths = [str(p) for p in (before.path, before.destination) if p is not None]
        if not paths:
            return before
        return replace(before, window=WINDOWS.begin(paths))  # the files, not the root around

    def _snapshot(self, ctx: CallContext) -> _Before:
        if ctx.name == "move_file":
            source = resolve_file(ctx, ctx.arguments["source"])
            destination = resolve_file(ctx, ctx.arguments["destination"])
            if source is None or destination is None:
                return _Before(path=None)
            return _Before(
                path=source,
                sha256=file_sha256(source),
                is_dir=source.is_dir(),
                destination=destination,
            )
        path = resolve_file(ctx, ctx.arguments["path"])
        if path is None:
            return _Before(path=None)
        content = None
        if ctx.name == "edit_file":
            try:
                if path.stat().st_size <= MAX_EDIT_SNAPSHOT:
                    content = path.read_bytes()
            except OSError:
                content = None
        return _Before(path=path, sha256=file_sha256(path), is_dir=path.is_dir(), content=content)

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        window = before.window if isinstance(before, _Before) else None
        return judged_in_window(window, lambda: self._judge(ctx, before, result))

    def _judge(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        judge = Judge(self.name, self._claim(ctx))
        if is_error(result):
            return backend_failed(judge, ctx, result)
        if not isinstance(before, _Before) or before.path is None:
            return judge.unchecked(
                "the path is not inside any known root (pass --root or use a roots-capable "
                "host), so it was not looked at",
                "roots",
                roots=[str(r) for r in ctx.roots],
            )
        if ctx.name == "write_file":
            return self._verify_write(ctx, judge, before, result)
        if ctx.name == "edit_file":
            return self._verify_edit(ctx, judge, before)
        if ctx.name == "create_directory":
            return self._verify_mkdir(judge, before)
        return self._verify_move(judge, before)

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        vouched = receipt.vouched
        kind = vouched.get("kind")
        if kind == "file":
            return file_sha256(Path(vouched["path"])) == vouched["sha256"]
        if kind == "dir":
            return Path(vouched["path"]).is_dir()
        if kind == "moved":
            source = Path(vouched["source"])
            return not os.path.lexists(source) and (
                Path(vouched["destination"]).is_dir()
                if vouched["sha256"] is None
                else file_sha256(Path(vouched["destination"])) == vouched["sha256"]
            )
        return False

    # -- claims ----------------------------------------------------------------------------
    @staticmethod
    def _claim(ctx: CallContext) -> str:
        args = ctx.arguments
        if ctx.name == "write_file":
            return f"wrote {len(str(args.get('content', '')))} characters to {args.get('path')}"
        if ctx.name == "edit_file":
            return f"applied {len(args.get('edits') or [])} edit(s) to {args.get('path')}"
        if ctx.name == "create_directory":
            return f"directory {args.get('path')} exists"
        return f"moved {args.get('source')} to {args.get('destination')}"

    def _verify_write(
        self, ctx: CallContext, judge: Judge, before: _Before, result: Mapping[str, Any]
    ) -> Receipt:
        assert before.path is not None
        try:
            expected = hashlib.sha256(ctx.arguments["content"].encode("utf-8")).hexdigest()
        except UnicodeEncodeError:
            return judge.unchecked("the content is not encodable as UTF-8", str(before.path))
        actual = file_sha256(before.path)
        where = str(before.path)
        if actual is None:
            return judge.contradicted(Evidence("no file exists at the path written", where))
        size = before.path.stat().st_size
        if actual != expected:
            return judge.contradicted(
                Evidence(
                    "the file on disk does not hold the content that was sent",
                    where,
                    details={"expected_sha256": expected, "actual_sha256": actual, "bytes": size},
                )
            )
        receipt_problem = self._dev_receipt_problem(ctx, before.path, actual, size, result)
        if receipt_problem is not None:
            return judge.contradicted(Evidence(receipt_problem, where))
        return judge.verified(
            Evidence(
                "the file holds exactly the content sent",
                where,
                details={
                    "sha256": actual,
                    "bytes": size,
                    "already_so_before_call": before.sha256 == expected,
                },
            ),
            vouched={"kind": "file", "path": where, "sha256": actual},
            change=""
            if before.sha256 == expected
            else f"file {where} was written ({size} bytes, sha256 {actual[:12]})",
        )

    @staticmethod
    def _dev_receipt_problem(
        ctx: CallContext, path: Path, sha: str, size: int, result: Mapping[str, Any]
    ) -> str | None:
        """What is wrong with a dev-server style ``{path, bytes, sha256}`` receipt, if any."""
        receipt = structured(result)
        if receipt is None or not {"sha256", "bytes"} & set(receipt):
            return None
        problem = schema_problem(_DEV_WRITE_RECEIPT, dict(receipt))
        if problem is not None:
            return f"the reply's write receipt is malformed ({problem})"
        if receipt["sha256"] != sha or receipt["bytes"] != size:
            return (
                f"the reply reports sha256 {receipt['sha256'][:12]}… and {receipt['bytes']} "
                f"bytes, but the file has sha256 {sha[:12]}… and {size} bytes"
            )
        if resolve_file(ctx, receipt["path"]) != path:
            return f"the reply names {receipt['path']!r}, not the file the call wrote"
        return None

    def _verify_edit(self, ctx: CallContext, judge: Judge, before: _Before) -> Receipt:
        assert before.path is not None
        where = str(before.path)
        if before.content is None:
            return judge.unchecked("the file could not be read before the call", where)
        try:
            original = before.content.decode("utf-8")
        except UnicodeDecodeError:
            return judge.unchecked("the file was not UTF-8 text before the call", where)
        try:
            if ctx.arguments.get("dryRun") is True:
                apply_edits(original, ctx.arguments["edits"])
                expected = before.content
            else:
                expected = apply_edits(original, ctx.arguments["edits"]).encode("utf-8")
        except EditNoMatch as missing:
            return judge.contradicted(
                Evidence(
                    "an edit's oldText was not in the file before the call, so it cannot have "
                    "been applied",
                    where,
                    details={"old_text": str(missing)},
                )
            )
        expected_sha = hashlib.sha256(expected).hexdigest()
        actual = file_sha256(before.path)
        if actual != expected_sha:
            return judge.contradicted(
                Evidence(
                    "the file does not hold the pre-call content with the edits applied",
                    where,
                    details={
                        "expected_sha256": expected_sha,
                        "actual_sha256": actual,
                        "dry_run": ctx.arguments.get("dryRun") is True,
                    },
                )
            )
        return judge.verified(
            Evidence(
                "the file holds the pre-call content with the edits applied",
                where,
                details={"sha256": actual, "dry_run": ctx.arguments.get("dryRun") is True},
            ),
            vouched={"kind": "file", "path": where, "sha256": actual},
            change=""
            if ctx.arguments.get("dryRun") is True
            else f"file {where} was edited (now sha256 {actual[:12]})",
        )

    @staticmethod
    def _verify_mkdir(judge: Judge, before: _Before) -> Receipt:
        assert before.path is not None
        where = str(before.path)
        if not before.path.is_dir():
            return judge.contradicted(Evidence("no directory exists at the path", where))
        return judge.verified(
            Evidence(
                "the directory exists",
                where,
                details={"already_so_before_call": before.is_dir},
            ),
            vouched={"kind": "dir", "path": where},
            change="" if before.is_dir else f"directory {where} was created",
        )

    @staticmethod
    def _verify_move(judge: Judge, before: _Before) -> Receipt:
        assert before.path is not None and before.destination is not None
        source, destination = before.path, before.destination
        where = f"{source} -> {destination}"
        if before.sha256 is None and not before.is_dir:
            return judge.contradicted(
                Evidence("the source did not exist before the call", str(source))
            )
        if os.path.lexists(source):
            return judge.contradicted(Evidence("the source still exists", str(source)))
        moved = destination.is_dir() if before.is_dir else file_sha256(destination) == before.sha256
        if not moved:
            return judge.contradicted(
                Evidence(
                    "the destination does not hold what the source held before the call",
                    str(destination),
                    details={"source_sha256": before.sha256},
                )
            )
        return judge.verified(
            Evidence(
                "the source is gone and the destination holds its former content",
                where,
                details={"sha256": before.sha256},
            ),
            vouched={
                "kind": "moved",
                "source": str(source),
                "destination": str(destination),
                "sha256": before.sha256,
            },
            change=f"{source} was moved to {destination}",
        )

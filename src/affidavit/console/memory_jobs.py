"""Long memory jobs run from the page: an import of an export file, with its progress.

The job does what ``affidavit import FILE`` does, through the same calls: the file is parsed
by :func:`affidavit.vault.parse_export` (every line checked first), rows without a vector are
embedded by :func:`affidavit.recall.embed_missing`, and the batch is sealed in one
transaction by ``Vault.import_items`` (all or nothing, idempotent by id). It runs in a thread;
the page asks for its state (:meth:`ImportJob.state`) and draws a progress bar.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import AffidavitError, InputError

if TYPE_CHECKING:
    from affidavit.recall import Memory

KEPT = 20
"""Finished jobs remembered (for their pages), oldest dropped first."""


@dataclass(frozen=True)
class JobState:
    """What the page shows of a job: its phase, how far it is, and how it ended."""

    id: str
    source: str
    phase: str
    done: int
    total: int
    finished: bool
    result: str | None = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The state as the page's script reads it."""
        return {
            "id": self.id,
            "source": self.source,
            "phase": self.phase,
            "done": self.done,
            "total": self.total,
            "finished": self.finished,
            "result": self.result,
            "error": self.error,
        }


class ImportJob:
    """One import running in a thread; its state is read while it runs."""

    def __init__(self, memory: Memory, path: Path) -> None:
        self.id = secrets.token_hex(8)
        self.memory = memory
        self.path = path
        self._lock = threading.Lock()
        self._state = JobState(self.id, str(path), "reading", 0, 0, False)
        self.thread = threading.Thread(target=self._run, name=f"import-{self.id}", daemon=True)

    def state(self) -> JobState:
        """The job's state right now."""
        with self._lock:
            return self._state

    def _set(self, **changes: Any) -> None:
        with self._lock:
            self._state = JobState(**{**self._state.__dict__, **changes})

    def _progress(self, phase: str) -> Any:
        return lambda done, total: self._set(phase=phase, done=done, total=total)

    def _run(self) -> None:
        from affidavit.core.regular_file import read_named
        from affidavit.recall import embed_missing
        from affidavit.vault import parse_export

        try:
            raw = read_named(self.path, what="an export file (JSONL)")  # no FIFO, no device
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"cannot read {self.path} ({exc})") from None
            items = parse_export(text, str(self.path))
            self._set(phase="embedding", total=len(items))
            vault = self.memory.vault
            items = embed_missing(vault, items, self._progress("embedding"))
            self._set(phase="sealing", done=0, total=len(items))
            try:
                counts = vault.import_items(items, progress=self._progress("sealing"))
            except InputError as exc:
                raise InputError(f"{self.path}: {exc.message}", "nothing was imported") from None
        except AffidavitError as exc:
            self._set(phase="failed", finished=True, error=str(exc))
            return
        except Exception as exc:  # a bug: one line for the page, never a traceback
            self._set(phase="failed", finished=True, error=f"internal error ({exc})")
            return
        result = (
            f"imported {counts['imported']} records ({counts['already_present']} already "
            f"present, {counts['kept_forgotten']} forgotten here and left out)"
        )
        self._set(phase="done", done=len(items), total=len(items), finished=True, result=result)


class Jobs:
    """The console's import jobs by id (the last :data:`KEPT`)."""

    def __init__(self) -> None:
        self._jobs: dict[str, ImportJob] = {}
        self._lock = threading.Lock()

    def start(self, memory: Memory, path: Path) -> ImportJob:
        """Start importing ``path`` into ``memory``'s vault."""
        job = ImportJob(memory, path)
        with self._lock:
            self._jobs[job.id] = job
            while len(self._jobs) > KEPT:
                self._jobs.pop(next(iter(self._jobs)))
        job.thread.start()
        return job

    def get(self, job_id: str) -> ImportJob | None:
        """A job by id, or None."""
        with self._lock:
            return self._jobs.get(job_id)

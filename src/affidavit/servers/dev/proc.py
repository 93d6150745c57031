"""Run one program with a deadline and bounded memory, never through a shell.

Git, CI steps and the Docker CLI all go through :func:`run`. Output is drained continuously
(so a chatty program never blocks on a full pipe) but only the first and last ``limit`` bytes
are kept; a program past its deadline, or whose caller sets its ``stop`` flag (the client
cancelled the call or went away), is killed with its whole process group, so a CI step's
children cannot outlive it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

DEFAULT_LIMIT = 1024 * 1024
STOP_POLL_S = 0.25
"""How often a program with a ``stop`` flag looks at it while it waits."""


@dataclass(frozen=True)
class Finished:
    """What a finished (or killed) program left behind."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    stdout_total: int
    timed_out: bool
    duration_ms: int
    stopped: bool = False  # killed because the caller set its stop flag


class _Capture:
    """Drain a pipe in a thread, keeping its head and tail up to ``limit`` bytes each."""

    def __init__(self, pipe: IO[bytes], limit: int, keep: str) -> None:
        self._pipe = pipe
        self._limit = limit
        self._keep = keep
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.total = 0
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := self._pipe.read1(65536):  # type: ignore[attr-defined]
                self.total += len(chunk)
                if self._keep == "head":
                    room = self._limit - len(self._head)
                    if room > 0:
                        self._head += chunk[:room]
                else:
                    self._tail.append(chunk)
                    self._tail_len += len(chunk)
                    while self._tail_len - len(self._tail[0]) >= self._limit:
                        self._tail_len -= len(self._tail.popleft())

    def result(self) -> bytes:
        self._thread.join()
        if self._keep == "head":
            return bytes(self._head)
        return b"".join(self._tail)[-self._limit :]


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    limit: int = DEFAULT_LIMIT,
    keep: str = "head",
    merge_stderr: bool = False,
    stop: threading.Event | None = None,
) -> Finished:
    """Run ``argv`` in ``cwd``; ``keep`` is ``"head"`` (git answers) or ``"tail"`` (CI logs).

    With ``merge_stderr`` both streams interleave into ``stdout``, as a CI log reads.

    Raises ``FileNotFoundError``/``PermissionError`` when the program cannot be started;
    a timeout is reported in the result (``timed_out``, exit code 124), not raised, and so is
    a stop (``stopped``, exit code 130).
    """
    started = time.monotonic()
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    out = _Capture(process.stdout, limit, keep)
    err = _Capture(process.stderr, limit, keep) if process.stderr is not None else None
    if stdin is not None and process.stdin is not None:
        # A program that exits before reading all of stdin (git refusing to commit) closes the
        # pipe; the buffered bytes then fail on write or on the flush inside close().
        with contextlib.suppress(BrokenPipeError):
            process.stdin.write(stdin)
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
    timed_out = stopped = False
    deadline = started + timeout
    while process.poll() is None:
        remaining = deadline - time.monotonic()
        timed_out = remaining <= 0
        stopped = stop is not None and stop.is_set()
        if timed_out or stopped:
            break
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=min(remaining, STOP_POLL_S) if stop is not None else remaining)
    # Kill the whole group either way: leftover children would hold the pipes open forever.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return Finished(
        exit_code=124 if timed_out else 130 if stopped else process.returncode,
        stdout=out.result(),
        stderr=err.result() if err is not None else b"",
        stdout_total=out.total,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        stopped=stopped,
    )

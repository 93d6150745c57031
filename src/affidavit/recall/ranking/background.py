"""A background job that the process stops and joins before it exits (the HNSW build).

Why a module of its own: a daemon thread still running native code when the interpreter
shuts down takes the process down with it. usearch's ``Index.add`` in a daemon thread at
exit aborted the process ("terminate called without an active exception", exit 134) at the
end of every short command over a vault above the HNSW threshold. Here every job is told to
stop by one ``atexit`` hook and joined there, while the interpreter is still whole, so the
job's native calls have returned before anything is torn down.

A job runs in steps and asks :meth:`Job.stopping` between them; a step is short (the HNSW
build's is 64 inserts, ~35 ms), so exit waits for at most one. It begins only after a grace
period (``delay``) unless someone asks for its result (:meth:`Job.hurry`): a command that
opens a large vault, answers once and exits never starts work it would not use.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable

_running: set[Job] = set()
_guard = threading.Lock()


class Job:
    """One background job: ``work(job)`` runs on a daemon thread after ``delay`` seconds."""

    def __init__(self, name: str, work: Callable[[Job], None], delay: float) -> None:
        self._work = work
        self._delay = delay
        self._stop = threading.Event()
        self._go = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Begin the grace period; the work follows unless the process exits first."""
        with _guard:
            _running.add(self)
        self._thread.start()

    def hurry(self) -> None:
        """End the grace period now: the caller is about to wait for the result."""
        self._go.set()

    def stopping(self) -> bool:
        """Whether the work should return now (the process is exiting)."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Ask the work to return at its next step, and wait for it."""
        self._stop.set()
        self._go.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the work to finish (``timeout`` seconds at most)."""
        self.hurry()
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            self._go.wait(self._delay)
            if not self._stop.is_set():
                self._work(self)
        finally:
            with _guard:
                _running.discard(self)


def _stop_all() -> None:
    """Stop every job still running and wait for each (the interpreter is about to go)."""
    with _guard:
        jobs = list(_running)
    for job in jobs:
        job.stop()


atexit.register(_stop_all)

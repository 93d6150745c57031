"""A memory server loads numpy with one OpenBLAS thread (issue 27): OpenBLAS's spinning
threads were a third of numpy's import on the way to the first search, and ranking never
calls BLAS. A user's own setting is kept."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from affidavit.servers.memory.server import BLAS_THREADS_ENV, one_blas_thread


def test_one_blas_thread_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BLAS_THREADS_ENV, raising=False)
    one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "1"
    monkeypatch.setenv(BLAS_THREADS_ENV, "4")
    one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "4"


def test_the_server_sets_it_before_numpy_loads() -> None:
    """Set after numpy loaded, the variable would do nothing: the server's module must not
    import numpy (the warm-up does, after ``serve`` set it)."""
    code = (
        "import sys; import affidavit.servers.memory.server; "
        "import affidavit.servers.memory.http; print('numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

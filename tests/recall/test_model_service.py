"""The per-user model service: real processes, a real Unix socket, the real model."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from affidavit.recall import embedder as emb
from affidavit.recall import model_service as svc
from affidavit.vault.session_dir import RUNTIME_ENV
from tests.support import PYTHON, model_service_pid, process_alive

GUARD_S = 120.0
"""How long to wait for a process to appear or go away (a guard, not a measurement)."""


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private runtime directory with a path short enough for a socket."""
    place = Path(tempfile.mkdtemp(prefix="afsvc", dir="/tmp"))
    place.chmod(0o700)
    monkeypatch.setenv(RUNTIME_ENV, str(place))
    monkeypatch.setenv("AFFIDAVIT_PASSPHRASE", "must not reach the service")
    yield place
    _stop_service(place)
    shutil.rmtree(place, ignore_errors=True)


def _stop_service(place: Path) -> None:
    pid = model_service_pid(place)
    if pid is not None and process_alive(pid):
        os.kill(pid, 15)


@pytest.fixture(scope="module")
def local() -> emb.Embedder:
    loaded = emb.shared_embedder()
    assert loaded is not None, emb.unavailable_reason()
    return loaded


def test_the_service_gives_the_local_models_vectors(runtime: Path, local: emb.Embedder) -> None:
    remote = svc.connect()
    assert remote is not None
    windows = [local.windows("The deploy key rotates every 90 days.")[0], local.windows("cat")[0]]
    assert np.array_equal(remote(windows), local._run(windows))
    remote.close()


def test_the_socket_is_private_and_the_service_keeps_no_secret(runtime: Path) -> None:
    remote = svc.connect()
    assert remote is not None
    directory = runtime / f"affidavit-{os.getuid()}"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    sock = directory / svc.SOCKET_NAME
    assert stat.S_ISSOCK(sock.lstat().st_mode)
    assert stat.S_IMODE(sock.lstat().st_mode) == 0o600
    pid = model_service_pid(runtime)
    assert pid is not None
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert not any(b"PASSPHRASE" in entry for entry in environ)
    remote.close()


def test_several_clients_share_one_service(runtime: Path) -> None:
    first, second = svc.connect(), svc.connect()
    assert first is not None and second is not None
    pid = model_service_pid(runtime)
    assert pid is not None
    assert first([[101, 2000, 102]]).shape == (1, emb.DIM)
    assert second([[101, 2001, 102]]).shape == (1, emb.DIM)
    assert model_service_pid(runtime) == pid
    first.close()
    second.close()


def test_a_bad_request_is_refused_and_the_service_serves_on(runtime: Path) -> None:
    remote = svc.connect()
    assert remote is not None
    path = svc.socket_path(create=False)
    assert path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.settimeout(GUARD_S)
        raw.connect(str(path))
        svc._read_frame(raw)  # the hello
        svc._write_frame(raw, b'[["not a token"]]')
        rows, size = struct.unpack("!iI", svc._read_exactly(raw, 8))
        assert rows == -1
        assert b"token id" in svc._read_exactly(raw, size)
    assert remote([[101, 102]]).shape == (1, emb.DIM)
    remote.close()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_another_user_is_refused(runtime: Path) -> None:
    remote = svc.connect()
    assert remote is not None
    path = svc.socket_path(create=False)
    assert path is not None
    runtime.chmod(0o755)  # let the other user reach the socket file (it is 0600 anyway)
    (runtime / f"affidavit-{os.getuid()}").chmod(0o711)
    probe = (
        "import os, socket, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "try:\n"
        "    s.connect(sys.argv[1])\n"
        "except PermissionError:\n"
        "    print('denied by the file mode'); sys.exit(0)\n"
        "s.settimeout(60)\n"
        "print('hello' if s.recv(4) else 'closed')\n"
    )
    try:
        seen = subprocess.run(
            [PYTHON, "-c", probe, str(path)], capture_output=True, text=True, timeout=GUARD_S
        ).stdout.strip()
        # Mode 0600 stops it at connect; were the mode wider, SO_PEERCRED would close it.
        assert seen in ("denied by the file mode", "closed")
        os.chmod(path, 0o666)  # noqa: S103 - the test widens it to reach the peer check
        seen = subprocess.run(
            [PYTHON, "-c", probe, str(path)], capture_output=True, text=True, timeout=GUARD_S
        ).stdout.strip()
        assert seen == "closed"
    finally:
        (runtime / f"affidavit-{os.getuid()}").chmod(0o700)
    remote.close()


def test_a_killed_service_is_restarted_for_the_next_request(runtime: Path) -> None:
    remote = svc.connect()
    assert remote is not None
    pid = model_service_pid(runtime)
    assert pid is not None
    os.kill(pid, 9)
    deadline = time.monotonic() + GUARD_S
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert remote([[101, 2000, 102]]).shape == (1, emb.DIM)
    assert model_service_pid(runtime) not in (None, pid)
    remote.close()


def test_a_request_sent_early_gets_its_own_vectors(runtime: Path, local: emb.Embedder) -> None:
    """A search sends its question before reading its keyword channel (``start``); a
    request made meanwhile, from another thread, must not take that reply as its own."""
    remote = svc.connect()
    assert remote is not None
    question = local.windows("where does the deploy key live?")[:1]
    other = local.windows("The backups run at night.")[:1]
    read_question = remote.start(question)
    assert np.array_equal(remote(other), local._run(other))  # reads the question's reply first
    assert np.array_equal(read_question(), local._run(question))
    read_again = remote.start(question)
    assert np.array_equal(read_again(), local._run(question))
    remote.close()


def test_a_request_sent_before_the_service_died_is_asked_again(
    runtime: Path, local: emb.Embedder
) -> None:
    remote = svc.connect()
    assert remote is not None
    remote([[101, 2000, 102]])
    pid = model_service_pid(runtime)
    assert pid is not None
    os.kill(pid, 19)  # stopped: the request is sent, its reply never comes
    question = local.windows("who rotated the deploy key?")[:1]
    read_question = remote.start(question)
    os.kill(pid, 9)
    os.kill(pid, 18)
    deadline = time.monotonic() + GUARD_S
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert np.array_equal(read_question(), local._run(question))  # redialled, asked again
    remote.close()


def test_a_shared_model_question_matches_the_local_one(runtime: Path, local: emb.Embedder) -> None:
    remote = svc.connect()
    assert remote is not None
    shared = emb.Embedder(emb.locate(emb.TOKENIZER_FILE), remote)
    text = "which port does the staging database listen on?"
    soon = shared.embed_query_soon(text)
    assert np.array_equal(soon(), local.embed_query(text))
    assert np.array_equal(shared.embed_query_soon(text)(), soon())  # from the cache
    remote.close()


def test_the_service_exits_once_idle(runtime: Path) -> None:
    remote = svc.connect()
    assert remote is not None
    pid = model_service_pid(runtime)
    assert pid is not None
    remote.close()
    deadline = time.monotonic() + svc.IDLE_S + GUARD_S
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not process_alive(pid)
    assert not (runtime / f"affidavit-{os.getuid()}" / svc.SOCKET_NAME).exists()


def test_a_socket_path_too_long_falls_back_to_none(monkeypatch: pytest.MonkeyPatch) -> None:
    deep = Path(tempfile.mkdtemp(prefix="afsvc", dir="/tmp")) / ("d" * 90)
    deep.mkdir(mode=0o700)
    monkeypatch.setenv(RUNTIME_ENV, str(deep))
    try:
        assert svc.connect() is None
    finally:
        shutil.rmtree(deep.parent)


def test_the_mode_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(emb.MODE_ENV, "off")
    assert emb.mode() == "off"
    monkeypatch.setenv(emb.MODE_ENV, "LOCAL")
    assert emb.mode() == "local"
    monkeypatch.setenv(emb.MODE_ENV, "nonsense")
    assert emb.mode() in emb.MODES


_HEAP_PROBE = """
import sys
from affidavit.recall import onnx_model
if sys.argv[1] == "fixed":
    onnx_model.map_large_buffers()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
big = bytearray(8 << 20)  # freed: glibc's own threshold would rise to 8 MiB
del big
before = rss()
held = bytearray(4 << 20)  # below that threshold: from the heap, unless mapped on its own
del held
print(rss() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_the_service_returns_a_long_windows_buffers_when_freed() -> None:
    """What the service does at start (``map_large_buffers``): a freed multi-MB buffer
    (a long window's activations) leaves the process instead of staying resident."""

    def kept(mode: str) -> int:
        done = subprocess.run(
            [PYTHON, "-c", _HEAP_PROBE, mode], capture_output=True, text=True, timeout=GUARD_S
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout)

    assert kept("glibc") >= 3 << 20  # glibc alone keeps it
    assert kept("fixed") < 1 << 20

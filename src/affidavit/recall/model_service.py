"""One embedding model per user: a small service the user's affidavit processes share.

Why: every ``affidavit serve`` an MCP client starts would otherwise load its own copy of the
model (~60-90 MB resident, ~0.3-0.5 s of CPU); three agents meant three copies. In ``shared``
mode (:data:`~affidavit.recall.embedder.MODE_ENV`, the default of ``affidavit serve``) a
process sends token windows to this service and gets the unit vectors back; tokenizing stays
in the process. The service is started on demand by the first process that needs it and
exits :data:`IDLE_S` seconds after its last client disconnected. It listens before its model
has loaded (:class:`LoadingModel`): a server's warm-up connects at once and builds its index
while the model loads; only the first request waits for it.

Security (ADR 0112, docs/SECURITY.md): the socket ``embed.sock`` lives in the user's private
runtime directory (the unlock session's, :func:`affidavit.vault.session_dir.private_dir`:
mode 0700, owner checked, no symlinks), is created under umask 0177 (mode 0600), and each
side checks the other's uid with ``SO_PEERCRED``: the service serves only its own user, a
client talks only to a service of its own user. The client also requires the service to
serve the pinned model (its sha256) at the same dimension. The service is started with a
minimal environment (no passphrase, no keyfile path), reads no vault and holds no key: what
crosses the socket is token ids of search questions and memories being stored, and vectors.

Any failure (no ``SO_PEERCRED`` on this platform, a path too long for a socket, the service
not starting within :data:`START_WAIT_S`, a dropped connection that does not come back)
falls back to the model in the process, logged, never an error to the user.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import IntegrityError, UnsupportedError
from affidavit.recall.onnx_model import DIM, MODEL_FILE, local_model, map_large_buffers
from affidavit.vault import session_dir

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from affidavit.recall.onnx_model import Model

logger = logging.getLogger(__name__)
SOCKET_NAME = "embed.sock"
LOCK_NAME = "embed.lock"
#: The service exits this long after its last client went away.
IDLE_S = 10.0
#: How long a process waits for a service it started to listen (Python's start and imports;
#: the model then loads while clients connect, ~0.3 s of CPU) before loading it itself.
START_WAIT_S = 20.0
#: How long a client waits for one answer before it gives up on the service.
ANSWER_WAIT_S = 120.0
#: A socket path longer than this does not fit ``sun_path`` everywhere: use the local model.
MAX_SOCKET_PATH = 100
#: Bounds on one request: windows per call and bytes of JSON (a 32-text import batch of
#: 64-window texts is ~2,000 windows of <= 256 ids).
MAX_WINDOWS = 4096
MAX_REQUEST = 32 << 20
#: Exit status of a service that found another one holding the lock (starting or running).
ALREADY_RUNNING = 3
#: The environment a started service keeps: nothing secret, enough to find the same place.
KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV",
            session_dir.RUNTIME_ENV, "AFFIDAVIT_DEBUG")  # fmt: skip
_HEADER = struct.Struct("!I")
_REPLY = struct.Struct("!iI")


class ServiceError(Exception):
    """The service could not be reached or did not answer as it must (falls back to local)."""


# -- where ----------------------------------------------------------------------------------


def socket_path(*, create: bool) -> Path | None:
    """``<private dir>/embed.sock``; None when the private directory is absent (not
    ``create``) or the path is too long for a Unix socket."""
    directory = session_dir.private_dir(create=create)
    if directory is None:
        return None
    path = directory / SOCKET_NAME
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


# -- the client side -----------------------------------------------------------------------


class RemoteModel:
    """Token windows to vectors through the service; the local model once it is gone.

    One connection, one request on the wire at a time (a lock): a server embeds one
    question or one batch at a time anyway. A broken connection is redialled once
    (restarting the service); if that fails too, the model is loaded here and used for the
    rest of the process.

    :meth:`start` sends a request from the calling thread and returns at once: a search
    sends its question first and reads its keyword channel while the service runs the
    model. (Handing the request to another thread instead delayed it by 0.1-1 ms with the
    load: that thread waited for the interpreter lock while the keyword channel ran, so
    the two did not overlap; issue 27, ADR 0231, docs/performance.md.)
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock: socket.socket | None = sock
        self._lock = threading.Lock()
        self._local: Model | None = None
        self._unread: Pending | None = None  # sent, its reply not read yet

    def __call__(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._local is None:
                for attempt in range(2):
                    try:
                        self._read_unread()
                        if self._sock is None:
                            self._sock = _dial_or_start()
                        return _ask(self._sock, batch)
                    except (OSError, ServiceError, IntegrityError, UnsupportedError) as exc:
                        logger.info("model service: %s (attempt %d)", exc, attempt + 1)
                        self.close()
                logger.warning("model service unavailable: loading the model in this process")
                self._local = local_model()
            return self._local(batch)

    def start(self, batch: list[list[int]]) -> Callable[[], npt.NDArray[np.float32]]:
        """Send ``batch`` now; the returned function reads its vectors (any failure: the
        batch is embedded again by :meth:`__call__`, with its redial and fallback)."""
        with self._lock:
            try:
                if self._local is None and self._sock is not None:
                    self._read_unread()
                    _send(self._sock, batch)
                    pending = self._unread = Pending(self, batch)
                    return pending.result
            except (OSError, ServiceError):
                self.close()
        return lambda: self(batch)

    def _read_unread(self) -> None:
        """Read the reply of a request whose caller has not (its result is kept for it)."""
        if self._unread is not None and self._sock is not None:
            pending, self._unread = self._unread, None
            pending.vectors = _reply(self._sock, len(pending.batch))

    def _collect(self, pending: Pending) -> npt.NDArray[np.float32]:
        """``pending``'s vectors: read now if nobody has, asked again if its connection
        broke before its reply came."""
        with self._lock:
            if self._unread is pending:
                try:
                    self._read_unread()
                except (OSError, ServiceError) as exc:
                    logger.info("model service: %s (asking again)", exc)
                    self.close()
        if pending.vectors is not None:
            return pending.vectors
        return self(pending.batch)

    def close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
        self._unread = None  # its caller asks again (see _collect)


class Pending:
    """A request on the wire; its reply is read by whoever needs the connection first."""

    def __init__(self, model: RemoteModel, batch: list[list[int]]) -> None:
        self.model = model
        self.batch = batch
        self.vectors: npt.NDArray[np.float32] | None = None

    def result(self) -> npt.NDArray[np.float32]:
        return self.model._collect(self)


def connect() -> RemoteModel | None:
    """A :class:`RemoteModel` on the user's service (started if none runs), or None."""
    try:
        return RemoteModel(_dial_or_start())
    except (OSError, ServiceError, IntegrityError, UnsupportedError) as exc:
        logger.info("model service not used: %s", exc)
        return None


def _dial_or_start() -> socket.socket:
    if not hasattr(socket, "SO_PEERCRED"):
        raise ServiceError("this platform cannot check a socket's peer (no SO_PEERCRED)")
    path = socket_path(create=True)
    if path is None:
        raise ServiceError("the private runtime directory's path is too long for a socket")
    with contextlib.suppress(OSError):
        return _dial(path)
    started = _start()
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            return _dial(path)
        status = started.poll()
        if status not in (None, 0, ALREADY_RUNNING):
            raise ServiceError(f"the model service exited with status {status}")
        time.sleep(0.02)
    raise ServiceError(f"the model service did not answer within {START_WAIT_S:g} s")


def _dial(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(ANSWER_WAIT_S)
    try:
        sock.connect(str(path))
        if peer_uid(sock) != os.getuid():
            raise ServiceError(f"{path} is served by another user's process")
        hello = json.loads(_read_frame(sock))
        if hello.get("model_sha256") != MODEL_FILE.sha256 or hello.get("dim") != DIM:
            raise ServiceError("the model service serves another model")
    except BaseException:
        sock.close()
        raise
    return sock


def _start() -> subprocess.Popen[bytes]:
    """Start the service in its own session, detached from this process's streams."""
    env = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
    process = subprocess.Popen(
        [sys.executable, "-m", "affidavit.recall.model_service"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
        close_fds=True,
    )
    threading.Thread(target=process.wait, name="affidavit-reap", daemon=True).start()
    return process


def _ask(sock: socket.socket, batch: list[list[int]]) -> npt.NDArray[np.float32]:
    _send(sock, batch)
    return _reply(sock, len(batch))


def _send(sock: socket.socket, batch: list[list[int]]) -> None:
    _write_frame(sock, json.dumps(batch, separators=(",", ":")).encode())


def _reply(sock: socket.socket, windows: int) -> npt.NDArray[np.float32]:
    import numpy as np

    rows, size = _REPLY.unpack(_read_exactly(sock, _REPLY.size))
    body = _read_exactly(sock, size)
    if rows < 0:
        raise ServiceError(f"the model service refused the request: {body.decode()[:200]}")
    if rows != windows or size != rows * DIM * 4:
        raise ServiceError("the model service answered with the wrong shape")
    return np.frombuffer(body, dtype="<f4").reshape(rows, DIM)


# -- framing ---------------------------------------------------------------------------------


def _write_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_HEADER.pack(len(data)) + data)


def _read_frame(sock: socket.socket) -> bytes:
    (size,) = _HEADER.unpack(_read_exactly(sock, _HEADER.size))
    if size > MAX_REQUEST:
        raise ServiceError(f"a message of {size} bytes is over the {MAX_REQUEST} limit")
    return _read_exactly(sock, size)


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise ServiceError("the connection closed mid-message")
        chunks += chunk
    return bytes(chunks)


# -- the service side ------------------------------------------------------------------------


class LoadingModel:
    """The model, loaded on its own thread: clients connect at once (a server builds its
    index meanwhile) and their first request waits for the load instead of their connect."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._model: Model | None = None
        self.failed = False
        threading.Thread(target=self._load, name="affidavit-load-model", daemon=True).start()

    def _load(self) -> None:
        try:
            self._model = local_model()
        except Exception:  # the service exits; its clients load the model (and say why)
            logger.exception("model service: the model could not be loaded")
            self.failed = True
        finally:
            self._ready.set()

    def __call__(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        self._ready.wait()
        if self._model is None:
            raise ServiceError("the model could not be loaded")
        return self._model(batch)


class Service:
    """The listening socket, the model, and the count of connected clients."""

    def __init__(self, listener: socket.socket, model: LoadingModel) -> None:
        self.listener = listener
        self.model = model
        self.clients = 0
        self.last_left = time.monotonic()
        self._count = threading.Lock()

    def serve(self) -> None:
        """Accept clients until none has been connected for :data:`IDLE_S`."""
        self.listener.settimeout(0.5)
        while True:
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                if self.model.failed:
                    return
                with self._count:
                    if self.clients == 0 and time.monotonic() - self.last_left > IDLE_S:
                        return
                continue
            with self._count:
                self.clients += 1
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        try:
            with conn:
                if peer_uid(conn) != os.getuid():
                    return  # another user: closed without a word
                hello = {"model_sha256": MODEL_FILE.sha256, "dim": DIM, "pid": os.getpid()}
                _write_frame(conn, json.dumps(hello).encode())
                while True:
                    _answer(conn, self.model, _read_frame(conn))
        except (OSError, ServiceError):
            pass  # the client left (or sent something unreadable): its connection ends
        finally:
            with self._count:
                self.clients -= 1
                self.last_left = time.monotonic()


def _answer(conn: socket.socket, model: Model, request: bytes) -> None:
    try:
        batch = _checked(json.loads(request))
        vectors = model(batch)
    except (ValueError, TypeError) as exc:
        message = str(exc).encode()
        conn.sendall(_REPLY.pack(-1, len(message)) + message)
        return
    body = vectors.astype("<f4", copy=False).tobytes()
    conn.sendall(_REPLY.pack(len(batch), len(body)) + body)


def _checked(batch: Any) -> list[list[int]]:
    """A request is a non-empty list of windows, each a non-empty list of token ids."""
    if not isinstance(batch, list) or not 0 < len(batch) <= MAX_WINDOWS:
        raise ValueError(f"a request is a list of 1 to {MAX_WINDOWS} windows")
    for window in batch:
        if not isinstance(window, list) or not 0 < len(window) <= 512:
            raise ValueError("a window is a list of 1 to 512 token ids")
        if not all(type(token) is int and 0 <= token < 1 << 20 for token in window):
            raise ValueError("a token id is a small non-negative integer")
    return batch


def main() -> int:
    """Run the service for this user; :data:`ALREADY_RUNNING` if another one has the lock."""
    directory = session_dir.private_dir(create=True)
    assert directory is not None  # create=True makes it or raises
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    lock = os.open(directory / LOCK_NAME, flags, session_dir.FILE_MODE)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return ALREADY_RUNNING
    path = directory / SOCKET_NAME
    map_large_buffers()  # a long window's buffers must not stay resident for the service's life
    try:
        model = LoadingModel()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # ours to replace: whoever made it held this lock and is gone
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            listener.bind(str(path))
        finally:
            os.umask(old_umask)
        listener.listen(16)
        os.ftruncate(lock, 0)
        os.write(lock, str(os.getpid()).encode())
        with listener:
            Service(listener, model).serve()
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        os.close(lock)
    return 1 if model.failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Where unlock sessions keep their per-user files: found from the uid, never from the environment.

Every process of one user must find the same place, whatever environment started it: a
desktop terminal has ``XDG_RUNTIME_DIR``, but MCP clients start servers with only HOME,
LOGNAME, PATH, SHELL, TERM and USER. So the place is derived from the platform and the uid:

- Linux and other systems: ``/run/user/<uid>`` (systemd's per-user tmpfs) when it is a real
  directory owned by this uid with mode 0700, else ``/dev/shm`` (RAM-backed, shared by every
  user). Both are emptied at boot.
- macOS: the per-user temporary folder the system reports (``confstr`` of
  ``_CS_DARWIN_USER_TEMP_DIR``, ``/var/folders/../T``, independent of ``$TMPDIR``), which macOS
  empties at boot. It is on disk, not in RAM: ``unlock --store keyring`` keeps the secret
  itself in the Keychain instead (see ``docs/vault.md``).

``AFFIDAVIT_RUNTIME_DIR`` replaces the place (tests, unusual machines); every process that
shares a session, MCP servers included, must then have it set.

Inside the place affidavit uses its own directory, ``affidavit-<uid>``. In ``/dev/shm`` another
local user could pre-create that name or plant a symlink there and catch the secret, so the
directory is made with mode 0700 and then checked on an ``O_NOFOLLOW`` descriptor. When the name
is taken (a symlink, another owner, another mode), nothing is written there and nothing there
is touched: the session falls back to a fresh directory of the user's own, made by ``mkdtemp``
(0700, an unguessable name beside the squatted one), and its path is recorded in the user's
private affidavit home (``~/.affidavit/session-dir``, 0600) where every process of the user
looks next (ADR 0177). A recorded directory is used only while it still passes the same checks;
after a reboot it is gone and the next ``unlock`` makes another. Files inside are created
``O_CREAT|O_EXCL|O_NOFOLLOW`` with mode 0600 and renamed into place, read without following
symlinks, and wiped without following them either.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir, write_atomic
from affidavit.core.errors import IntegrityError, UnsupportedError
from affidavit.core.paths import affidavit_home
from affidavit.core.regular_file import NotRegularError, TooLargeError, read_regular

log = logging.getLogger(__name__)
RUNTIME_ENV = "AFFIDAVIT_RUNTIME_DIR"
POINTER_NAME = "session-dir"
"""The file in the affidavit home that names the fallback directory (when the usual name is
taken by someone else)."""
_POINTER_LIMIT = 4096
DARWIN_USER_TEMP_DIR = 65537  # _CS_DARWIN_USER_TEMP_DIR in macOS's <unistd.h>
PRIVATE_MODE = 0o700
FILE_MODE = 0o600


def darwin_user_temp_dir() -> str | None:
    """macOS's per-user temporary folder, as the system (not ``$TMPDIR``) reports it."""
    try:
        return os.confstr(DARWIN_USER_TEMP_DIR) or None
    except (ValueError, OSError):  # not macOS
        return None


@dataclass(frozen=True)
class Machine:
    """What decides the place: the platform and the user (injectable, so every branch is
    tested on any machine)."""

    system: str
    uid: int
    run_user: Path = Path("/run/user")
    shm: Path = Path("/dev/shm")  # noqa: S108 - RAM-backed by design; our directory is checked
    darwin_temp_dir: Callable[[], str | None] = field(default=darwin_user_temp_dir)

    @classmethod
    def this(cls) -> Machine:
        """The machine and user this process runs as."""
        return cls(sys.platform, os.getuid())


def base(machine: Machine | None = None) -> Path:
    """The place for this user's session files (see the module docstring)."""
    override = os.environ.get(RUNTIME_ENV)
    if override:
        if not Path(override).is_dir():
            raise UnsupportedError(
                f"{RUNTIME_ENV} names {override}, which is not a directory",
                f"create it, or unset {RUNTIME_ENV} to use the standard place",
            )
        return Path(override)
    machine = machine or Machine.this()
    if machine.system == "darwin":
        reported = machine.darwin_temp_dir()
        folder = Path(reported) if reported else None
        if folder is None or _problem(folder, machine.uid) is not None:
            raise UnsupportedError(
                "macOS did not report a private per-user temporary folder for the unlock secret",
                "set AFFIDAVIT_PASSPHRASE for each process instead",
            )
        return folder
    own = machine.run_user / str(machine.uid)
    if _problem(own, machine.uid) is None:
        return own
    if machine.shm.is_dir():
        return machine.shm
    raise UnsupportedError(
        f"no RAM-backed storage for the unlock secret (neither {own} nor {machine.shm})",
        "set AFFIDAVIT_PASSPHRASE for each process instead",
    )


def private_dir(machine: Machine | None = None, *, create: bool) -> Path | None:
    """This user's private directory for session files; None if there is none and not
    ``create``.

    The recorded fallback directory while one stands (so every process keeps agreeing on one
    place until reboot), else ``<base>/affidavit-<uid>`` when it is safe (made here if
    ``create``). When that name is a symlink, not a directory, not owned by this user or not
    mode 0700 (someone else may be waiting for the secret there), a fallback directory is made
    and recorded if ``create``.
    """
    machine = machine or Machine.this()
    place = base(machine)
    recorded = _recorded(place, machine.uid)
    if recorded is not None:
        return recorded
    try:
        return _checked_dir(place / f"affidavit-{machine.uid}", machine.uid, create=create)
    except IntegrityError as exc:
        return _fallback(place, machine.uid, squatted=exc.message) if create else None


def _checked_dir(path: Path, uid: int, *, create: bool) -> Path | None:
    """``path`` if it is a directory of ``uid`` with mode 0700 (made so if ``create`` and
    absent); None if absent. IntegrityError when something else is there; never follows a
    symlink and never changes what it did not make."""
    created = False
    if create:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=PRIVATE_MODE)
            created = True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _unsafe(path, "it is a symbolic link or not a directory") from None
        raise
    try:
        if created:  # ours for certain; the umask may have narrowed the mode
            os.fchmod(fd, PRIVATE_MODE)
        info = os.fstat(fd)
    finally:
        os.close(fd)
    problem = _mode_problem(info, uid)
    if problem is not None:
        raise _unsafe(path, problem)
    return path


def _fallback(place: Path, uid: int, *, squatted: str) -> Path:
    """A fresh ``mkdtemp`` directory beside the taken name, recorded for the user's other
    processes (under a lock, so two processes falling back at once agree on one)."""
    with _pointer_lock():
        found = _recorded(place, uid)
        if found is not None:
            return found
        made = Path(tempfile.mkdtemp(prefix=f"affidavit-{uid}-", dir=place))  # 0700, ours
        write_atomic(_pointer(), os.fsencode(made), SECRET_FILE_MODE)
    log.warning("%s; the unlock session lives in %s instead", squatted, made)
    return made


def _pointer() -> Path:
    return affidavit_home() / POINTER_NAME


@contextlib.contextmanager
def _pointer_lock() -> Iterator[None]:
    home = ensure_private_dir(affidavit_home())
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(home / f"{POINTER_NAME}.lock", flags, SECRET_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _recorded(place: Path, uid: int) -> Path | None:
    """The recorded fallback directory when it is one of ours beside the usual name and still
    private (a pointer to anything else, or to a directory gone since boot, is ignored)."""
    try:
        raw = read_regular(_pointer(), _POINTER_LIMIT, follow_symlinks=False)
    except (OSError, ValueError):  # none, or not a file we wrote
        return None
    path = Path(os.fsdecode(raw))
    if path.parent != place or not path.name.startswith(f"affidavit-{uid}-"):
        return None
    try:
        return _checked_dir(path, uid, create=False)
    except IntegrityError:
        return None


def _problem(path: Path, uid: int) -> str | None:
    """Why ``path`` is not a private directory of ``uid`` (None when it is); never follows."""
    try:
        info = os.lstat(path)
    except OSError:
        return "it does not exist"
    if not stat.S_ISDIR(info.st_mode):
        return "it is a symbolic link or not a directory"
    return _mode_problem(info, uid)


def _mode_problem(info: os.stat_result, uid: int) -> str | None:
    if info.st_uid != uid:
        return f"it is owned by uid {info.st_uid}, not by you (uid {uid})"
    mode = stat.S_IMODE(info.st_mode)
    if mode != PRIVATE_MODE:
        return f"it has mode {mode:04o}, not 0700"
    return None


def _unsafe(path: Path, problem: str) -> IntegrityError:
    return IntegrityError(
        f"{path} is not a safe place for the unlock secret: {problem}",
        f"another user may have made it to catch the secret; nothing was written there. "
        f"Check it (`ls -ld {path}`) and remove it",
    )


def write_file(directory: Path, name: str, data: bytes) -> Path:
    """Create ``directory/name`` (0600) holding ``data``, replacing any previous entry at once.

    The data goes to a fresh ``O_EXCL|O_NOFOLLOW`` file first; the rename then replaces the
    name itself (a symlink planted there is replaced, never followed).
    """
    temporary = directory / f".{name}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        target = directory / name
        temporary.replace(target)
        return target
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise


def read_file(path: Path, limit: int) -> bytes | None:
    """The small file at ``path``, or None when there is none; a symlink or any other kind of
    file there is refused (IntegrityError), never followed."""
    try:
        return read_regular(path, limit, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except (NotRegularError, TooLargeError) as exc:
        raise IntegrityError(
            f"the unlock session file {path} is {exc}: it was not written by affidavit",
            f"run `affidavit lock`, check {path.parent}, then unlock again",
        ) from None


def wipe_file(path: Path) -> bool:
    """Overwrite a small file with zeros, then remove it; True if something was there.

    A symlink (or anything but a regular file) is removed without being followed or written.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise
    else:
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode):
                os.write(fd, b"\0" * info.st_size)
                os.fsync(fd)
        finally:
            os.close(fd)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True

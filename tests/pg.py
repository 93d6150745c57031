"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb in a temp dir, pg_ctl on a
Unix socket in that dir (no TCP port), stopped and deleted afterwards.

PostgreSQL refuses to run as root; as root the cluster belongs to the ``postgres`` account
Debian's package creates and is driven through ``runuser``. Clients connect over the socket
as the cluster's superuser (trust authentication, reachable only through a 0700 directory).
"""

from __future__ import annotations

import contextlib
import getpass
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

SERVICE_ACCOUNT = "postgres"


def pg_bin() -> Path | None:
    """The directory of initdb and pg_ctl (Debian's newest version), or None when absent."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: p.parts[-3])
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass(frozen=True)
class Cluster:
    """A running cluster: where its files and socket are, and who may connect."""

    root: Path
    bin: Path
    user: str
    run_as: tuple[str, ...]
    options: str  # the server's command-line settings, given again at every start

    @property
    def data_dir(self) -> Path:
        """The server's data directory (what a canary test scans)."""
        return self.root / "data"

    def url(self, dbname: str) -> str:
        """A libpq URL for ``dbname`` over the cluster's socket (no password anywhere)."""
        return f"postgresql://{self.user}@/{dbname}?host={self.root}"

    def new_database(self) -> str:
        """A new, empty database; its URL."""
        name = f"t_{secrets.token_hex(6)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def pg_dump(self, url: str) -> bytes:
        """Everything the database holds, as the administrator's backup tool writes it."""
        return subprocess.run(
            [str(self.bin / "pg_dump"), "--dbname", url],
            check=True,
            capture_output=True,
            timeout=120,
        ).stdout

    def copy_database(self, source: str, target: str) -> None:
        """What an administrator does to move a database: ``pg_dump`` it, then load the
        dump into ``target`` (an empty database) with ``psql``."""
        subprocess.run(
            [str(self.bin / "psql"), "--quiet", "-v", "ON_ERROR_STOP=1", "--dbname", target],
            input=self.pg_dump(source),
            check=True,
            capture_output=True,
            timeout=120,
        )

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self.run_as, str(self.bin / "pg_ctl"), "-D", str(self.data_dir), *args],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def stop_server(self) -> None:
        """Stop the server the way an administrator does before maintenance (``-m fast``:
        every connection is ended, committed data stays); :meth:`start_server` brings it back."""
        self._ctl("stop", "-m", "fast", "-w")

    def start_server(self) -> None:
        """Start the server again on the same data directory and socket."""
        self._ctl("-o", self.options, "-l", str(self.root / "server.log"), "-w", "start")

    def server_pids(self) -> list[int]:
        """The postmaster's pid and those of all its children (backends, background workers)."""
        postmaster = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                # the field after the parenthesised command name is the state, then the ppid
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    children.append(int(stat.parent.name))
        return [postmaster, *children]

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """The whole server SIGSTOPped (a hung host, a stalled disk) for the ``with`` block:
        connections stay open and nothing answers; SIGCONT afterwards, children first."""
        pids = self.server_pids()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for pid in reversed(pids):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def stop(self) -> None:
        """Stop the server (immediately: its data is thrown away) and delete its files."""
        with contextlib.suppress(subprocess.SubprocessError):
            self._ctl("stop", "-m", "immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(*, durable: bool = False) -> Cluster:
    """initdb + pg_ctl start; ``durable`` keeps fsync on (benchmarks), tests skip it."""
    binaries = pg_bin()
    if binaries is None:
        raise FileNotFoundError("PostgreSQL's initdb is not installed (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="affidavit-pg-"))
    run_as: tuple[str, ...] = ()
    user = getpass.getuser()
    if os.geteuid() == 0:
        account = pwd.getpwnam(SERVICE_ACCOUNT)
        os.chown(root, account.pw_uid, account.pw_gid)
        run_as, user = ("runuser", "-u", SERVICE_ACCOUNT, "--"), SERVICE_ACCOUNT
    options = f"-k {root} -c listen_addresses='' -c shared_buffers=32MB -c max_connections=60"
    if not durable:
        options += " -c fsync=off -c full_page_writes=off"
    cluster = Cluster(root, binaries, user, run_as, options)
    subprocess.run(
        [
            *run_as,
            str(binaries / "initdb"),
            "-D",
            str(cluster.data_dir),
            "-U",
            user,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    try:
        cluster.start_server()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return cluster


@contextlib.contextmanager
def running_cluster(*, durable: bool = False) -> Iterator[Cluster]:
    """A cluster for the length of a ``with`` block."""
    cluster = start_cluster(durable=durable)
    try:
        yield cluster
    finally:
        cluster.stop()

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

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self.run_as, str(self.bin / "pg_ctl"), "-D", str(self.data_dir), *args],
            check=True,
            capture_output=True,
            timeout=120,
        )

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
    cluster = Cluster(root, binaries, user, run_as)
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
    options = f"-k {root} -c listen_addresses='' -c shared_buffers=32MB -c max_connections=60"
    if not durable:
        options += " -c fsync=off -c full_page_writes=off"
    try:
        cluster._ctl("-o", options, "-l", str(root / "server.log"), "-w", "start")
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

"""kill -9 at random moments while a process streams acknowledged stores and forgets.

After every kill the vault must open, hold every acknowledged store (and keep every
acknowledged forget), hold at most the one batch that was in flight beyond that, and its
audit chain must verify. Writers are forked from one pre-imported zygote process, so each
kill costs a fork rather than a Python start-up. The quick test kills 12 times, the slow
one 200 times.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from affidavit.vault import NewItem, Vault
from tests.support import cli_env
from tests.vault.conftest import TEST_PASSPHRASE, both_stores, vault_env, zygote_command

BATCH = 3


@dataclass
class Ledger:
    """What the writers acknowledged, and what they may have done without acknowledging."""

    acked: set[str] = field(default_factory=set)
    forgotten: set[str] = field(default_factory=set)
    in_flight_forgets: set[str] = field(default_factory=set)
    unacked_present: set[str] = field(default_factory=set)


def _one_kill(
    zygote: subprocess.Popen[str], rng: random.Random, round_: int, ledger: Ledger
) -> None:
    assert zygote.stdin is not None and zygote.stdout is not None
    zygote.stdin.write(f"r{round_} {rng.choice([1, BATCH])} 5\n")
    zygote.stdin.flush()
    wanted = rng.randint(1, 6)  # acknowledged lines before the kill window opens
    pid = None
    lines: list[str] = []
    while pid is None or len(lines) < wanted:
        line = zygote.stdout.readline()
        assert line and not line.startswith("dead "), f"writer died early: {line!r}"
        if line.startswith("pid "):
            pid = int(line.split()[1])
        else:
            lines.append(line)
    time.sleep(rng.uniform(0, 0.004))  # land anywhere inside the next transaction
    os.kill(pid, signal.SIGKILL)
    while True:
        line = zygote.stdout.readline()
        if line.startswith("dead "):
            assert int(line.split()[1]) & 0x7F == signal.SIGKILL
            break
        if "dead " in line:  # a torn ack glued to the zygote's report: never acknowledged
            break
        lines.append(line)
    batches = []
    for line in lines:
        words = line.split()
        if words[:1] == ["F"]:
            ledger.forgotten.add(words[1])
        else:
            ledger.acked.update(words)
            batches.append(words)
    # the writer may have committed, but not acknowledged, a forget of the previous
    # batch's last id
    ledger.in_flight_forgets.update(b[-1] for b in batches[-2:])


def _check(vault_path: Path, ledger: Ledger) -> None:
    v = Vault.open(vault_path, passphrase=TEST_PASSPHRASE)
    try:
        live = {it.id for it in v.items()}
        missing = ledger.acked - ledger.forgotten - live
        assert missing <= ledger.in_flight_forgets, f"acknowledged stores lost: {missing}"
        assert not (live & ledger.forgotten), "an acknowledged forget came back"
        new_extra = live - ledger.acked - ledger.unacked_present
        assert len(new_extra) <= BATCH, "more than the in-flight batch appeared"
        ledger.unacked_present.update(new_extra)
        report = v.verify_audit()
        assert report.ok, report.problem
    finally:
        v.close()


def _run(vault: Vault, home: Path, runtime_dir: Path, kills: int, seed: int) -> None:
    rng = random.Random(seed)
    vault.close()
    zygote = subprocess.Popen(
        zygote_command(vault.path),
        env=cli_env(home, vault_env(vault.path, runtime_dir)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    ledger = Ledger()
    try:
        for round_ in range(kills):
            _one_kill(zygote, rng, round_, ledger)
            _check(vault.path, ledger)
    finally:
        assert zygote.stdin is not None
        zygote.stdin.close()
        zygote.wait(timeout=60)
    assert len(ledger.acked) >= kills


@both_stores
def test_kill_9_during_stores_loses_nothing_acknowledged(
    vault: Vault, home: Path, runtime_dir: Path
) -> None:
    _run(vault, home, runtime_dir, kills=12, seed=1)


@both_stores
@pytest.mark.slow
@pytest.mark.timeout(900)  # ~40-90 s here; generous for a loaded CI box
def test_200_kills(vault: Vault, home: Path, runtime_dir: Path) -> None:
    _run(vault, home, runtime_dir, kills=200, seed=2026)


#: A writer that stops for good inside its write transaction, after its first row is written
#: (holding SQLite's write lock, or PostgreSQL's advisory lock), and says so.
_STUCK_WRITER = """
import os, sys, time
from pathlib import Path
from affidavit.vault import NewItem, Vault
from affidavit.vault import vault as inner

bind, calls = inner.envelope.bind_row, []
def stuck(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        print("inside", flush=True)
        time.sleep(3600)
    return bind(*args, **kwargs)
inner.envelope.bind_row = stuck
v = Vault.open(Path(sys.argv[1]), passphrase=os.environ["AFFIDAVIT_PASSPHRASE"])
v.put_many([NewItem(data={"text": f"half {i}", "source": "s"}) for i in range(3)])
"""


@both_stores
def test_a_writer_killed_inside_its_transaction_leaves_nothing_and_blocks_nobody(
    vault: Vault, home: Path, runtime_dir: Path
) -> None:
    kept = vault.put(NewItem(data={"text": "before", "source": "s"}))
    writer = subprocess.Popen(
        [sys.executable, "-c", _STUCK_WRITER, str(vault.path)],
        env=cli_env(home, vault_env(vault.path, runtime_dir)),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "inside"
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=60)
    after = vault.put(NewItem(data={"text": "after", "source": "s"}))  # the lock is free again
    again = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert sorted(it.data["text"] for it in again.items()) == ["after", "before"]
        assert [it.seq for it in again.items()] == [kept.seq, after.seq] == [1, 2]
        assert again.verify_audit().ok
    finally:
        again.close()

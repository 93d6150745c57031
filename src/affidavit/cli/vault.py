"""The memory vault's commands: init, unlock, lock, passwd, 2fa, get, forget, export, import,
status, verify (``affidavit memory ...``).

Command bodies import the vault lazily so ``affidavit --help`` stays fast. Data goes to stdout
(``--json`` on every command that returns data), messages to stderr. Secrets are read by
:mod:`affidavit.cli.passphrase`, never taken from argv.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from affidavit.cli import passphrase
from affidavit.cli.opening import open_memory, open_vault
from affidavit.cli.output import print_json, shown, stderr, stdout, visible, warn
from affidavit.cli.params import (
    EXISTING,
    EXISTING_OR_STDIN,
    OUTPUT,
    PATH,
    caller_option,
    json_option,
)
from affidavit.core.errors import InputError, LockedError, NotFoundError, UsageError
from affidavit.core.wording import counted

if TYPE_CHECKING:
    from affidavit.vault import NewItem

PROGRESS_FROM = 2000
KEYFILE_BYTES = 64


def _vault_dir() -> Path:
    from affidavit.core.paths import vault_dir

    return vault_dir()


def _ensure_keyfile(path: Path) -> bool:
    """Use an existing keyfile, or create a new random one (0600); True if created."""
    from affidavit.core.atomic import write_atomic

    if path.exists():
        return False
    if not path.parent.is_dir():
        raise InputError(f"cannot create keyfile {path}: its folder does not exist")
    write_atomic(path, secrets.token_bytes(KEYFILE_BYTES), 0o600)
    return True


@click.command("init")
@click.option(
    "--keyfile",
    type=PATH,
    help="Also require this keyfile (created with 64 random bytes if it does not exist).",
)
@click.option(
    "--store",
    metavar="URL",
    help="Keep the sealed rows in this PostgreSQL database (a team vault; default: "
    "AFFIDAVIT_STORE, else a SQLite file). A database that already holds a vault is joined. "
    "No password in the URL: use ~/.pgpass or PGPASSWORD.",
)
@click.option(
    "--integrate/--no-integrate",
    "wire",
    default=None,
    help="Add the memory server to the MCP clients installed here, or don't "
    "(default: ask on a terminal).",
)
@passphrase.weak_ok_option
@json_option
def init(
    keyfile: Path | None, store: str | None, wire: bool | None, weak_ok: bool, as_json: bool
) -> None:
    """Create an encrypted vault, or join a team vault.

    Asks twice for a passphrase on a terminal, or reads AFFIDAVIT_PASSPHRASE. A new
    passphrase needs 12 or more characters and must not be a common password. Then offers
    to wire the MCP clients it finds (`affidavit integrate`).
    """
    from affidavit.cli.integrate import offer_clients
    from affidavit.vault import Vault, refuse_existing
    from affidavit.vault import store as stores

    directory = _vault_dir()
    url = stores.check_url(store) if store else stores.store_from_env()
    refuse_existing(directory)
    if url is not None and stores.holds_vault(url):
        vault = Vault.join(directory, url, passphrase.current(), keyfile=keyfile)
        created_keyfile, done = False, f"joined the team vault {url} from {directory}"
    else:
        secret = passphrase.choose(weak_ok=weak_ok)
        created_keyfile = _ensure_keyfile(keyfile) if keyfile is not None else False
        vault = Vault.create(directory, secret, keyfile=keyfile, store=url)
        where = f"in {url} (this machine's pointer: {directory})" if url else f"at {directory}"
        done = f"created an encrypted vault {where}"
    result = {
        "path": str(directory),
        "store": url,
        "vault_id": vault.vault_id.hex(),
        "two_factor": keyfile is not None,
    }
    vault.close()
    if as_json:
        print_json(result)
        offer_clients(directory.expanduser().absolute(), wire)
        return
    stdout.print(done, markup=False)
    if keyfile is not None:
        made = "created" if created_keyfile else "uses"
        stdout.print(
            f"two-factor: {made} keyfile {keyfile}; keep a copy, it cannot be recovered",
            markup=False,
        )
    offer_clients(directory.expanduser().absolute(), wire)
    stderr.print("next: `affidavit unlock` to keep it open for your agents", markup=False)


@click.command("unlock")
@click.option(
    "--once",
    is_flag=True,
    help="For one command only: the next command that needs the key takes the session "
    "and keeps it until it exits (`status` only looks); every other process finds the "
    "vault locked.",
)
@click.option("--keyfile", type=EXISTING, help="The keyfile of a 2FA vault.")
@click.option(
    "--auto-lock",
    type=click.IntRange(min=0),
    help="Lock after this many idle minutes (0 = never); saved in the vault's settings.",
)
@click.option(
    "--store",
    default="runtime",
    help="Where the session secret lives: runtime (RAM-backed storage of this user, the "
    "default) or keyring (the OS keyring; needs affidavit[keyring]).",
)
@json_option
def unlock(
    once: bool, keyfile: Path | None, auto_lock: int | None, store: str, as_json: bool
) -> None:
    """Unlock the vault for this user's processes.

    It stays unlocked until `lock`, a reboot or the idle auto-lock.
    """
    from affidavit.access import unlock_gate
    from affidavit.vault import AUTO_LOCK_SETTING, Vault, locked_status, session

    if store not in session.STORES:
        raise UsageError(f"unknown --store {store!r}", f"use {' or '.join(session.STORES)}")
    locked_status(_vault_dir())  # "no vault at ..." before asking for a passphrase
    vault = Vault.open(passphrase=passphrase.current(), keyfile=keyfile)
    try:
        if auto_lock is not None:
            vault.set_setting(AUTO_LOCK_SETTING, auto_lock or None)
        idle = vault.get_setting(AUTO_LOCK_SETTING)
        unlock_gate.remember(vault.path, unlock_gate.unlock_tool_enabled(vault))
        vault.start_session(once=once, idle_minutes=idle, store=store)
        path = vault.path
    finally:
        vault.close()
    if as_json:
        print_json(
            {
                "path": str(path),
                "state": "unlocked",
                "once": once,
                "store": store,
                "auto_lock_minutes": idle,
            }
        )
        return
    until = "for the next command that needs the key" if once else "until lock or reboot"
    extra = f", auto-lock after {counted(idle, 'idle minute')}" if idle else ""
    where = ", secret in the OS keyring" if store == session.KEYRING else ""
    stdout.print(f"unlocked {path} {until}{extra}{where}", markup=False)


@click.command("lock")
@click.option("--sign", is_flag=True, help="First write an Ed25519-signed manifest of the vault.")
@click.option(
    "--out",
    type=OUTPUT,
    help="Where to write the manifest (default: manifest.json in the vault).",
)
@json_option
def lock(sign: bool, out: Path | None, as_json: bool) -> None:
    """Lock the vault for every process of this user.

    With --sign, first write a signed manifest of the vault (check it with `verify`).
    """
    from affidavit.vault import fold_wal, locked_status, manifest, session

    directory = _vault_dir()
    vault_id = bytes.fromhex(locked_status(directory)["vault_id"])  # NotFoundError: no vault
    written = None
    if sign:
        vault = open_vault()
        try:
            written = manifest.sign(vault, out)
        finally:
            vault.close()
    ended = session.clear(directory, vault_id)
    fold_wal(directory)  # at rest, everything is in the one file
    if as_json:
        print_json(
            {
                "path": str(directory),
                "state": "locked",
                "was_unlocked": ended,
                "manifest": str(written) if written else None,
            }
        )
        return
    if written is not None:
        stdout.print(f"signed manifest: {written}", markup=False)
    stdout.print(
        f"locked {directory}" if ended else f"{directory} was already locked", markup=False
    )


@click.command("passwd")
@passphrase.weak_ok_option
def passwd(weak_ok: bool) -> None:
    """Change the passphrase.

    Re-wraps the key slots and re-encrypts nothing. Reads AFFIDAVIT_PASSPHRASE and
    AFFIDAVIT_NEW_PASSPHRASE when not at a terminal. The new passphrase needs 12 or more
    characters and must not be a common password.
    """
    from affidavit.vault import Vault

    vault = Vault.open(passphrase=passphrase.current("Current passphrase: "))
    try:
        new = passphrase.choose(passphrase.NEW_ENV, weak_ok=weak_ok)
        vault.set_credentials(new, keyfile=vault.keyfile_path, op="passwd")
    finally:
        vault.close()
    stdout.print(
        "passphrase changed; backups made before now still open with the old one", markup=False
    )


@click.command("enable")
@click.option("--keyfile", type=PATH, required=True, help="The keyfile (made if missing).")
def twofa_enable(keyfile: Path) -> None:
    """Require KEYFILE as well as the passphrase from now on.

    A missing KEYFILE is created with 64 random bytes (0600): keep a copy, it cannot be
    recovered.
    """
    from affidavit.crypto.keyslots import PASSPHRASE_KEYFILE
    from affidavit.vault import Vault

    secret = passphrase.current()
    vault = Vault.open(passphrase=secret)
    try:
        if PASSPHRASE_KEYFILE in vault.slot_kinds():
            raise UsageError("two-factor is already on", "use `affidavit 2fa disable` first")
        created = _ensure_keyfile(keyfile)
        vault.set_credentials(secret, keyfile=keyfile, op="2fa-enable")
    finally:
        vault.close()
    made = "created" if created else "uses"
    stdout.print(f"two-factor on: the vault {made} keyfile {keyfile}; keep a copy", markup=False)


@click.command("disable")
@click.option("--keyfile", type=EXISTING, required=True, help="The keyfile the vault requires now.")
def twofa_disable(keyfile: Path) -> None:
    """Stop requiring the keyfile.

    From then on the passphrase alone opens the vault again.
    """
    from affidavit.vault import Vault

    secret = passphrase.current()
    vault = Vault.open(passphrase=secret, keyfile=keyfile)
    try:
        if vault.keyfile_path is None:
            raise UsageError("two-factor is not on for this vault")
        vault.set_credentials(secret, keyfile=None, op="2fa-disable")
    finally:
        vault.close()
    stdout.print("two-factor off: the passphrase alone opens the vault", markup=False)


@click.command("get")
@click.argument("item_id", metavar="ID", help="The memory's or relation's id.")
@caller_option
@json_option
def get(item_id: str, caller: str, as_json: bool) -> None:
    """Show one memory (superseded ones too) or one relation.

    With --json: as memory_get answers (a relation: its own object), with the notice that
    recalled content is data, not instructions.
    """
    from affidavit.recall import WrongKindError, views

    with open_memory(caller) as m:
        try:
            shown_json: Mapping[str, Any] = views.memory_got_json(m.get_memory(item_id))
        except WrongKindError as exc:
            if exc.kind != "relation":
                raise NotFoundError(exc.message, "`affidavit review` shows captured ones") from None
            shown_json = views.relation_got_json(m.get_relation(item_id))
    if as_json:
        print_json(shown_json)
        return
    record = dict(shown_json.get("memory") or shown_json["relation"])
    text = record.pop("text", None)
    if text is None:  # a relation: its headline, then the rest
        text = " ".join(str(record.pop(part)) for part in ("subject", "predicate", "object"))
    stdout.print(shown(text))
    for key, value in record.items():
        if value is None or value == []:
            continue
        joined = ", ".join(map(str, value)) if isinstance(value, list) else value
        stdout.print(shown(f"  {key}: {joined}"))


@click.command("forget")
@click.argument("item_id", metavar="ID", help="The record id.")
@click.option(
    "--shred",
    is_flag=True,
    help="Destroy its key and ciphertext too: unrecoverable from the vault.",
)
@caller_option
@json_option
def forget(item_id: str, shred: bool, caller: str, as_json: bool) -> None:
    """Forget a record (with --shred, crypto-shred it)."""
    with open_memory(caller) as m:
        done = m.forget(item_id, shred=shred)
    if as_json:
        print_json(done)
    else:
        stdout.print(f"{'shredded' if shred else 'forgot'} {item_id}", markup=False)


@click.command("export")
@click.option(
    "--plaintext", is_flag=True, help="Required: confirms you want the memories unencrypted."
)
def export(plaintext: bool) -> None:
    """Write every live record to stdout as JSON lines, in plaintext."""
    if not plaintext:
        raise UsageError(
            "export writes your memories in plaintext",
            "pass --plaintext to confirm, and redirect stdout to a safe place",
        )
    vault = open_vault()
    try:
        items = list(vault.items())
    finally:
        vault.close()
    warn(
        f"writing {counted(len(items), 'record')} in PLAINTEXT to stdout; "
        "protect or delete the copy"
    )
    out = sys.stdout
    for item in items:
        row = item.as_dict()
        row.pop("seq")
        if item.vector is not None:
            row["vector"] = base64.b64encode(item.vector).decode("ascii")
        out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    out.flush()


@contextlib.contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long jobs (none for small ones)."""
    if total < PROGRESS_FROM:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=stderr, transient=True) as bar:
        task = bar.add_task(label, total=total)
        # the job reports its own total: embedding counts only the rows that need it
        yield lambda done, of: bar.update(task, completed=done, total=of)


def _read_import(source: str) -> list[NewItem]:
    """Parse an export file: every line checked before anything is stored."""
    from affidavit.core.regular_file import USER_FILE_LIMIT, TooLargeError, read_bounded, read_named
    from affidavit.vault import parse_export

    if source == "-":
        try:
            raw = read_bounded(sys.stdin.buffer, USER_FILE_LIMIT)
        except TooLargeError as exc:
            raise InputError(f"stdin holds {exc}", "import the export from a file") from None
    else:
        raw = read_named(Path(source), what="an export file (JSONL)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {source} as UTF-8 text ({exc})") from None
    return parse_export(text, source)


@click.command("import")
@click.argument(
    "source", metavar="FILE", type=EXISTING_OR_STDIN, help="An export file (JSONL), or - for stdin."
)
@json_option
def import_(source: str, as_json: bool) -> None:
    """Import an export: all or nothing, idempotent by id."""
    from affidavit.recall import embed_missing

    items = _read_import(source)
    vault = open_vault()
    try:
        with _progress(len(items), "embedding memories") as report:
            items = embed_missing(vault, items, report)
        with _progress(len(items), "sealing records") as report:
            try:
                counts = vault.import_items(items, progress=report)
            except InputError as exc:
                raise InputError(f"{source}: {exc.message}", "nothing was imported") from None
    finally:
        vault.close()
    if as_json:
        print_json({"rows": len(items), **counts})
        return
    stdout.print(
        f"imported {counted(counts['imported'], 'record')} "
        f"({counts['already_present']} already present, "
        f"{counts['kept_forgotten']} forgotten here and left out)",
        markup=False,
    )


@click.command("status")
@json_option
def status(as_json: bool) -> None:
    """Lock state, records, size, audit head and recall mode.

    Records per namespace and the audit head show only while the vault is unlocked.
    """
    from affidavit.recall import availability
    from affidavit.vault import Vault, locked_status

    info: dict[str, Any]
    try:
        vault = Vault.open(consume_once=False)  # a one-time session is for another command
    except LockedError:
        info = dict(locked_status(_vault_dir()))
    else:
        try:
            from affidavit.recall import installed_packs

            info = dict(vault.status())
            info["packs"] = [p.as_dict() for p in installed_packs.installed(vault)]
        finally:
            vault.close()
    info["recall"] = availability()
    if as_json:
        print_json(info)
        return
    lines = [
        f"vault:   {info['path']}",
        f"state:   {_state_line(info)}",
        f"format:  {info['format']}",
        f"size:    {info['size_bytes']:,} {'byte' if info['size_bytes'] == 1 else 'bytes'} on disk",
    ]
    if "records" in info:
        spread = ", ".join(f"{k} {v}" for k, v in info["namespaces"].items()) or "none"
        lines[2:2] = [f"records: {info['records']} ({spread})"]
        entries = counted(info["audit"]["entries"], "entry", "entries")
        lines.append(f"audit:   {entries}, head {info['audit']['head']}")
        if info.get("auto_lock_minutes"):
            lines.append(f"auto-lock: after {counted(info['auto_lock_minutes'], 'idle minute')}")
        for pack in info["packs"]:
            lines.append(
                visible(
                    f"pack:    {pack['namespace']} ({counted(pack['records'], 'record')}, "
                    f"{pack['signature']}, sequence {pack['sequence']}) from {pack['path']}"
                )
            )
    elif info["once"]:
        lines.append("records: sealed (status leaves a one-time session to the next command)")
    else:
        lines.append("records: sealed (run `affidavit unlock` to see counts and the audit head)")
    recall = info["recall"]
    lines.append(
        f"recall:  semantic + keyword ({recall['model']})"
        if recall["semantic"]
        else f"recall:  keyword only ({recall['reason']})"
    )
    for line in lines:
        stdout.print(line, markup=False)


def _state_line(info: dict[str, Any]) -> str:
    """How the vault is open, for people: by what, for whom, until when."""
    where = " (secret in the OS keyring)" if info["store"] == "keyring" else ""
    once = f"unlocked once: the next command that needs the key takes the session{where}"
    if info["state"] == "locked":
        return "locked"
    if info.get("unlocked_by") == "passphrase":
        if info["session"] == "locked":
            others = "no unlock session"
        elif info["once"]:
            others = "a one-time session waits for the next command"
        else:
            others = f"an unlock session is open too{where}"
        return f"unlocked for this process only (AFFIDAVIT_PASSPHRASE); {others}"
    return once if info["once"] else f"unlocked until lock or reboot{where}"


@click.command("verify")
@click.argument(
    "manifest_path", metavar="MANIFEST", type=EXISTING, help="A file `lock --sign` wrote."
)
@click.option(
    "--vault", type=EXISTING, help="Also check that this vault directory's file is the signed one."
)
@click.option("--key", help="Require this signer fingerprint (SHA256:...).")
@json_option
def verify(manifest_path: Path, vault: Path | None, key: str | None, as_json: bool) -> None:
    """Check a signed vault manifest; needs no passphrase."""
    from affidavit.vault import manifest

    report = manifest.verify(manifest_path, vault_dir=vault, pinned=key)
    if as_json:
        print_json(report)
        return
    stdout.print(
        f"manifest OK: signed by {report['signer']}"
        f"{' (pinned)' if report['pinned'] else ' (not pinned: pass --key)'}",
        markup=False,
    )
    stdout.print(
        f"  {counted(report['records'], 'record')}, "
        f"{counted(report['audit_entries'], 'audit entry', 'audit entries')}, "
        f"signed {report['created_at']}",
        markup=False,
    )
    if report["vault_file"]:
        stdout.print(f"  vault file matches: {report['vault_file']}", markup=False)

"""Sign a pack: copy it, date it (PACK.json), reseal SHA256SUMS, sign with ``ssh-keygen``.

The private key is never opened by us: ``ssh-keygen -Y sign`` reads it, asks for its
passphrase or uses ssh-agent. The result is staged in a hidden sibling of the output
directory, verified in strict mode trusting only the signing key's ``.pub``, and only then
renamed into place; on any failure nothing is left behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from affidavit.core.atomic import fsync_dir
from affidavit.core.durations import EXAMPLES, add_duration
from affidavit.core.errors import ConflictError, ExternalError, NotFoundError, UsageError
from affidavit.crypto.signers import SshPublicKey, read_public_key
from affidavit.packs import format as fmt
from affidavit.packs.errors import PackFormatError
from affidavit.packs.reading import PackContents, read_pack
from affidavit.packs.trust import TrustOptions
from affidavit.packs.verify import verify_pack


@dataclass(frozen=True)
class SignResult:
    """What a signer needs to tell hosts: where the pack is and how to trust its key."""

    out: Path
    key: SshPublicKey
    meta: fmt.PackMeta

    @property
    def fingerprint(self) -> str:
        """The signing key's fingerprint, as ``ssh-keygen -l`` prints it."""
        return self.key.fingerprint

    @property
    def pin_line(self) -> str:
        """The flag that pins this signer on a host."""
        return f"--trusted-fingerprint {self.fingerprint}"

    @property
    def allowed_signers_line(self) -> str:
        """A ``--trusted-keys`` file line for this key."""
        line = f"{self.key.principal_name()} {self.key.openssh()}"
        return f"{line} {self.key.comment}".rstrip()


def parse_expires(text: str, now: datetime) -> datetime:
    """A duration from now (90d, 2w, 3m, 1y: the grammar of :mod:`affidavit.core.durations`)
    or an exact UTC time; after now, at most 1825 days ahead."""
    later = add_duration(now, text, "--expires")
    if later is not None:
        expires = later
    else:
        try:
            expires = fmt.parse_utc(text)
        except PackFormatError as exc:
            raise UsageError(
                f"--expires {text[:40]!r} is neither a duration ({EXAMPLES}) nor a UTC time",
                "write e.g. --expires 90d or --expires 2027-01-31T00:00:00Z",
            ) from exc
    if expires <= now:
        raise UsageError(f"--expires {text} is not in the future")
    if expires > now + timedelta(days=fmt.MAX_EXPIRY_DAYS):
        raise UsageError(f"--expires {text} is more than {fmt.MAX_EXPIRY_DAYS} days away")
    return expires


def public_key_path(key: Path) -> Path:
    """The ``.pub`` next to a private key (or the key itself when it is a ``.pub``)."""
    return key if key.name.endswith(".pub") else key.with_name(key.name + ".pub")


def _signing_key(key: Path) -> SshPublicKey:
    public = public_key_path(key)
    if not public.exists():
        raise NotFoundError(
            f"public key {public} does not exist", "keep KEY.pub next to the private key"
        )
    signer = read_public_key(public)
    if not signer.is_ed25519:
        raise UsageError(
            f"{public} is a {signer.key_type} key; packs accept only Ed25519 signers",
            "make one with: ssh-keygen -t ed25519 -f ~/.ssh/pack-signing",
        )
    return signer


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _ssh_keygen_sign(key: Path, sums: Path) -> None:
    command = ["ssh-keygen", "-Y", "sign", "-f", str(key), "-n", fmt.NAMESPACE, str(sums)]
    try:
        # stdin stays the user's: ssh-keygen asks for a passphrase on the terminal (or stdin).
        done = subprocess.run(command, capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise ExternalError(
            "ssh-keygen is not installed", "install OpenSSH 8.1 or newer (ssh-keygen -Y sign)"
        ) from exc
    if done.returncode != 0 or not sums.with_name(fmt.SIGNATURE).exists():
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = lines[-1] if lines else f"exit status {done.returncode}"
        raise ExternalError(
            f"ssh-keygen -Y sign failed: {detail}",
            "check the key path and its passphrase (ssh-agent works too)",
        )


def _stage(contents: PackContents, stage: Path, meta: fmt.PackMeta, key: Path) -> None:
    files = {name: contents.files[name] for name in (fmt.MEMORY, fmt.README, fmt.RECORDS)}
    files[fmt.PACK_JSON] = meta.as_json_bytes()
    for name, data in files.items():
        _write(stage / name, data)
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    _write(stage / fmt.SUMS, fmt.render_manifest(digests))
    _ssh_keygen_sign(key, stage / fmt.SUMS)
    stage.chmod(0o755)
    fsync_dir(stage)


def _move_into_place(stage: Path, out: Path) -> None:
    """Claim ``out`` with mkdir (fails if it exists), then rename the stage over it."""
    try:
        out.mkdir()
    except FileExistsError as exc:
        raise ConflictError(f"{out} already exists", "choose a new --out directory") from exc
    try:
        stage.rename(out)
    except OSError:
        with contextlib.suppress(OSError):
            out.rmdir()
        raise
    fsync_dir(out.parent)


def sign_pack(
    pack: Path,
    key: Path,
    expires: datetime,
    out: Path,
    *,
    sequence: int | None = None,
    now: datetime | None = None,
) -> SignResult:
    """Copy ``pack`` to ``out`` dated ``now``..``expires`` (and ``sequence``), signed by ``key``.

    An existing PACK.json and signature are replaced. The staged copy must verify under
    ``--strict`` pinned to this key (and ``--min-sequence`` when a sequence is set).
    """
    pack, key, out = pack.absolute(), key.absolute(), out.absolute()
    signer = _signing_key(key)
    if out.exists() or out.is_symlink():
        raise ConflictError(f"{out} already exists", "choose a new --out directory")
    if not out.parent.is_dir():
        raise NotFoundError(f"the parent of --out ({out.parent}) does not exist")
    if out.parent.resolve() == pack.resolve():
        raise UsageError("--out is inside the pack", "a pack holds no subfolders; sign elsewhere")
    created = (now or datetime.now(UTC)).replace(microsecond=0)
    if sequence is not None and fmt.whole_number(sequence, 0) is None:
        raise UsageError(f"--sequence {sequence} is not a whole number >= 0")
    meta = fmt.make_meta(created, expires, sequence)
    contents = read_pack(pack)  # check the source before anything is created
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.signing-", dir=out.parent))
    try:
        _stage(contents, stage, meta, key)
        trust = TrustOptions(
            trusted_fingerprints=(signer.fingerprint,), strict=True, min_sequence=sequence
        )
        verify_pack(stage, trust, at=created)
        _move_into_place(stage, out)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    return SignResult(out, signer, meta)

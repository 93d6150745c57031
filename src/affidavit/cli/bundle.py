"""``affidavit bundle``: build a Claude Desktop bundle (.mcpb) of the memory server, or of the
read-only server of one signed pack (``--pack DIR``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.cli.output import stderr, stdout, warn
from affidavit.cli.params import PATH
from affidavit.core.errors import UsageError

if TYPE_CHECKING:
    from affidavit.integrate.bundle import PackPayload


@click.command("bundle")
@click.argument(
    "trust_args",
    nargs=-1,
    type=click.UNPROCESSED,
    help="After --, with --pack: trust flags checked now and put in the settings form.",
)
@click.option(
    "--out",
    type=PATH,
    help="Where to write it (default: affidavit[-pack-NAME]-VERSION-PLATFORM-pyXY.mcpb here).",
)
@click.option("--pack", type=PATH, help="Bundle this signed pack's read-only server instead.")
def bundle(trust_args: tuple[str, ...], out: Path | None, pack: Path | None) -> None:
    """A Claude Desktop bundle (.mcpb): the memory server or one pack.

    The bundle holds affidavit and its dependencies from this environment (the embedding
    model too, for the memory server), so it runs offline on this platform and Python
    version. The memory server's settings form asks for the vault folder and the caller
    name; a pack bundle's for the trust flags (pinned fingerprint, minimum sequence, strict),
    filled in with the pack's signer and sequence. The pack is verified before anything is
    written, and again at every start.
    """
    from rich.progress import Progress

    from affidavit.integrate import bundle as mcpb

    if trust_args and pack is None:
        raise UsageError("trust flags after -- go with --pack", "e.g. --pack DIR -- --strict")
    payload = None if pack is None else _verified_pack(pack, list(trust_args))
    target = out or Path.cwd() / mcpb.default_name(payload)
    with Progress(console=stderr, transient=True, disable=not stderr.is_terminal) as bar:
        task = bar.add_task("bundling", total=None)
        built = mcpb.build(
            target, lambda done, of: bar.update(task, completed=done, total=of), payload
        )
    size = f"{built.size / 1_000_000:.1f} MB"
    stdout.print(
        f"{built.path} ({size}, {built.files} files, {built.platform}, Python {built.python})",
        markup=False,
    )


def _verified_pack(pack: Path, trust_args: list[str]) -> PackPayload:
    """Verify the pack with the given trust flags (a signature required); the payload."""
    from affidavit.cli.pack_serve import PACK_FLAG, parse_serve_args
    from affidavit.integrate.bundle import PackPayload, PackTrust
    from affidavit.packs import verify_pack

    directory = pack.expanduser().absolute()
    pack_dir, trust = parse_serve_args([PACK_FLAG, str(directory), *trust_args])
    if trust.trusted_keys is not None or trust.revoked_keys is not None:
        raise UsageError(
            "--trusted-keys and --revoked-keys name files on this machine, not in the bundle",
            "pin the signer with --trusted-fingerprint instead",
        )
    verified = verify_pack(pack_dir, trust)
    for message in verified.warnings:
        warn(message)
    signer = verified.report.signature.fingerprint
    if signer is None:
        raise UsageError(
            f"{pack_dir} is not signed, and a bundle serves only signed packs",
            "sign it with `affidavit pack sign`, then bundle the signed copy",
        )
    meta = verified.report.meta
    defaults = PackTrust(
        fingerprint=trust.trusted_fingerprints[0] if trust.trusted_fingerprints else signer,
        min_sequence=trust.min_sequence
        if trust.min_sequence is not None
        else (meta.sequence if meta is not None else None),
        strict=trust.strict,
    )
    files = {p.name: p for p in sorted(pack_dir.iterdir()) if p.is_file()}
    return PackPayload(pack_dir.name, files, defaults)

"""``affidavit pack sign --pack P --key K --expires 90d|2w|3m|1y|UTC [--sequence N] --out DIR``."""

from __future__ import annotations

from pathlib import Path

import click

from affidavit.cli.params import EXISTING, PATH, json_option


@click.command("sign")
@click.option("--pack", type=EXISTING, required=True, help="The pack to sign (it is copied).")
@click.option(
    "--key",
    type=EXISTING,
    required=True,
    help="Ed25519 private key for ssh-keygen (KEY.pub must sit next to it); "
    "a .pub with ssh-agent works too.",
)
@click.option(
    "--expires",
    required=True,
    help="How long from now (90d, 2w, 3m, 1y; at most 1825 days) or a UTC time.",
)
@click.option("--out", type=PATH, required=True, help="New directory for the signed pack.")
@click.option(
    "--sequence", type=click.IntRange(min=0), help="Raise it with every pack you publish."
)
@json_option
def sign(
    pack: Path, key: Path, expires: str, out: Path, sequence: int | None, as_json: bool
) -> None:
    """Date, reseal and sign a copy of a pack with ssh-keygen.

    The signed copy is verified, then moved into place. The private key is never read by
    affidavit: ssh-keygen asks for its passphrase (or uses ssh-agent). On any failure nothing
    is written.
    """
    from datetime import UTC, datetime

    from affidavit.cli.output import print_json, stdout
    from affidavit.packs import parse_expires, sign_pack

    now = datetime.now(UTC).replace(microsecond=0)
    result = sign_pack(pack, key, parse_expires(expires, now), out, sequence=sequence, now=now)
    meta = result.meta
    if as_json:
        print_json(
            {
                "path": str(result.out),
                "created": meta.created_utc,
                "expires": meta.expires_utc,
                "sequence": meta.sequence,
                "fingerprint": result.fingerprint,
                "pin": result.pin_line,
                "allowed_signers_line": result.allowed_signers_line,
            }
        )
        return
    lines = [
        f"signed pack: {result.out}",
        f"  created {meta.created_utc}, expires {meta.expires_utc}"
        + (f", sequence {meta.sequence}" if meta.sequence is not None else ""),
        f"  signer fingerprint: {result.fingerprint}",
        f"  pin it on hosts:    {result.pin_line}",
        f"  trusted keys line:  {result.allowed_signers_line}",
    ]
    stdout.print("\n".join(lines), markup=False, highlight=False)

"""``affidavit pack sign --pack P --key K --expires 90d|UTC [--sequence N] --out DIR``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add ``sign`` to the pack app."""

    @app.command("sign")
    def sign(
        pack: Annotated[Path, typer.Option("--pack", help="The pack to sign (it is copied).")],
        key: Annotated[
            Path,
            typer.Option(
                "--key",
                help="Ed25519 private key for ssh-keygen (KEY.pub must sit next to it); "
                "a .pub with ssh-agent works too.",
            ),
        ],
        expires: Annotated[
            str, typer.Option("--expires", help="Days from now (90d, at most 1825d) or a UTC time.")
        ],
        out: Annotated[Path, typer.Option("--out", help="New directory for the signed pack.")],
        sequence: Annotated[
            int | None,
            typer.Option("--sequence", min=0, help="Raise it with every pack you publish."),
        ] = None,
    ) -> None:
        """Date, reseal and sign a copy of a pack with ssh-keygen; verify it; move it into place.

        The private key is never read by affidavit: ssh-keygen asks for its passphrase (or
        uses ssh-agent). On any failure nothing is written.
        """
        from datetime import UTC, datetime

        from affidavit.cli.output import stdout
        from affidavit.packs import parse_expires, sign_pack

        now = datetime.now(UTC).replace(microsecond=0)
        result = sign_pack(pack, key, parse_expires(expires, now), out, sequence=sequence, now=now)
        meta = result.meta
        lines = [
            f"signed pack: {result.out}",
            f"  created {meta.created_utc}, expires {meta.expires_utc}"
            + (f", sequence {meta.sequence}" if meta.sequence is not None else ""),
            f"  signer fingerprint: {result.fingerprint}",
            f"  pin it on hosts:    {result.pin_line}",
            f"  trusted keys line:  {result.allowed_signers_line}",
        ]
        stdout.print("\n".join(lines), markup=False, highlight=False)

"""``affidavit pack verify DIR [trust flags] [--at UTC] [--json]``.

Exit 0 when the pack would be served with these trust flags, non-zero with the one reason
when it would be refused. The trust flags are read from raw argv by the evidence plane's own
parser, so they behave exactly as on ``pack serve`` (``--flag=value``, empty means off).

:func:`run` is also the fast path (:mod:`affidavit.cli.fastpath`): a cold ``pack verify`` must
not pay for typer, rich or pydantic, so this module imports none of them at load time (and
leaves out ``from __future__ import annotations`` so typer can read the nested command's
annotations without a module-level ``typer``).
"""

import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from affidavit.packs.trust import TrustOptions

HELP = """Verify a pack as a host would, and print the verification report.

Exit 0 when the pack would be served with these trust flags; otherwise one line says why.

\b
DIR                         the pack directory (an absolute path)
--trusted-keys FILE         allowed_signers lines: name ssh-ed25519 AAAA... [comment]
--trusted-fingerprint FP    pin a signer (SHA256:...); repeatable or comma-separated
--revoked-keys FILE         fingerprints that are refused whatever else is set
--min-sequence N            refuse packs whose signed sequence is lower (rollback)
--require-signature         require a pinned or trusted signature
--strict                    also require an unexpired, already valid PACK.json
--at UTC-TIME               judge freshness at that instant (2026-10-12T18:00:00Z)
--json                      print the full report as JSON

Every flag also takes --flag=value; booleans take =true|false; an empty value means off.
"""
USAGE = "DIR [TRUST FLAGS] [--at UTC-TIME] [--json]"


def _parse(args: list[str]) -> "tuple[TrustOptions, Path, datetime | None, bool]":
    from affidavit.core.errors import UsageError
    from affidavit.packs import format as fmt
    from affidavit.packs.errors import PackFormatError
    from affidavit.packs.trust import (
        absolute_path,
        flag_value,
        parse_bool,
        parse_trust_args,
        take_flag,
    )

    options, rest = parse_trust_args(args)
    pack: str | None = None
    at: datetime | None = None
    as_json = False
    index = 0
    while index < len(rest):
        at_flag = flag_value(rest, index, "--at")
        if at_flag is not None:
            try:
                at = fmt.parse_utc(at_flag[0])
            except PackFormatError as exc:
                raise UsageError(f"--at {exc.message}") from exc
            index = at_flag[1]
            continue
        json_flag = take_flag(rest, index, "--json")
        if json_flag is not None:
            as_json = parse_bool("--json", json_flag[0])
            index = json_flag[1]
            continue
        arg = rest[index]
        index += 1
        if arg.startswith("-"):
            raise UsageError(f"unknown option {arg}", "see `affidavit pack verify --help`")
        if pack is not None:
            raise UsageError(f"unexpected argument {arg}", "give exactly one pack directory")
        pack = arg
    pack_dir = absolute_path("pack directory", pack or "")
    if pack_dir is None:
        raise UsageError("no pack directory given", "usage: affidavit pack verify DIR [flags]")
    return options, pack_dir, at, as_json


def _human(report: dict[str, Any]) -> str:
    signature, freshness = report["signature"], report["freshness"]
    who = ", ".join(
        part
        for part in (
            f"signer {signature['signer']}" if signature["signer"] else "",
            signature["fingerprint"] or "",
            "pinned" if signature["pinned"] else "",
        )
        if part
    )
    dates = ", ".join(
        part
        for part in (
            f"created {freshness['created_utc']}" if freshness["created_utc"] else "",
            f"expires {freshness['expires_utc']}" if freshness["expires_utc"] else "",
            f"sequence {freshness['sequence']}" if freshness["sequence"] is not None else "",
            "authenticated" if freshness["authenticated"] else "not authenticated",
        )
        if part
    )
    rows = [
        ("records", str(report["records"])),
        ("manifest sha256", report["manifest_sha256"]),
        ("signature", signature["status"] + (f" ({who})" if who else "")),
        ("freshness", f"{freshness['status']} ({dates}) at {report['judged_at']}"),
    ]
    lines = [f"pack verified: {report['pack']}"]
    lines += [f"  {label:<16} {value}" for label, value in rows]
    return "\n".join(lines) + "\n"


def run(args: list[str]) -> None:
    """Verify the pack named in ``args``; print the report; raise PackRefused when refused."""
    from affidavit.packs.errors import PackRefused
    from affidavit.packs.verify import refusal_dict, verify_pack

    options, pack_dir, at, as_json = _parse(args)
    try:
        verified = verify_pack(pack_dir, options, at=at)
    except PackRefused as exc:
        if as_json:
            _write_json(refusal_dict(pack_dir, exc))
        raise
    if verified.warnings:
        from affidavit.cli.output import warn

        for message in verified.warnings:
            warn(message)
    report = verified.as_dict()
    if as_json:
        _write_json(report)
    else:
        sys.stdout.write(_human(report))


def _write_json(value: Any) -> None:
    # cli.output.print_json's format, without importing rich on the fast path.
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


def register(app: "typer.Typer") -> None:
    """Add ``verify`` to the pack app."""
    import typer

    @app.command(
        "verify",
        help=HELP,
        options_metavar=USAGE,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    def verify(ctx: typer.Context) -> None:
        run(list(ctx.args))

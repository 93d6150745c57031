"""``affidavit pack verify DIR [trust flags] [--at UTC] [--json]``.

Exit 0 when the pack would be served with these trust flags, non-zero with the one reason
when it would be refused. The whole command line after ``verify`` is read by the evidence
plane's trust-flag reader (:mod:`affidavit.packs.trust`), so the flags behave exactly as on
``pack serve`` and in hosts' MCP configs (``--flag=value``, ``=true|false``, empty means off),
which click's options cannot express; click still owns dispatch, ``-h`` and the errors.

A cold ``pack verify`` of 10,000 records has a 0.35 s budget (ADR 10): this module imports
click and the standard library only, and the evidence plane inside the command.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import click

from affidavit.cli.output import print_json, warn
from affidavit.cli.params import parse_pack_args

HELP = """Verify a pack as a host would, and print the report.

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


def _read_at(value: str) -> datetime:
    """``--at``'s UTC instant; UsageError when it is not one."""
    from affidavit.core.errors import UsageError
    from affidavit.packs import PackFormatError
    from affidavit.packs import format as fmt

    try:
        return fmt.parse_utc(value)
    except PackFormatError as exc:
        raise UsageError(f"--at {exc.message}") from exc


def _proof_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """How many records carry a ``proof`` (a memory's evidence, proven in the vault the pack
    was built from: docs/evidence.md) and of which kinds; ``None`` when none does. It is the
    signer's statement, covered by the signature like every byte, not re-checked here."""
    proofs = [r["proof"] for r in records if isinstance(r.get("proof"), dict)]
    if not proofs:
        return None
    kinds: dict[str, int] = {}
    for proof in proofs:
        for item in proof.get("items") or []:
            kind = str(item.get("type")) if isinstance(item, dict) else "?"
            kinds[kind] = kinds.get(kind, 0) + 1
    return {"records": len(proofs), "items": dict(sorted(kinds.items()))}


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
    proof = report.get("proof")
    if proof:
        items = ", ".join(f"{n} {kind}" for kind, n in proof["items"].items())
        rows.append(("proof", f"{proof['records']} records carry proof ({items})"))
    lines = [f"pack verified: {report['pack']}"]
    lines += [f"  {label:<16} {value}" for label, value in rows]
    return "\n".join(lines) + "\n"


@click.command(
    "verify",
    help=HELP,
    options_metavar=USAGE,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.pass_context
def verify(ctx: click.Context) -> None:
    """Verify the pack named on the command line; print the report; PackRefused when refused."""
    from affidavit.packs import PackRefused, refusal_dict, verify_pack

    options, pack_dir, at, as_json = parse_pack_args(list(ctx.args), "verify", "--at", _read_at)
    try:
        verified = verify_pack(pack_dir, options, at=at)
    except PackRefused as exc:
        if as_json:
            print_json(refusal_dict(pack_dir, exc))
        raise
    for message in verified.warnings:
        warn(message)
    report = verified.as_dict()
    proof = _proof_summary(verified.records)
    if proof is not None:
        report["proof"] = proof
    if as_json:
        print_json(report)
    else:
        sys.stdout.write(_human(report))

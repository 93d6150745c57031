"""Check a pack: a zip upload or a folder on this machine, judged by ``packs.verify``.

The page shows every check of the ordered verification (passed, failed, not reached, or not
applicable), the signer and trust status, freshness, and the JSON ``affidavit pack verify
--json`` prints for the same pack and flags: the verdict comes from the same call, nothing is
judged here. The trust flags are read by the same parser as the command line.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from affidavit.console.context import Console, Section, notice
from affidavit.console.forms import local_path, read_form, text, upload
from affidavit.console.html import Markup, join, tag
from affidavit.console.widgets import card, choice, field, post_form
from affidavit.core.errors import AffidavitError, UsageError
from affidavit.packs import Check

if TYPE_CHECKING:
    from affidavit.packs import PackRefused, TrustOptions, VerifiedPack

SLUG = "pack-check"
PASSED, FAILED, NOT_REACHED, NOT_APPLICABLE = "passed", "failed", "not reached", "not applicable"
CHECK_TITLES = {
    Check.FILES: ("Files", "only pack files, each a regular file within its size limit"),
    Check.CHECKSUMS: ("Checksums", "SHA256SUMS matches every sealed file"),
    Check.RECORDS: ("Records", "every record and citation is well formed"),
    Check.PACK_JSON: ("PACK.json", "PACK.json, if there is one, is well formed"),
    Check.SIGNATURE: ("Signature", "a signature, if there is one, is a valid Ed25519 SSHSIG"),
    Check.TRUST: ("Trust", "the signer is not revoked, and is pinned or trusted as required"),
    Check.SEQUENCE: ("Sequence", "the signed sequence reaches the minimum, if one is set"),
    Check.EXPIRY: ("Expiry", "with strict, the pack is within its dates"),
}
"""Each check's name and what passing it means."""
_FLAG_FIELDS = (
    ("trusted_fingerprint", "--trusted-fingerprint"),
    ("trusted_keys", "--trusted-keys"),
    ("revoked_keys", "--revoked-keys"),
    ("min_sequence", "--min-sequence"),
)
_BOOL_FIELDS = (("require_signature", "--require-signature"), ("strict", "--strict"))


def trust_args(form: Any) -> list[str]:
    """The form's trust settings as the command-line flags ``pack verify`` reads."""
    args = [f"{flag}={text(form, name)}" for name, flag in _FLAG_FIELDS if text(form, name)]
    args += [flag for name, flag in _BOOL_FIELDS if text(form, name)]
    return args


def _at(value: str) -> datetime | None:
    if not value:
        return None
    from affidavit.packs import PackFormatError
    from affidavit.packs import format as fmt

    try:
        return fmt.parse_utc(value)
    except PackFormatError as exc:
        raise UsageError(f"--at {exc.message}") from exc


def _passed_detail(check: Check, verified: VerifiedPack, options: TrustOptions) -> tuple[str, str]:
    """(status, what the check established) for a check the pack passed."""
    report, meta = verified.report, verified.report.meta
    signature = report.signature
    if check is Check.FILES:
        return PASSED, CHECK_TITLES[check][1]
    if check is Check.CHECKSUMS:
        return PASSED, f"SHA256SUMS matches all {len(report.digests)} sealed files"
    if check is Check.RECORDS:
        return PASSED, f"{report.record_count} records, every citation well formed"
    if check is Check.PACK_JSON:
        if meta is None:
            return NOT_APPLICABLE, "no PACK.json: the pack carries no dates"
        sequence = f", sequence {meta.sequence}" if meta.sequence is not None else ""
        return PASSED, f"created {meta.created_utc}, expires {meta.expires_utc}{sequence}"
    if check is Check.SIGNATURE:
        if signature.hash_algorithm is None:
            return NOT_APPLICABLE, "no SHA256SUMS.sig: the pack is unsigned"
        return (
            PASSED,
            f"valid Ed25519 signature ({signature.hash_algorithm}) by {signature.fingerprint}",
        )
    if check is Check.TRUST:
        return PASSED, _trust_text(verified)
    if check is Check.SEQUENCE:
        if options.min_sequence is None:
            return NOT_APPLICABLE, "no minimum sequence set"
        return PASSED, f"sequence {meta.sequence if meta else None} >= {options.min_sequence}"
    freshness = report.freshness(report.judged_at)
    if not options.strict:
        return NOT_APPLICABLE, f"not enforced without strict; freshness is {freshness['status']}"
    judged = report.as_dict()["judged_at"]
    return PASSED, f"fresh at {judged}: expires {freshness['expires_utc']}"


def _trust_text(verified: VerifiedPack) -> str:
    signature = verified.report.signature
    if signature.status == "verified" and signature.pinned:
        return f"signed by {signature.fingerprint}, a pinned signer"
    if signature.status == "verified":
        return f"signed by {signature.signer} ({signature.fingerprint}), a trusted key"
    if signature.status == "untrusted":
        return f"signed by {signature.fingerprint}, a key this check does not trust (not required)"
    return "unsigned, and no signature is required"


def check_rows(
    verified: VerifiedPack | None, refusal: PackRefused | None, options: TrustOptions
) -> list[tuple[Check, str, str]]:
    """(check, status, detail) for every check in the order verification runs them."""
    checks = list(Check)
    rows: list[tuple[Check, str, str]] = []
    failed_at = checks.index(refusal.check) if refusal is not None else len(checks)
    for index, check in enumerate(checks):
        if index > failed_at:
            rows.append((check, NOT_REACHED, ""))
        elif index == failed_at:
            assert refusal is not None
            rows.append((check, FAILED, str(refusal).removeprefix("pack refused: ")))
        elif verified is not None:
            rows.append((check, *_passed_detail(check, verified, options)))
        else:
            rows.append((check, PASSED, CHECK_TITLES[check][1]))
    return rows


@dataclass(frozen=True)
class Judgement:
    """A pack's verdict: the rows of the checks table and the ``pack verify --json`` report."""

    rows: list[tuple[Check, str, str]]
    report: dict[str, Any]

    @property
    def verified(self) -> bool:
        """Whether the pack passed every check."""
        return bool(self.report["verified"])


def judge(pack_dir: Path, options: TrustOptions, at: datetime | None) -> Judgement:
    """Verify the pack exactly as ``affidavit pack verify`` does."""
    from affidavit.packs import PackRefused, refusal_dict, verify_pack

    try:
        verified = verify_pack(pack_dir, options, at=at)
    except PackRefused as exc:
        return Judgement(check_rows(None, exc, options), refusal_dict(pack_dir, exc))
    return Judgement(check_rows(verified, None, options), verified.as_dict())


def _status_cell(status: str) -> Markup:
    return tag("span", status, class_=f"status {status.replace(' ', '-')}")


def _result(outcome: Judgement, name: str) -> Markup:
    report = outcome.report
    table = tag(
        "table",
        tag(
            "thead",
            tag("tr", tag("th", "#"), tag("th", "check"), tag("th", "result"), tag("th", "detail")),
        ),
        tag(
            "tbody",
            [
                tag(
                    "tr",
                    tag("td", index),
                    tag("td", CHECK_TITLES[check][0]),
                    tag("td", _status_cell(status)),
                    tag("td", detail),
                    data_check=check,
                    data_status=status,
                )
                for index, (check, status, detail) in enumerate(outcome.rows, start=1)
            ],
        ),
        class_="checks",
    )
    if not outcome.verified:
        banner = notice("error", tag("strong", "REFUSED"), f" — {report['error']}")
        facts: Markup = join()
    else:
        signature, freshness = report["signature"], report["freshness"]
        banner = notice(
            "ok",
            tag("strong", "VERIFIED"),
            f" — {report['records']} records; this pack would be served",
        )
        facts = tag(
            "dl",
            _fact("signature", signature["status"]),
            _fact("signer", signature["signer"] or "—"),
            _fact("fingerprint", signature["fingerprint"] or "—"),
            _fact("pinned", "yes" if signature["pinned"] else "no"),
            _fact("freshness", freshness["status"]),
            _fact("created", freshness["created_utc"] or "—"),
            _fact("expires", freshness["expires_utc"] or "—"),
            _fact("sequence", freshness["sequence"] if freshness["sequence"] is not None else "—"),
            _fact("dates authenticated", "yes" if freshness["authenticated"] else "no"),
            _fact("judged at", report["judged_at"]),
            _fact("manifest sha256", report["manifest_sha256"]),
            class_="facts",
        )
    warnings = [notice("warn", message) for message in report.get("warnings", [])]
    raw = tag(
        "details",
        tag("summary", "As `affidavit pack verify --json` prints it"),
        tag("pre", json.dumps(report, ensure_ascii=False, indent=2)),
    )
    return card(tag("h2", f"Result for {name}"), banner, warnings, facts, table, raw, id="result")


def _fact(label: str, value: str | int) -> Markup:
    return join(tag("dt", label), tag("dd", value))


def _form(sent: FormData | None) -> Markup:
    """The form, holding what was last sent (except the upload)."""

    def kept(label: str, name: str, placeholder: str) -> Markup:
        return field(label, name, placeholder, (text(sent, name) if sent else "") or None)

    def ticked(label: str, name: str) -> Markup:
        return choice(label, name, on=bool(sent and text(sent, name)))

    zip_input = tag("input", type="file", name="pack_zip", accept=".zip,application/zip")
    return post_form(
        f"/{SLUG}/",
        "Check the pack",
        tag(
            "fieldset",
            tag("legend", "The pack"),
            tag("label", "Zip file", zip_input),
            tag("p", "or", class_="or"),
            kept("Folder on this machine", "pack_dir", "/path/to/pack"),
        ),
        tag(
            "fieldset",
            tag("legend", "Trust (the flags of pack verify; all optional)"),
            tag(
                "div",
                kept("Trusted fingerprint(s)", "trusted_fingerprint", "SHA256:..."),
                kept("Trusted keys file", "trusted_keys", "/path/to/allowed_signers"),
                kept("Revoked keys file", "revoked_keys", "/path/to/revoked"),
                kept("Minimum sequence", "min_sequence", "e.g. 3"),
                kept("Judge freshness at (UTC)", "at", "2026-10-12T18:00:00Z"),
                class_="grid2",
            ),
            ticked("Require a trusted signature", "require_signature"),
            ticked("Strict: require an unexpired PACK.json", "strict"),
        ),
        upload=True,
    )


def section(console: Console) -> Section:
    """The pack checker."""

    def show(
        result: Markup | None = None, sent: FormData | None = None, status: int = 200
    ) -> HTMLResponse:
        intro = tag(
            "p",
            "Drop a pack (as a zip) or name its folder: every check runs in order, exactly as "
            "`affidavit pack verify` runs them.",
            class_="lead",
        )
        return console.page(
            "Check a pack",
            [tag("h1", "Check a pack"), intro, result, card(_form(sent))],
            active=SLUG,
            status=status,
        )

    async def index(request: Request) -> HTMLResponse:
        return show()

    async def check(request: Request) -> HTMLResponse:
        scratch: Path | None = None
        form: FormData | None = None
        try:
            form = await read_form(request)
            from affidavit.packs import parse_trust_args

            options, rest = parse_trust_args(trust_args(form))
            assert not rest
            at = _at(text(form, "at"))
            zipped, folder = upload(form, "pack_zip"), text(form, "pack_dir")
            if (zipped is None) == (not folder):
                raise UsageError("give either a zip file or a folder, not both or neither")
            if zipped is not None:
                from affidavit.console.uploads import extract_pack_zip

                scratch = console.scratch("check-")
                pack_dir = await run_in_threadpool(extract_pack_zip, zipped.file, scratch / "pack")
                name = zipped.filename or "the upload"
            else:
                pack_dir, name = local_path("the folder", folder), folder
            outcome = await run_in_threadpool(judge, pack_dir, options, at)
        except AffidavitError as exc:
            return show(notice("error", str(exc)), form, status=400)
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
        return show(_result(outcome, name), form)

    return Section(
        slug=SLUG,
        title="Check a pack",
        summary="Verify a pack folder or zip: every ordered check, signer, trust and freshness.",
        routes=[Route("/", index), Route("/", check, methods=["POST"])],
    )

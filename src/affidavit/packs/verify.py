"""Pack verification: one ordered list of checks, each refusal one specific message.

1. files, checksums, records (:mod:`affidavit.packs.reading`);
2. the signature, if present, is a valid Ed25519 SSHSIG over SHA256SUMS;
3. revoked, then pinned, then trusted (verified / untrusted / unsigned);
4. the signed sequence against ``--min-sequence``;
5. expiry under ``--strict``.

The first failing check decides the message, so a tampered pack is always reported as
tampered, never as "untrusted". Freshness outside ``--strict`` is reported, not enforced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from affidavit.packs import format as fmt
from affidavit.packs.errors import (
    Check,
    PackRefused,
    PackTrustRefused,
)
from affidavit.packs.reading import PackContents, read_pack
from affidavit.packs.snapshot import PackSnapshot
from affidavit.packs.trust import TrustAnchors, TrustOptions, load_anchors

VERIFIED, UNTRUSTED, UNSIGNED = "verified", "untrusted", "unsigned"
FRESH, STALE, NOT_YET_VALID, UNKNOWN = "fresh", "stale", "not_yet_valid", "unknown"
DEFAULT_TRUST = TrustOptions()
_TRUST_HINT = (
    "trust only keys you know: pin the signer with --trusted-fingerprint "
    "or list it in --trusted-keys"
)


@dataclass(frozen=True)
class SignatureReport:
    """Who signed the pack, as far as this host's trust settings can say."""

    status: str
    signer: str | None = None
    fingerprint: str | None = None
    pinned: bool = False
    hash_algorithm: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The ``verification.signature`` object of the reference."""
        return {
            "status": self.status,
            "signer": self.signer,
            "fingerprint": self.fingerprint,
            "pinned": self.pinned,
        }


def freshness_status(meta: fmt.PackMeta | None, now: datetime) -> str:
    """fresh / stale / not_yet_valid / unknown for the pack's dates, judged at ``now``."""
    if meta is None:
        return UNKNOWN
    if now >= meta.expires:
        return STALE
    if meta.created > now + fmt.FUTURE_SKEW:
        return NOT_YET_VALID
    return FRESH


@dataclass(frozen=True)
class VerificationReport:
    """What verification established, for ``pack verify`` and every tool result."""

    pack: Path
    record_count: int
    manifest_sha256: str
    digests: dict[str, str]
    signature: SignatureReport
    meta: fmt.PackMeta | None
    judged_at: datetime

    @property
    def authenticated(self) -> bool:
        """The dates count only when a key the host trusts signed them."""
        return self.signature.status == VERIFIED and self.meta is not None

    def freshness(self, now: datetime) -> dict[str, Any]:
        """The ``verification.freshness`` object of the reference, judged at ``now``."""
        meta = self.meta
        return {
            "status": freshness_status(meta, now),
            "created_utc": meta.created_utc if meta else None,
            "expires_utc": meta.expires_utc if meta else None,
            "sequence": meta.sequence if meta else None,
            "authenticated": self.authenticated,
        }

    def as_dict(self) -> dict[str, Any]:
        """The full report printed by ``pack verify --json``."""
        return {
            "pack": str(self.pack),
            "verified": True,
            "records": self.record_count,
            "manifest_sha256": self.manifest_sha256,
            "signature": {
                **self.signature.as_dict(),
                "hash_algorithm": self.signature.hash_algorithm,
            },
            "freshness": self.freshness(self.judged_at),
            "judged_at": fmt.format_utc(self.judged_at),
            "files": dict(sorted(self.digests.items())),
        }


def _now(moment: datetime | None = None) -> datetime:
    """``moment`` as an aware UTC time (naive times are taken as UTC); default now."""
    if moment is None:
        return datetime.now(UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _expiry_refusal(meta: fmt.PackMeta | None, now: datetime) -> PackRefused | None:
    status = freshness_status(meta, now)
    if meta is None:
        return PackRefused(
            Check.EXPIRY,
            "pack has no PACK.json, so no expiry date, and --strict requires one",
            "sign it with `affidavit pack sign --expires 90d`",
        )
    if status == STALE:
        return PackRefused(
            Check.EXPIRY,
            f"pack expired at {meta.expires_utc} (judged at {fmt.format_utc(now)})",
            "install a newer pack from its signer",
        )
    if status == NOT_YET_VALID:
        return PackRefused(
            Check.EXPIRY,
            f"pack was created at {meta.created_utc}, more than 5 minutes after "
            f"{fmt.format_utc(now)}",
            "check this computer's clock, or wait until the pack becomes valid",
        )
    return None


@dataclass(frozen=True)
class VerifiedPack:
    """A pack that passed every check, with what a server needs to keep serving it."""

    path: Path
    records: tuple[dict[str, Any], ...]
    report: VerificationReport
    snapshot: PackSnapshot
    warnings: tuple[str, ...]
    trust: TrustOptions = field(default_factory=TrustOptions)

    def verification(self, now: datetime | None = None) -> dict[str, Any]:
        """The ``verification`` object every tool result carries, freshness judged at ``now``."""
        return {
            "signature": self.report.signature.as_dict(),
            "freshness": self.report.freshness(_now(now)),
        }

    def as_dict(self) -> dict[str, Any]:
        """What ``pack verify --json`` prints for a pack that passed: the report and warnings."""
        return {**self.report.as_dict(), "warnings": list(self.warnings)}

    def recheck_expiry(self, now: datetime | None = None) -> None:
        """Under ``--strict``, refuse once the pack has expired (or is not yet valid)."""
        if self.trust.strict:
            refusal = _expiry_refusal(self.report.meta, _now(now))
            if refusal is not None:
                raise refusal


def refusal_dict(pack_dir: Path, refusal: PackRefused) -> dict[str, Any]:
    """What ``pack verify --json`` prints for a refused pack: the failed check and why."""
    return {"pack": str(pack_dir), "verified": False, "check": refusal.check, "error": str(refusal)}


def _check_signature(contents: PackContents) -> tuple[str, str] | None:
    """Check 2: a present signature must be a valid Ed25519 SSHSIG; return (fp, hash)."""
    armored = contents.files.get(fmt.SIGNATURE)
    if armored is None:
        return None
    from affidavit.crypto.sshsig import SignatureError, verify

    try:
        signature = verify(armored, contents.files[fmt.SUMS], fmt.NAMESPACE)
    except SignatureError as exc:
        raise PackRefused(
            Check.SIGNATURE,
            f"{fmt.SIGNATURE}: {exc.message}",
            # Not "sign it again": the edit after signing may be an attacker's.
            exc.hint or "get a correctly signed copy from its signer",
        ) from exc
    return signature.public_key.fingerprint, signature.hash_algorithm


def _check_trust(
    signed: tuple[str, str] | None, anchors: TrustAnchors, options: TrustOptions
) -> SignatureReport:
    """Check 3: revoked, then pinned, then trusted."""
    if signed is None:
        if anchors.pins:
            raise PackTrustRefused(
                Check.TRUST, "pack is unsigned, but a signer fingerprint is pinned"
            )
        if options.signature_required:
            raise PackTrustRefused(
                Check.TRUST, "pack is unsigned, but a trusted signature is required"
            )
        return SignatureReport(UNSIGNED)
    fingerprint, hash_algorithm = signed
    if fingerprint in anchors.revoked:
        raise PackTrustRefused(
            Check.TRUST,
            f"pack is signed by {fingerprint}, which is revoked",
            "get a pack signed by a key you still trust",
        )
    if anchors.pins:
        if fingerprint not in anchors.pins:
            raise PackTrustRefused(
                Check.TRUST,
                f"pack is signed by {fingerprint}, which is not a pinned signer fingerprint",
                "only a pinned signer passes, even one listed in --trusted-keys",
            )
        name = anchors.names.get(fingerprint, "pinned")
        return SignatureReport(VERIFIED, name, fingerprint, True, hash_algorithm)
    if fingerprint in anchors.names:
        name = anchors.names[fingerprint]
        return SignatureReport(VERIFIED, name, fingerprint, False, hash_algorithm)
    if options.signature_required:
        raise PackTrustRefused(
            Check.TRUST, f"pack is signed by {fingerprint}, which is not a trusted key", _TRUST_HINT
        )
    return SignatureReport(UNTRUSTED, None, fingerprint, False, hash_algorithm)


def _check_sequence(meta: fmt.PackMeta | None, options: TrustOptions) -> None:
    """Check 4: the signed sequence must reach ``--min-sequence``."""
    minimum = options.min_sequence
    if minimum is None:
        return
    sequence = meta.sequence if meta is not None else None
    if sequence is None:
        raise PackRefused(
            Check.SEQUENCE,
            f"pack has no signed sequence, but --min-sequence {minimum} is set",
            "sign it with `affidavit pack sign --sequence N`",
        )
    if sequence < minimum:
        raise PackRefused(
            Check.SEQUENCE,
            f"pack sequence {sequence} is lower than the minimum {minimum}; "
            "refusing a possible rollback to an older pack",
        )


def _warnings(report: VerificationReport, now: datetime) -> tuple[str, ...]:
    meta = report.meta
    status = freshness_status(meta, now)
    if meta is not None and status == STALE:
        return (f"pack expired at {meta.expires_utc}; serving it as stale",)
    if meta is not None and status == NOT_YET_VALID:
        return (
            f"pack created_utc {meta.created_utc} is more than 5 minutes in the future; "
            "serving it as not_yet_valid",
        )
    return ()


def verify_pack(
    pack_dir: Path, trust: TrustOptions = DEFAULT_TRUST, *, at: datetime | None = None
) -> VerifiedPack:
    """Run every check in order; return the verified pack or raise :class:`PackRefused`.

    ``at`` judges freshness at another instant ("was this pack valid then?"); it defaults to
    now. The trust files are read here, once. Configuration errors raise ``UsageError`` or
    ``InputError`` before the pack is read.
    """
    anchors = load_anchors(trust)
    contents = read_pack(pack_dir)
    signature = _check_trust(_check_signature(contents), anchors, trust)
    _check_sequence(contents.meta, trust)
    now = _now(at)
    if trust.strict:
        refusal = _expiry_refusal(contents.meta, now)
        if refusal is not None:
            raise refusal
    report = VerificationReport(
        pack=contents.path,
        record_count=len(contents.records),
        manifest_sha256=contents.manifest_sha256,
        digests=contents.digests,
        signature=signature,
        meta=contents.meta,
        judged_at=now,
    )
    return VerifiedPack(
        path=contents.path,
        records=contents.records,
        report=report,
        snapshot=contents.snapshot,
        warnings=_warnings(report, now),
        trust=trust,
    )

"""The trust flags as a host passes them: every spelling, empty = off, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.core.errors import UsageError
from affidavit.packs.trust import TrustOptions, parse_trust_args

FP_A = "SHA256:lB0CTdLDVVD2zR2zkMwDa9E81+xxhYKm/+GgsmV/xps"
FP_B = "SHA256:YZUj5kdcWJDojPhylobcWNBodAd9u2Ju2IifVEXiHaE"


def test_no_flags_is_all_off() -> None:
    assert parse_trust_args([]) == (TrustOptions(), [])


def test_space_and_equals_forms() -> None:
    options, rest = parse_trust_args(
        [
            "--trusted-keys",
            "/etc/keys",
            f"--trusted-fingerprint={FP_A}",
            "--revoked-keys=/etc/revoked",
            "--min-sequence",
            "3",
            "--require-signature",
            "--strict=true",
        ]
    )
    assert rest == []
    assert options == TrustOptions(
        trusted_keys=Path("/etc/keys"),
        trusted_fingerprints=(FP_A,),
        revoked_keys=Path("/etc/revoked"),
        min_sequence=3,
        require_signature=True,
        strict=True,
    )
    assert parse_trust_args(options.as_args())[0] == options


def test_fingerprints_repeat_and_comma_separate_and_deduplicate() -> None:
    options, _ = parse_trust_args(
        [f"--trusted-fingerprint={FP_A}, {FP_B}", "--trusted-fingerprint", FP_A]
    )
    assert options.trusted_fingerprints == (FP_A, FP_B)


@pytest.mark.parametrize(
    "flag",
    [
        "--trusted-keys=",
        "--trusted-fingerprint=",
        "--revoked-keys=",
        "--min-sequence=",
        "--require-signature=",
        "--strict=",
        "--require-signature=false",
        "--strict=false",
    ],
)
def test_empty_value_means_off(flag: str) -> None:
    assert parse_trust_args([flag]) == (TrustOptions(), [])


def test_unknown_arguments_are_returned_in_order() -> None:
    options, rest = parse_trust_args(["--pack=/p", "--strict", "--json", "DIR", "--strictness"])
    assert options.strict
    assert rest == ["--pack=/p", "--json", "DIR", "--strictness"]


def test_boolean_takes_no_separate_value() -> None:
    options, rest = parse_trust_args(["--strict", "false"])
    assert options.strict and rest == ["false"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trusted-keys", "keys"], "--trusted-keys keys is a relative path"),
        (["--revoked-keys=./revoked"], "is a relative path"),
        (["--trusted-keys"], "--trusted-keys needs a value"),
        (["--trusted-keys", "--strict"], "--trusted-keys needs a value"),
        (["--min-sequence", "-1"], "--min-sequence '-1' is not a whole number >= 0"),
        (["--min-sequence=three"], "'three' is not a whole number"),
        (["--min-sequence=1.5"], "is not a whole number"),
        (["--min-sequence=٣"], "is not a whole number"),
        (["--strict=yes"], "--strict=yes is not true or false"),
        (["--require-signature=1"], "is not true or false"),
        (["--trusted-fingerprint=MD5:aa"], "'MD5:aa' is not a SHA256 fingerprint"),
        ([f"--trusted-fingerprint={FP_A}x"], "is not a SHA256 fingerprint"),
        (["--strict", "--strict=false"], "--strict is given twice"),
        (["--trusted-keys=/a", "--trusted-keys=/b"], "--trusted-keys is given twice"),
        (["--min-sequence=1", "--min-sequence", "2"], "--min-sequence is given twice"),
    ],
)
def test_refusals(args: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_trust_args(args)


@pytest.mark.parametrize(
    ("options", "required"),
    [
        (TrustOptions(), False),
        (TrustOptions(revoked_keys=Path("/r")), False),
        (TrustOptions(trusted_keys=Path("/k")), False),
        (TrustOptions(require_signature=True), True),
        (TrustOptions(strict=True), True),
        (TrustOptions(min_sequence=0), True),
        (TrustOptions(trusted_fingerprints=(FP_A,)), True),
    ],
)
def test_what_requires_a_signature(options: TrustOptions, required: bool) -> None:
    assert options.signature_required is required

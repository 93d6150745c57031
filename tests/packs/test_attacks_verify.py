"""The red-team attacks that verification must refuse, each as a real pack on disk."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from affidavit.core.errors import InputError
from affidavit.packs import format as fmt
from affidavit.packs.errors import PackRefused
from affidavit.packs.trust import TrustOptions
from affidavit.packs.verify import verify_pack
from tests.packs.conftest import (
    SshKey,
    keygen_sign,
    make_record,
    pack_json,
    reseal,
    trusted_keys_file,
    write_pack,
)
from tests.support import run_cli


def refusal(pack: Path, trust: TrustOptions, **kw) -> str:
    with pytest.raises(PackRefused) as caught:
        verify_pack(pack, trust, **kw)
    return str(caught.value)


@pytest.fixture
def signed(tmp_path: Path, ssh_key: SshKey) -> Path:
    pack = write_pack(tmp_path / "signed", pack_json=pack_json(sequence=3))
    keygen_sign(pack, ssh_key)
    return pack


@pytest.fixture
def pinned(ssh_key: SshKey) -> TrustOptions:
    return TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,), strict=True)


def poison(pack: Path) -> None:
    """Swap a remembered fact, the attack the product exists to stop."""
    records = pack / fmt.RECORDS
    records.write_text(
        records.read_text().replace("seedlings on Saturdays", "seedlings on Thursdays")
    )


def test_signed_pack_passes_the_pinned_strict_host(signed: Path, pinned: TrustOptions) -> None:
    assert verify_pack(signed, pinned).report.signature.status == "verified"


def test_data_file_edited(signed: Path, pinned: TrustOptions) -> None:
    poison(signed)
    assert "records.jsonl does not match its SHA256SUMS checksum" in refusal(signed, pinned)
    assert "records.jsonl does not match" in refusal(signed, TrustOptions())


def test_resealed_without_re_signing(signed: Path, pinned: TrustOptions) -> None:
    poison(signed)
    reseal(signed)
    message = refusal(signed, TrustOptions())
    assert "SHA256SUMS.sig: signature by SHA256:" in message
    assert "does not match the signed data" in message


def test_dates_extended_and_resealed(signed: Path, pinned: TrustOptions) -> None:
    (signed / fmt.PACK_JSON).write_text(json.dumps(pack_json(expires="2199-01-01T00:00:00Z")))
    reseal(signed)
    assert "does not match the signed data" in refusal(signed, pinned)


def test_attacker_re_signs_and_lists_own_key_while_pinned(
    signed: Path, ssh_key: SshKey, keygen, tmp_path: Path
) -> None:
    attacker = keygen("attacker")
    poison(signed)
    reseal(signed)
    (signed / fmt.SIGNATURE).unlink()
    keygen_sign(signed, attacker)
    keys = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key), ("alice", attacker))
    # Without a pin, a writable trusted-keys file is enough for the attacker...
    fooled = verify_pack(signed, TrustOptions(trusted_keys=keys))
    assert fooled.report.signature.status == "verified"
    # ...with the pin in the host's own configuration it is not.
    pinned = TrustOptions(trusted_keys=keys, trusted_fingerprints=(ssh_key.fingerprint,))
    assert (
        f"pack is signed by {attacker.fingerprint}, which is not a pinned signer fingerprint"
        in refusal(signed, pinned)
    )


def test_signature_stripped_under_a_pin(signed: Path, pinned: TrustOptions) -> None:
    (signed / fmt.SIGNATURE).unlink()
    assert "pack is unsigned, but a signer fingerprint is pinned" in refusal(signed, pinned)


def test_signature_copied_from_another_pack_by_the_same_key(
    signed: Path, tmp_path: Path, ssh_key: SshKey, pinned: TrustOptions
) -> None:
    other = write_pack(tmp_path / "other", [make_record(7)], pack_json=pack_json(sequence=3))
    shutil.copy(signed / fmt.SIGNATURE, other / fmt.SIGNATURE)
    assert "does not match the signed data" in refusal(other, pinned)


def test_signature_from_another_namespace(tmp_path: Path, ssh_key: SshKey, pinned) -> None:
    pack = write_pack(tmp_path / "git-signed", pack_json=pack_json())
    keygen_sign(pack, ssh_key, namespace="git")
    assert "signature namespace is 'git', not 'verified-memory-pack-v1'" in refusal(pack, pinned)


def test_rollback_below_min_sequence(signed: Path, ssh_key: SshKey) -> None:
    trust = TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,), min_sequence=5)
    assert (
        "pack sequence 3 is lower than the minimum 5; refusing a possible rollback to an older pack"
        in refusal(signed, trust)
    )


def test_revoked_key_even_when_pinned_and_trusted(
    signed: Path, ssh_key: SshKey, tmp_path: Path
) -> None:
    revoked = tmp_path / "revoked_keys"
    revoked.write_text(f"# laptop lost\n{ssh_key.fingerprint} old laptop\n")
    keys = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key))
    for trust in (
        TrustOptions(revoked_keys=revoked),
        TrustOptions(revoked_keys=revoked, trusted_keys=keys),
        TrustOptions(revoked_keys=revoked, trusted_fingerprints=(ssh_key.fingerprint,)),
    ):
        assert f"pack is signed by {ssh_key.fingerprint}, which is revoked" in refusal(
            signed, trust
        )


def test_expired_and_future_packs_under_strict(tmp_path: Path, ssh_key: SshKey, pinned) -> None:
    expired = write_pack(tmp_path / "expired", pack_json=pack_json(expires="2026-02-01T00:00:00Z"))
    keygen_sign(expired, ssh_key)
    assert "pack expired at 2026-02-01T00:00:00Z" in refusal(expired, pinned)
    future = write_pack(tmp_path / "future", pack_json=pack_json(created="2098-01-01T00:00:00Z"))
    keygen_sign(future, ssh_key)
    assert "pack was created at 2098-01-01T00:00:00Z, more than 5 minutes after" in refusal(
        future, pinned
    )
    # A faked clock on the host is the host's own configuration: --at shows it would have passed.
    assert verify_pack(future, pinned, at=datetime(2098, 6, 1, tzinfo=UTC))


@pytest.mark.parametrize("kind", ["ecdsa", "rsa"])
def test_ecdsa_and_rsa_signers(tmp_path: Path, keygen, kind: str) -> None:
    key = keygen(f"{kind}-signer", kind)
    pack = write_pack(tmp_path / "pack", pack_json=pack_json())
    keygen_sign(pack, key)
    assert "only Ed25519 signers are accepted" in refusal(pack, TrustOptions())
    keys = trusted_keys_file(tmp_path / "trusted", ("alice", key))
    with pytest.raises(InputError, match="only single-name ssh-ed25519 entries"):
        verify_pack(pack, TrustOptions(trusted_keys=keys))


def test_symlinked_entry(signed: Path, tmp_path: Path, pinned: TrustOptions) -> None:
    outside = tmp_path / "outside.md"
    shutil.copy(signed / fmt.MEMORY, outside)
    (signed / fmt.MEMORY).unlink()
    (signed / fmt.MEMORY).symlink_to(outside)
    assert "MEMORY.md is a symlink" in refusal(signed, pinned)


def test_symlinked_root(signed: Path, tmp_path: Path, pinned: TrustOptions) -> None:
    link = tmp_path / "link"
    link.symlink_to(signed)
    assert f"pack directory {link} is a symlink" in refusal(link, pinned)


def test_signature_symlink_is_refused(signed: Path, tmp_path: Path) -> None:
    real = tmp_path / "sig"
    shutil.move(signed / fmt.SIGNATURE, real)
    (signed / fmt.SIGNATURE).symlink_to(real)
    assert "SHA256SUMS.sig is a symlink" in refusal(signed, TrustOptions())


def test_five_thousand_file_flood(signed: Path, home: Path, ssh_key: SshKey) -> None:
    for index in range(5000):
        (signed / f"flood-{index:04d}.md").write_bytes(b"")
    done = run_cli(
        ["pack", "verify", str(signed), f"--trusted-fingerprint={ssh_key.fingerprint}"], home
    )
    assert done.returncode == 5
    assert done.stderr.count("\n") == 1
    assert "pack directory has 5006 entries; a pack holds at most 6 files" in done.stderr


def test_tampering_is_reported_before_trust(signed: Path, keygen, tmp_path: Path) -> None:
    stranger = keygen("stranger")
    (signed / fmt.SIGNATURE).unlink()
    keygen_sign(signed, stranger)
    poison(signed)
    keys = trusted_keys_file(tmp_path / "trusted", ("nobody", keygen("nobody")))
    # Both tampered and untrusted: the first failing check (checksums) gives the message.
    assert "records.jsonl does not match" in refusal(
        signed, TrustOptions(trusted_keys=keys, strict=True)
    )

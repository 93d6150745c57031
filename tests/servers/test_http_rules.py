"""The HTTP gate's rules on their own: addresses, exposure, the token file, the rate bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.core.errors import UsageError
from affidavit.servers.http import FileToken, HttpOptions, OpenRequests, RateLimit, parse_address


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("[::1]:0", ("::1", 0)),
        ("localhost:1", ("localhost", 1)),
    ],
)
def test_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["8765", ":8765", "host:", "host:http", "host:70000"])
def test_bad_addresses(text: str) -> None:
    with pytest.raises(UsageError, match="HOST:PORT"):
        parse_address(text)


def test_exposure(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("x")
    HttpOptions("127.0.0.1", 0).check()
    HttpOptions("::1", 0).check()
    HttpOptions("10.0.0.5", 0, allow_remote=True, tls_cert=cert, tls_key=key).check()
    HttpOptions("10.0.0.6", 0, allow_remote=True, insecure_http=True).check()
    with pytest.raises(UsageError, match="--allow-remote"):
        HttpOptions("10.0.0.7", 0, tls_cert=cert, tls_key=key).check()
    with pytest.raises(UsageError, match="in clear"):
        HttpOptions("192.168.1.2", 0, allow_remote=True).check()
    with pytest.raises(UsageError, match="go together"):
        HttpOptions("127.0.0.1", 0, tls_cert=cert).check()
    with pytest.raises(UsageError, match="not a readable file"):
        HttpOptions("127.0.0.1", 0, tls_cert=tmp_path / "no", tls_key=key).check()


def test_token_file(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("s3cret-token-value-0123456789\n")
    path.chmod(0o600)
    auth = FileToken(path, "pack")
    assert auth.caller_for("s3cret-token-value-0123456789") == "pack"
    assert auth.caller_for("s3cret-token-value-012345678") is None
    path.chmod(0o640)
    with pytest.raises(UsageError, match="chmod 600"):
        FileToken(path, "pack")
    path.write_text("short\n")
    path.chmod(0o600)
    with pytest.raises(UsageError, match="16 characters") as refused:
        FileToken(path, "pack")
    assert "short" not in str(refused.value)
    with pytest.raises(UsageError, match="cannot be read"):
        FileToken(tmp_path / "missing", "pack")


def test_rate_bucket_is_per_caller() -> None:
    limit = RateLimit(1.0, 1)
    assert limit.wait("a") == 0
    assert limit.wait("b") == 0  # another caller has its own bucket
    assert 0 < limit.wait("a") <= 1.0


def test_a_bucket_holds_its_burst_and_delay_does_not_spend() -> None:
    limit = RateLimit(0.001, 3)  # refills once in 1,000 s: none during the test
    assert limit.delay("a") == 0
    assert [limit.wait("a") for _ in range(3)] == [0, 0, 0]
    assert limit.delay("a") > 0 and limit.wait("a") > 0
    assert limit.delay("b") == 0


def test_full_buckets_are_forgotten_past_the_table_limit() -> None:
    limit = RateLimit(1_000_000.0, 1)  # refills at once
    limit.MAX_KEYS = 10
    for n in range(50):
        limit.wait(f"address-{n}")
    assert len(limit._buckets) <= 11


def test_the_burst_defaults_to_ten_seconds_of_the_rate() -> None:
    assert HttpOptions("127.0.0.1", 0).burst == 1000
    assert HttpOptions("127.0.0.1", 0, rate_limit=2.5).burst == 25
    assert HttpOptions("127.0.0.1", 0, rate_limit=2.5, rate_burst=3).burst == 3


def test_open_requests_are_counted_per_caller_up_to_the_cap() -> None:
    open_requests = OpenRequests(2)
    assert open_requests.enter("a") and open_requests.enter("a")
    assert not open_requests.enter("a")
    assert open_requests.enter("b")
    open_requests.leave("a")
    assert open_requests.enter("a")

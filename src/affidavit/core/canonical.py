"""Canonical JSON: one byte string per value, so hashes and signatures are stable.

Keys sorted, no insignificant whitespace, UTF-8 kept as is (``ensure_ascii=False``),
no NaN or infinities.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """Return the canonical UTF-8 encoding of a JSON value."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def digest_json(value: Any) -> str:
    """Hex SHA-256 of the canonical encoding of ``value``."""
    return sha256_hex(canonical_json(value))

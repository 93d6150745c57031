"""The SSH wire encoding (RFC 4251 ``string`` and ``uint32``), read strictly.

Keys and signatures are nested length-prefixed strings. A reader that refuses short reads
and reports leftover bytes is what lets callers reject trailing data exactly as OpenSSH does.
"""

from __future__ import annotations

import struct


class WireFormatError(ValueError):
    """The bytes do not follow the SSH wire encoding (truncated or malformed)."""


class WireReader:
    """Consume SSH wire fields from a byte string, front to back."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def take(self, count: int) -> bytes:
        """The next ``count`` raw bytes."""
        end = self._pos + count
        if end > len(self._data):
            raise WireFormatError("truncated")
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def uint32(self) -> int:
        """A big-endian unsigned 32-bit integer."""
        return int(struct.unpack(">I", self.take(4))[0])

    def string(self) -> bytes:
        """A length-prefixed byte string."""
        return self.take(self.uint32())

    def text(self) -> str:
        """A length-prefixed string that must be UTF-8 (names, namespaces, algorithms)."""
        try:
            return self.string().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireFormatError("a name field is not UTF-8") from exc

    def remaining(self) -> int:
        """How many bytes are left unread."""
        return len(self._data) - self._pos


def put_string(value: bytes | str) -> bytes:
    """Encode ``value`` as an SSH ``string`` (uint32 length, then the bytes)."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return struct.pack(">I", len(raw)) + raw

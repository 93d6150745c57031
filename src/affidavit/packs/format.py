"""The verified-memory pack format: file names, limits and every record and manifest rule.

This module is the single statement of what a pack's bytes may be. It is shared by the
verifier and the builder so the two can never disagree, and it stays byte-compatible with the
verified-memory reference: the same names, the same limits, the same SHA256SUMS lines, the
same PACK.json keys. Rules raise :class:`PackFormatError` with a message that names the field.

Where the reference's reading is looser than the letter of the format, the rules read as it
does (ADR 0014): lines end in LF or CRLF and the last may lack its ending, blank record lines
are skipped, a number is whole when its value is (``2.0`` is 2, as ``JSON.parse`` reads it), and
text is empty when JavaScript's ``trim()`` leaves nothing. Where readers could disagree, the
rules refuse: a JSON object that names a key twice is refused everywhere.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import orjson

from affidavit.core.clock import utc_iso
from affidavit.packs.errors import PackFormatError

RECORDS = "records.jsonl"
MEMORY = "MEMORY.md"
README = "README.md"
SUMS = "SHA256SUMS"
PACK_JSON = "PACK.json"
SIGNATURE = "SHA256SUMS.sig"
REQUIRED_FILES = (MEMORY, README, RECORDS, SUMS)
ALLOWED_FILES = frozenset((*REQUIRED_FILES, PACK_JSON, SIGNATURE))
# Files SHA256SUMS must list: everything but itself and the signature over it.
SEALED_FILES = frozenset((MEMORY, README, RECORDS, PACK_JSON))

MAX_DATA_FILE = 16 * 1024 * 1024
MAX_MANIFEST = 4 * 1024
MAX_SIGNATURE = 16 * 1024
MAX_RECORDS = 10_000
MAX_RECORD_LINES = 100_000  # blank lines are allowed, but not 16 MiB of them (ADR 0014)
MAX_SAFE_INTEGER = 2**53 - 1  # the reference is JavaScript; larger integers lose precision

NAMESPACE = "verified-memory-pack-v1"
PACK_FORMAT = "verified-memory-pack"
PACK_VERSION = 2
FUTURE_SKEW = timedelta(minutes=5)
MAX_EXPIRY_DAYS = 1825

RECORD_ID_RE = re.compile(r"M-[A-Za-z0-9_-]{1,127}")
SHA256_RE = re.compile(r"[0-9a-f]{64}")
_UTC_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?(?:Z|\+00:00)"
)
_record_id_match = RECORD_ID_RE.fullmatch
_sha256_match = SHA256_RE.fullmatch
_MANIFEST_LINE_RE = re.compile(r"([0-9a-f]{64})  (.+)")
_TEXT_FIELDS = ("speaker", "statement", "topic", "category")
_PACK_JSON_KEYS = frozenset(("format", "version", "created_utc", "expires_utc"))

JS_WHITESPACE = (
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""What JavaScript's ``String.prototype.trim()`` strips: ECMAScript's WhiteSpace (TAB, VT, FF,
U+FEFF and every Zs space separator, SP and NBSP among them) and LineTerminator (LF, CR,
U+2028, U+2029). Python's ``str.isspace()`` is a different set: it also counts U+001C-U+001F
and U+0085, and not U+FEFF."""


def is_text(value: Any) -> bool:
    """A string that is not empty after JavaScript's ``trim()``: the format's "non-empty"."""
    return type(value) is str and value.strip(JS_WHITESPACE) != ""


def whole_number(value: Any, minimum: int) -> int | None:
    """``value`` as an int when it is a JSON number whose value is whole and in
    ``[minimum, 2**53 - 1]``, else None.

    ``3``, ``3.0`` and ``3e0`` are one number to ``JSON.parse``, so all three count; ``true``,
    ``"3"`` and ``3.5`` do not, nor anything beyond what a JavaScript host reads exactly.
    """
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is int and minimum <= value <= MAX_SAFE_INTEGER:
        return value
    return None


def text_lines(data: bytes) -> list[bytes]:
    """The lines of a text file: each ends in LF or CRLF, and the last one's ending is optional."""
    if b"\r" in data:  # only then copy the file to turn CRLF into LF
        data = data.replace(b"\r\n", b"\n")
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def is_blank(line: bytes) -> bool:
    """A line of UTF-8 text that is empty after JavaScript's ``trim()``.

    ``bytes.strip()`` removes exactly the ASCII part of :data:`JS_WHITESPACE`; only what then
    starts with a non-ASCII character is decoded to strip the rest.
    """
    rest = line.strip()
    return not rest or (rest[0] >= 0x80 and not rest.decode("utf-8").strip(JS_WHITESPACE))


def content_lines(data: bytes) -> list[tuple[int, bytes]]:
    """``(line number, line)`` for every line of a UTF-8 text that is not blank."""
    return [(number, line) for number, line in enumerate(text_lines(data), 1) if not is_blank(line)]


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> None:
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            raise PackFormatError(f"duplicate key {key[:40]!r}")
        seen.add(key)


def load_json(raw: bytes) -> Any:
    """Parse one JSON text as every reader of it would: strictly, and no object names a key twice.

    orjson refuses what no exact reader can hold (NaN, lone surrogates, a byte-order mark, a
    number beyond a double). It keeps the last of two equal keys, like ``JSON.parse``, where
    other readers keep the first, so a record could show a person one statement and serve
    another: a repeated key is refused. A text equal to its own compact re-serialization
    cannot repeat a key, which settles every line a builder wrote with no second parse; any
    other text is parsed again by the standard library, watching every object for repeats.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise PackFormatError(f"invalid JSON ({exc.msg}, column {exc.colno})") from exc
    try:
        compact = orjson.dumps(value)
    except orjson.JSONEncodeError:  # nested deeper than orjson writes: check the slow way
        compact = b""
    if compact != raw:
        try:
            json.loads(raw, object_pairs_hook=_refuse_repeated_keys)
        except RecursionError:
            raise PackFormatError("JSON nested too deeply to check for duplicate keys") from None
    return value


@lru_cache(maxsize=8192)
def utc_key(text: str) -> str:
    """Validate a UTC ISO 8601 time and return a string that sorts chronologically.

    Accepted: ``YYYY-MM-DDTHH:MM:SS[.fraction]`` ending in ``Z`` or ``+00:00``; impossible
    calendar times (February 30th, hour 24, second 60) are refused.
    """
    match = _UTC_RE.fullmatch(text)
    if match is None:
        raise PackFormatError(f"{text[:40]!r} is not a UTC ISO 8601 time like 2026-03-02T08:20:00Z")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    try:
        datetime(year, month, day, hour, minute, second)  # validation only: naive is fine
    except ValueError as exc:
        raise PackFormatError(f"{text!r} is not a real calendar time ({exc})") from exc
    return text[:19] + (match[7] or "").ljust(9, "0")


def parse_utc(text: Any) -> datetime:
    """Parse a UTC ISO 8601 time (see :func:`utc_key`) into an aware datetime."""
    if type(text) is not str:
        raise PackFormatError(f"{text!r} is not a UTC ISO 8601 time string")
    key = utc_key(text)
    return datetime.fromisoformat(key[:19] + "." + key[19:25]).replace(tzinfo=UTC)


def format_utc(moment: datetime) -> str:
    """A UTC time in the pack's canonical spelling, whole seconds: ``2026-03-02T08:20:00Z``."""
    return utc_iso(moment, timespec="seconds")


def _utc_field(container: dict[str, Any], field: str) -> str:
    value = container.get(field)
    if type(value) is not str:
        raise PackFormatError(f"{field} must be a UTC ISO 8601 time string")
    try:
        return utc_key(value)
    except PackFormatError as exc:
        raise PackFormatError(f"{field}: {exc.message}") from exc


def _whole_field(container: dict[str, Any], field: str, minimum: int) -> int | None:
    """A field as a :func:`whole_number`, stored back as an int: JSON.parse reads ``2.0`` as 2,
    and the record is served as it read it."""
    value = whole_number(container.get(field), minimum)
    if value is not None:
        container[field] = value
    return value


def check_citation(citation: Any, first: str, last: str, where: str) -> None:
    """Check one evidence citation against the rules and its record's date range."""
    if type(citation) is not dict:
        raise PackFormatError(f"{where} must be a JSON object")
    get = citation.get
    message_id = get("message_id")  # an int in range passes without a call
    if (type(message_id) is not int or not 1 <= message_id <= MAX_SAFE_INTEGER) and _whole_field(
        citation, "message_id", 1
    ) is None:
        raise PackFormatError(f"{where}.message_id must be a positive integer")
    date = _utc_field(citation, "date_utc")
    if not first <= date <= last:
        raise PackFormatError(
            f"{where}.date_utc is outside the record's date_first_utc..date_last_utc"
        )
    quote = get("quote")
    if type(quote) is not str or not quote.strip(JS_WHITESPACE):
        raise PackFormatError(f"{where}.quote must be a non-empty string")
    start, end = get("start"), get("end")
    if type(start) is not int or not 0 <= start <= MAX_SAFE_INTEGER:
        start = _whole_field(citation, "start", 0)
    if type(end) is not int or not 0 <= end <= MAX_SAFE_INTEGER:
        end = _whole_field(citation, "end", 0)
    if start is None or end is None:
        raise PackFormatError(f"{where}.start and .end must be integers >= 0")
    if end - start != len(quote):
        raise PackFormatError(
            f"{where}: end - start is {end - start} but the quote has {len(quote)} code points"
        )
    digest = get("message_sha256")
    if type(digest) is not str or _sha256_match(digest) is None:
        raise PackFormatError(f"{where}.message_sha256 must be 64 lowercase hex characters")


def check_record(record: Any) -> str:
    """Check one record against every rule; return its record_id.

    Fields beyond the required ones are allowed and kept (supersedes, approval, audits ...).
    This runs for every record at every start-up, so it is written for speed: local lookups,
    no work on the happy path beyond the checks themselves.
    """
    if type(record) is not dict:
        raise PackFormatError("the line is not a JSON object")
    get = record.get
    record_id = get("record_id")
    if type(record_id) is not str or _record_id_match(record_id) is None:
        raise PackFormatError(
            f"record_id {str(record_id)[:40]!r} is not M- followed by 1-127 letters, digits, _ or -"
        )
    role = get("role")
    if role != "user" and role != "agent":
        raise PackFormatError(f'{record_id}: role must be "user" or "agent"')
    for field in _TEXT_FIELDS:
        value = get(field)
        if type(value) is not str or not value.strip(JS_WHITESPACE):
            raise PackFormatError(f"{record_id}: {field} must be a non-empty string")
    try:
        first = _utc_field(record, "date_first_utc")
        last = _utc_field(record, "date_last_utc")
        if first > last:
            raise PackFormatError("date_first_utc is later than date_last_utc")
        evidence = get("evidence")
        if type(evidence) is not list or not evidence:
            raise PackFormatError("evidence must be a non-empty list of citations")
        for index, citation in enumerate(evidence):
            check_citation(citation, first, last, f"evidence[{index}]")
    except PackFormatError as exc:
        raise PackFormatError(f"{record_id}: {exc.message}") from exc
    return record_id


def parse_records(data: bytes) -> tuple[dict[str, Any], ...]:
    """Parse and check ``records.jsonl``: strict UTF-8, one JSON object per line, unique ids.

    Blank lines are skipped (as :func:`content_lines` skips them); each other line goes
    through :func:`load_json`, fast enough that a 10,000-record pack verifies well inside the
    cold-start budget.
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackFormatError(f"{RECORDS} is not valid UTF-8 (byte {exc.start})") from exc
    lines = text_lines(data)
    if len(lines) > MAX_RECORD_LINES:
        raise PackFormatError(
            f"{RECORDS} has more than {MAX_RECORD_LINES} lines; a pack holds at most "
            f"{MAX_RECORDS} records, so remove the blank lines"
        )
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if line[:1] != b"{" and is_blank(line):  # a line that opens an object is not blank
            continue
        if len(records) == MAX_RECORDS:
            raise PackFormatError(f"{RECORDS} has more than {MAX_RECORDS} records")
        try:
            record = load_json(line)
            record_id = check_record(record)
            if record_id in seen:
                raise PackFormatError(f"record_id {record_id} appears twice")
        except PackFormatError as exc:
            raise PackFormatError(f"{RECORDS} line {number}: {exc.message}") from exc
        seen.add(record_id)
        records.append(record)
    if not records:
        raise PackFormatError(f"{RECORDS} has no records; a pack must hold at least one")
    return tuple(records)


def parse_manifest(data: bytes) -> dict[str, str]:
    """Parse ``SHA256SUMS``: ``<64 lowercase hex>  <name>`` lines, each a sealed file, once."""
    if len(data) > MAX_MANIFEST:
        raise PackFormatError(f"{SUMS} is {len(data)} bytes; at most {MAX_MANIFEST}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackFormatError(f"{SUMS} is not valid UTF-8") from exc
    entries: dict[str, str] = {}
    for number, line in enumerate(text_lines(data), start=1):
        match = _MANIFEST_LINE_RE.fullmatch(line.decode("utf-8"))
        if match is None:
            raise PackFormatError(f"{SUMS} line {number} is not '<64 lowercase hex>  <file name>'")
        digest, name = match.groups()
        if name == SUMS:
            raise PackFormatError(
                f"{SUMS} line {number} lists {SUMS}; the manifest never lists itself"
            )
        if name == SIGNATURE:
            raise PackFormatError(
                f"{SUMS} line {number} lists {SIGNATURE}; "
                "the manifest never lists the signature over it"
            )
        if name not in SEALED_FILES:
            raise PackFormatError(
                f"{SUMS} line {number} lists {name[:60]!r}, which is not a file of a pack"
            )
        if name in entries:
            raise PackFormatError(f"{SUMS} lists {name} twice")
        entries[name] = digest
    return entries


def render_manifest(digests: dict[str, str]) -> bytes:
    """The ``SHA256SUMS`` bytes for ``{name: hex}``, sorted by name as ``sha256sum`` would."""
    return "".join(f"{digests[name]}  {name}\n" for name in sorted(digests)).encode("utf-8")


@dataclass(frozen=True)
class PackMeta:
    """PACK.json: when the signer made the pack, when it stops being current, its sequence."""

    created_utc: str
    expires_utc: str
    created: datetime
    expires: datetime
    sequence: int | None = None

    def as_json_bytes(self) -> bytes:
        """The PACK.json bytes as the signer writes them."""
        body: dict[str, Any] = {
            "format": PACK_FORMAT,
            "version": PACK_VERSION,
            "created_utc": self.created_utc,
            "expires_utc": self.expires_utc,
        }
        if self.sequence is not None:
            body["sequence"] = self.sequence
        return (json.dumps(body, indent=2) + "\n").encode("utf-8")


def make_meta(created: datetime, expires: datetime, sequence: int | None) -> PackMeta:
    """A PackMeta for new dates, checked by the same rules as a parsed PACK.json."""
    return parse_pack_json(
        PackMeta(
            format_utc(created), format_utc(expires), created, expires, sequence
        ).as_json_bytes()
    )


def parse_pack_json(data: bytes) -> PackMeta:
    """Parse PACK.json: exactly format, version 2, created_utc < expires_utc, optional sequence."""
    try:
        body = load_json(data)
    except PackFormatError as exc:
        raise PackFormatError(f"{PACK_JSON}: {exc.message}") from exc
    if type(body) is not dict:
        raise PackFormatError(f"{PACK_JSON} must be a JSON object")
    keys = set(body)
    unknown = sorted(keys - _PACK_JSON_KEYS - {"sequence"})
    if unknown:
        raise PackFormatError(f"{PACK_JSON} has unknown key {unknown[0][:40]!r}")
    missing = sorted(_PACK_JSON_KEYS - keys)
    if missing:
        raise PackFormatError(f"{PACK_JSON} is missing {missing[0]}")
    if body["format"] != PACK_FORMAT:
        raise PackFormatError(f"{PACK_JSON} format must be {PACK_FORMAT!r}")
    if whole_number(body["version"], 0) != PACK_VERSION:
        raise PackFormatError(f"{PACK_JSON} version must be {PACK_VERSION}")
    try:
        created, expires = parse_utc(body["created_utc"]), parse_utc(body["expires_utc"])
        created_key, expires_key = utc_key(body["created_utc"]), utc_key(body["expires_utc"])
    except PackFormatError as exc:
        raise PackFormatError(f"{PACK_JSON}: {exc.message}") from exc
    if not created_key < expires_key:
        raise PackFormatError(f"{PACK_JSON} created_utc must be before expires_utc")
    sequence = whole_number(body.get("sequence"), 0)
    if "sequence" in body and sequence is None:
        raise PackFormatError(f"{PACK_JSON} sequence must be a whole number >= 0")
    return PackMeta(body["created_utc"], body["expires_utc"], created, expires, sequence)

"""The evidence plane: signed memory packs in the verified-memory format.

Public API (every name is loaded on first use, so ``affidavit pack verify`` imports only what
verifying needs)::

    from affidavit.packs import TrustOptions, verify_pack

    verify_pack(pack_dir, trust=TrustOptions(...), *, at=None) -> VerifiedPack
        the ordered checks (files, checksums, records, PACK.json, signature, trust, sequence,
        expiry), each with its own PackRefused; VerifiedPack holds the verified records, the
        report and the snapshot that later calls compare with the folder
    build_pack(messages_path, records_path, out, title, description=None) -> BuiltPack
        every quote proven verbatim in its message
    check_request(out, title); build_pack_from(sources, records_label, records_raw, out,
        title, description=None) -> BuiltPack; read_input(path); parse_records(label, raw,
        messages)   the same build from messages already read (a chat export, an upload)
    Sources, read_sources(path), sources_from_jsonl(label, raw), sources_from_export(export)
        the messages a pack's records cite (``messages.jsonl`` or a ChatGPT/Claude export)
    sign_pack(pack, key, expires, out, *, sequence=None, now=None) -> SignResult
        SSHSIG over SHA256SUMS, PACK.json written
    parse_expires(text, now) -> datetime              PACK.json expiry: a date or Nd
    PackIndex(records).search(query, Filters(...))    search / get over verified records
    MAX_QUERY_CHARS
    TrustOptions, parse_trust_args(args), take_flag / flag_value(args, i, name),
    parse_bool(name, value), absolute_path(name, value)
        the trust flags (and the flag reading) every pack command shares
    refusal_dict(pack_dir, refusal)    what ``pack verify --json`` prints for a refused pack
    PackFormatError, PackRefused, PackTrustRefused    the plane's errors
    Check         the verification checks (StrEnum), in the order they run
    format        the bytes on disk: file names, limits, manifests, UTC keys (docs/FORMAT.md)
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.packs import format
    from affidavit.packs.build import (
        BuiltPack,
        build_pack,
        build_pack_from,
        check_request,
        parse_records,
    )
    from affidavit.packs.errors import Check, PackFormatError, PackRefused, PackTrustRefused
    from affidavit.packs.inputs import read_input
    from affidavit.packs.search import MAX_QUERY_CHARS, Filters, PackIndex
    from affidavit.packs.sign import SignResult, parse_expires, sign_pack
    from affidavit.packs.sources import (
        Sources,
        read_sources,
        sources_from_export,
        sources_from_jsonl,
    )
    from affidavit.packs.trust import (
        REVOKED_KEYS,
        TRUSTED_KEYS,
        TrustOptions,
        absolute_path,
        flag_value,
        parse_bool,
        parse_trust_args,
        take_flag,
    )
    from affidavit.packs.verify import VerifiedPack, refusal_dict, verify_pack

__all__ = [
    "MAX_QUERY_CHARS",
    "REVOKED_KEYS",
    "TRUSTED_KEYS",
    "BuiltPack",
    "Check",
    "Filters",
    "PackFormatError",
    "PackIndex",
    "PackRefused",
    "PackTrustRefused",
    "SignResult",
    "Sources",
    "TrustOptions",
    "VerifiedPack",
    "absolute_path",
    "build_pack",
    "build_pack_from",
    "check_request",
    "flag_value",
    "format",
    "parse_bool",
    "parse_expires",
    "parse_records",
    "parse_trust_args",
    "read_input",
    "read_sources",
    "refusal_dict",
    "sign_pack",
    "sources_from_export",
    "sources_from_jsonl",
    "take_flag",
    "verify_pack",
]
__getattr__, __dir__ = lazy_exports(globals())

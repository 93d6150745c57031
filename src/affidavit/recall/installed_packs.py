"""Signed packs installed into the vault: found next to memories, read-only, re-checked.

``install`` runs the evidence plane's own verification (:func:`affidavit.packs.verify_pack`,
nothing re-implemented) and seals what it established in the vault's settings: the pack's
folder, signer, sequence, the trust flags it passed under and the digest of the verified
manifest. The records themselves stay in the pack folder; the vault holds the proof of what
was installed.

:class:`PackShelf` is what a :class:`~affidavit.recall.memory.Memory` searches besides its
memories. It verifies each installed pack again when it first loads it (same flags, so a key
revoked since the install is refused) and requires the same manifest digest as at install;
before every read it compares the folder's file metadata with what it verified (the pack
snapshot: names, size, mtime, ctime, inode) and the revoked-keys file's metadata. A pack
that changed, or whose revocation list now names its key, drops out of recall with a
warning until it is installed again. Pack records are keyword-searched only: embedding 10k
records would take minutes, and an install must stay a verification (ADR 0135).

A pack that no key this host trusts signed (``unsigned``, or ``untrusted``: signed by a key not
pinned) is refused at install unless the caller says ``allow_unsigned`` (``pack install
--allow-unsigned``); once in, each of its records carries that in ``warning`` on every read, so
the CLI table, ``--json``, ``memory_search`` and the console all show it (ADR 0178).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.access import check_name
from affidavit.core.clock import utc_iso
from affidavit.core.errors import AffidavitError, InputError, NotFoundError, PolicyError
from affidavit.core.file_state import FileState, file_state
from affidavit.core.wording import counted
from affidavit.recall.ranking import Entry, RecallIndex
from affidavit.recall.views import MemoryView, memory_view

if TYPE_CHECKING:
    from affidavit.packs import TrustOptions, VerifiedPack
    from affidavit.vault import Vault

SETTING = "installed_packs"
PREFIX = "pack:"
SIGNED = "verified"
ALLOW_UNSIGNED = "--allow-unsigned"
UNSIGNED_WARNING = (
    "from a pack no key this host trusts signed ({status}): anyone could have written it; "
    "treat it as unverified and do not act on it alone"
)
log = logging.getLogger(__name__)


def is_pack_namespace(namespace: str) -> bool:
    """Whether a namespace is an installed pack's (read-only: packs change only by signing)."""
    return namespace.startswith(PREFIX)


def refuse_write(namespace: str) -> None:
    """PolicyError for a write into a pack's namespace."""
    if is_pack_namespace(namespace):
        raise PolicyError(
            f"{namespace} belongs to an installed pack, which is read-only",
            "store into your own namespace; a pack changes only by its signer publishing a "
            "new one (`affidavit pack install` it again)",
        )


@dataclass(frozen=True)
class PackInstall:
    """What the vault remembers of one installed pack (sealed in its settings)."""

    name: str
    path: str
    signature: str  # verified / untrusted / unsigned
    signer: str | None
    fingerprint: str | None
    sequence: int | None
    manifest_sha256: str
    records: int
    trust: tuple[str, ...]  # the trust flags it passed under, re-applied at every load
    installed_at: str

    @property
    def namespace(self) -> str:
        """Where its records are found: ``pack:<name>``."""
        return PREFIX + self.name

    def as_dict(self) -> dict[str, Any]:
        """The sealed (and printed) form."""
        return {**asdict(self), "trust": list(self.trust), "namespace": self.namespace}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PackInstall:
        """Read back a sealed install."""
        fields = {k: data[k] for k in cls.__dataclass_fields__}
        return cls(**{**fields, "trust": tuple(data["trust"])})


def _installs(vault: Vault) -> dict[str, dict[str, Any]]:
    value = vault.get_setting(SETTING, {})
    return dict(value) if isinstance(value, dict) else {}


def installed(vault: Vault) -> list[PackInstall]:
    """Every installed pack, by name."""
    return [PackInstall.from_dict(v) for _, v in sorted(_installs(vault).items())]


def _trust(install: PackInstall) -> TrustOptions:
    from affidavit.packs import parse_trust_args

    options, rest = parse_trust_args(list(install.trust))
    assert not rest, rest  # written by install from TrustOptions.as_args()
    return options


def install(
    vault: Vault,
    pack_dir: Path,
    trust: TrustOptions,
    name: str | None = None,
    *,
    allow_unsigned: bool = False,
) -> PackInstall:
    """Verify the pack under ``trust`` and seal the install; replaces one of the same name.

    Raises the pack plane's PackRefused (the failed check and why) before anything is written;
    PackTrustRefused for a pack no trusted key signed, unless ``allow_unsigned``.
    """
    from affidavit.packs import Check, PackTrustRefused, verify_pack

    verified = verify_pack(pack_dir, trust)
    chosen = check_name(name or verified.path.name, "pack name")
    if len(PREFIX + chosen) > 64:
        raise InputError(f"pack name {chosen!r} is too long", "give a --name of 59 characters")
    report = verified.report
    if report.signature.status != SIGNED and not allow_unsigned:
        raise PackTrustRefused(
            Check.TRUST,
            f"{verified.path} is {report.signature.status}: no key this host trusts signed it, "
            "so its records would sit beside your memories on nobody's word",
            f"pin its signer (--trusted-fingerprint SHA256:... or --trusted-keys FILE), or "
            f"install it anyway with {ALLOW_UNSIGNED} (every hit is then marked unsigned)",
        )
    meta = report.meta
    record = PackInstall(
        name=chosen,
        path=str(verified.path),
        signature=report.signature.status,
        signer=report.signature.signer,
        fingerprint=report.signature.fingerprint,
        sequence=meta.sequence if meta is not None else None,
        manifest_sha256=report.manifest_sha256,
        records=report.record_count,
        trust=tuple(trust.as_args()),
        installed_at=utc_iso(timespec="seconds"),
    )
    installs = _installs(vault)
    installs[chosen] = record.as_dict()
    vault.set_setting(SETTING, installs)
    return record


def uninstall(vault: Vault, name: str) -> PackInstall:
    """Forget an install (the pack folder is left alone); NotFoundError if none by that name."""
    installs = _installs(vault)
    if name not in installs:
        known = ", ".join(sorted(installs)) or "none"
        raise NotFoundError(f"no pack named {name!r} is installed", f"installed: {known}")
    gone = PackInstall.from_dict(installs.pop(name))
    vault.set_setting(SETTING, installs)
    return gone


@dataclass
class _Loaded:
    install: PackInstall
    verified: VerifiedPack
    revoked_keys: Path | None
    revoked_stat: FileState | None
    ids: list[str]


class PackShelf:
    """The installed packs one Memory searches, kept honest before every read."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._loaded: dict[str, _Loaded] = {}
        self._records: dict[str, tuple[_Loaded, dict[str, Any]]] = {}
        self._refused: dict[str, tuple[dict[str, Any], str]] = {}  # name -> (install, why)

    @property
    def warnings(self) -> list[str]:
        """Why each installed pack that is out of recall is out."""
        return [why for _, why in self._refused.values()]

    def sync(self, index: RecallIndex) -> None:
        """Load new installs, drop removed or changed ones (cheap: stat calls only)."""
        installs = _installs(self.vault)
        for name in list(self._loaded):
            loaded = self._loaded[name]
            if installs.get(name) != loaded.install.as_dict():
                self._unload(name, index)
            elif not loaded.verified.snapshot.unchanged():
                self._refuse(name, installs[name], index, "changed on disk since it was verified")
            elif file_state(loaded.revoked_keys) != loaded.revoked_stat:
                self._unload(name, index)  # the revocation list changed: verify again below
            else:
                try:
                    loaded.verified.recheck_expiry()  # installed under --strict: it may expire
                except AffidavitError as exc:
                    self._refuse(name, installs[name], index, f"refused: {exc.message}")
        for name in list(self._refused):
            if installs.get(name) != self._refused[name][0]:
                del self._refused[name]  # reinstalled or uninstalled: judged afresh
        for name, data in installs.items():
            if name not in self._loaded and name not in self._refused:
                self._load(PackInstall.from_dict(data), data, index)

    def _load(self, install: PackInstall, data: dict[str, Any], index: RecallIndex) -> None:
        from affidavit.packs import verify_pack

        trust = _trust(install)
        revoked_stat = file_state(trust.revoked_keys)  # before verifying: a change after is seen
        try:
            verified = verify_pack(Path(install.path), trust)
        except AffidavitError as exc:
            self._refuse(install.name, data, index, f"refused: {exc.message}")
            return
        if verified.report.manifest_sha256 != install.manifest_sha256:
            self._refuse(install.name, data, index, "changed on disk since it was installed")
            return
        loaded = _Loaded(install, verified, trust.revoked_keys, revoked_stat, [])
        entries = []
        for record in verified.records:
            entry = _entry(install, record)
            loaded.ids.append(entry.id)
            self._records[entry.id] = (loaded, record)
            entries.append((entry, None))
        index.add_many(entries)
        self._loaded[install.name] = loaded

    def _unload(self, name: str, index: RecallIndex) -> None:
        loaded = self._loaded.pop(name, None)
        for item_id in loaded.ids if loaded else ():
            index.remove(item_id)
            self._records.pop(item_id, None)

    def _refuse(self, name: str, data: dict[str, Any], index: RecallIndex, why: str) -> None:
        self._unload(name, index)
        message = f"pack {name} is out of recall: {why}; reinstall it after checking it"
        log.warning(message)
        self._refused[name] = (data, message)

    def holds(self, item_id: str) -> bool:
        """Whether an id names a record of a loaded pack."""
        return item_id in self._records

    def view(self, item_id: str, now: datetime | None = None) -> MemoryView:
        """A pack record as reads show a memory, with the pack's signer, sequence, freshness."""
        try:
            loaded, record = self._records[item_id]
        except KeyError:
            raise NotFoundError(f"no installed pack holds {item_id}") from None
        install = loaded.install
        data = {
            "text": record["statement"],
            "source": f"signed pack {install.name}, record {record['record_id']} "
            f"({counted(len(record['evidence']), 'verbatim quote')}, {record['speaker']})",
            "discovered": record["date_last_utc"][:10],
            "tags": [record["category"]],
        }
        view: dict[str, Any] = dict(memory_view(item_id, install.namespace, "", data))
        view["saved_at"] = install.installed_at
        if install.signature != SIGNED:
            view["warning"] = UNSIGNED_WARNING.format(status=install.signature)
        view["pack"] = {
            "name": install.name,
            "record_id": record["record_id"],
            "signature": install.signature,
            "signer": install.signer,
            "fingerprint": install.fingerprint,
            "sequence": install.sequence,
            "freshness": loaded.verified.report.freshness(now or datetime.now(UTC))["status"],
        }
        return view  # type: ignore[return-value]

    def citation_problem(self, name: str, signer: str, record_id: str, quote: str) -> str:
        """Why a citation of this pack proves nothing now; empty when it does.

        It proves something only while the pack is in recall (verified under its install's
        trust flags, unchanged on disk, not revoked or expired under ``--strict``), was
        signed by a key this host trusts, by the key the citation names, and the quote
        stands verbatim in the record's statement or in one of its proven quotes.
        """
        loaded = self._loaded.get(name)
        if loaded is None:
            refused = self._refused.get(name)
            return refused[1] if refused else f"no pack named {name} is installed"
        install = loaded.install
        if install.signature != SIGNED:
            return f"pack {name} is {install.signature}: an unsigned pack proves nothing"
        if install.fingerprint != signer:
            return f"pack {name} is signed by {install.fingerprint}, not {signer}"
        texts = self.cited_texts(name, record_id)
        if not texts:
            return f"pack {name} holds no record {record_id}"
        if not any(quote in text for text in texts):
            return f"the quote is not verbatim in record {record_id} of pack {name}"
        return ""

    def cited_texts(self, name: str, record_id: str) -> list[str]:
        """The texts a citation's quote may stand in (the record's statement, then its proven
        quotes) while the pack ``name`` is in recall; empty when the record is not at hand."""
        loaded = self._loaded.get(name)
        found = self._records.get(f"{loaded.install.namespace}:{record_id}") if loaded else None
        if found is None:
            return []
        record = found[1]
        return [record["statement"], *(c["quote"] for c in record["evidence"])]

    def reverify(self, names: Iterable[str], index: RecallIndex) -> None:
        """Verify the packs ``names`` again from their files now, as a first load does
        (signature, trust flags, manifest digest), instead of trusting the verification kept
        since they were loaded. A pack refused since stays refused until reinstalled."""
        for name in names:
            self._unload(name, index)
        self.sync(index)

    def status(self) -> list[dict[str, Any]]:
        """Each installed pack and whether it is in recall now."""
        out = [{**lo.install.as_dict(), "in_recall": True} for lo in self._loaded.values()]
        out += [
            {**data, "in_recall": False, "warning": why} for data, why in self._refused.values()
        ]
        return sorted(out, key=lambda p: str(p["name"]))


def _entry(install: PackInstall, record: Mapping[str, Any]) -> Entry:
    return Entry(
        id=f"{install.namespace}:{record['record_id']}",
        text=f"{record['topic']}: {record['statement']}",
        seq=0,
        namespace=install.namespace,
        tags=frozenset({str(record["category"]).lower()}),
        saved_at=install.installed_at,
        discovered=str(record["date_last_utc"])[:10],
        authored=False,
    )

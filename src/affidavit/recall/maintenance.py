"""Keeping a vault in shape: reindex, retag, atomize, and the sealed settings a user may set.

Each change here is one vault transaction (:meth:`affidavit.vault.Vault.update_many`), so a
crash half way leaves the vault as it was, never half retagged or half re-embedded.

- The embedding model a vault's vectors came from is recorded in the vault (setting
  ``embedding_model``: id and sha256). Vectors of another model are in another space, so
  ``reindex`` re-embeds every memory when the model at hand differs from the recorded one
  (or when asked to), then records it.
- ``retag`` renames a tag, or merges it into another, on every memory the caller may write.
- ``atomize`` splits a long memory into single claims (:func:`split_claims`); the pieces are
  stored as corrections that supersede it, so the original stays readable by id.
- :data:`SETTINGS` lists every sealed setting a user may change, its type and its default.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import InputError, UsageError
from affidavit.recall import claims
from affidavit.recall.index_build import MEMORY
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.memory import (
    AUTO_EXPIRE_SETTING,
    AUTO_STORE_SETTING,
    MAX_CHARS_SETTING,
    MODEL_SETTING,
    model_identity,
)
from affidavit.vault import AUTO_LOCK_SETTING

if TYPE_CHECKING:
    from affidavit.recall.memory import Memory

Progress = Callable[[int, int], None]


def reindex(
    memory: Memory, *, re_embed: bool = False, progress: Progress | None = None
) -> dict[str, Any]:
    """Rebuild the RAM index; re-embed every memory first if asked or the model changed."""
    recorded = memory.vault.get_setting(MODEL_SETTING)
    embedder = memory.embedder
    current = model_identity() if embedder is not None else None
    if re_embed and embedder is None:
        raise UsageError(
            "--re-embed needs the embedding model, and none is loaded here",
            "turn semantic recall on (onnxruntime installed, AFFIDAVIT_EMBEDDER not off), "
            "or run reindex without --re-embed",
        )
    changed = current is not None and recorded != current
    count = memory.reembed_all(progress) if re_embed or changed else 0
    indexed = memory.rebuild_index()
    return {
        "re_embedded": count,
        "model": current,
        "previous_model": recorded,
        "indexed": indexed,
    }


def retag(memory: Memory, old: str, new: str, *, namespace: str | None = None) -> dict[str, Any]:
    """Rename tag ``old`` to ``new`` (merging if a memory has both) on writable memories."""
    old_tag, new_tag = old.strip().lower(), new.strip().lower()
    if not old_tag or not new_tag:
        raise InputError("retag needs two non-empty tags", "e.g. affidavit retag infra ops")
    if old_tag == new_tag:
        raise InputError(f"the tags are the same ({old_tag})", "give a different new tag")
    changes: dict[str, tuple[dict[str, Any], Any]] = {}
    for item in memory.vault.items(MEMORY, namespace):
        tags = list(item.data.get("tags", []))
        if old_tag not in tags:
            continue
        memory.access.require_write(item.namespace)
        merged = list(dict.fromkeys(new_tag if t == old_tag else t for t in tags))
        changes[item.id] = ({**item.data, "tags": merged}, item.vector)
    memory.vault.update_many(changes)
    return {"old": old_tag, "new": new_tag, "retagged": sorted(changes)}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+\u2022]\s+|\d+[.)]\s+)")


def split_claims(text: str) -> list[str]:
    """One claim per piece: headings dropped, list items and sentences apart, markup removed.

    Deterministic and conservative: it splits at line breaks, list markers and sentence ends
    only, never inside a sentence, so every piece is words the memory already held.
    """
    pieces: list[str] = []
    for line in text.replace("\r", "").split("\n"):
        if re.match(r"^\s*#{1,6}\s", line):
            continue
        body = _MARKUP.sub("", line).strip()
        pieces += [s.strip() for s in _SENTENCE_END.split(body) if s.strip()]
    return pieces


@dataclass(frozen=True)
class AtomizePlan:
    """The claims a memory splits into, for the user to review before anything is stored."""

    id: str
    original: str
    pieces: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """What ``atomize --json`` prints."""
        return {"id": self.id, "original": self.original, "pieces": list(self.pieces)}


def plan_atomize(memory: Memory, item_id: str) -> AtomizePlan:
    """Split one live memory; InputError when it is one claim already or a piece is too long."""
    view = memory.get_memory(item_id)
    if view.get("superseded_by"):
        raise InputError(f"{item_id} is superseded already", "atomize the memory that replaced it")
    pieces = tuple(split_claims(view["text"]))
    if len(pieces) < 2:
        raise InputError(f"{item_id} holds one claim already", "nothing to split")
    limit = memory.max_chars
    for number, piece in enumerate(pieces, 1):
        if len(piece) > limit:
            raise InputError(
                f"piece {number} of {item_id} still has {len(piece)} characters (limit {limit})",
                "split it by hand: store the claims with supersedes=[id]",
            )
    return AtomizePlan(item_id, view["text"], pieces)


def apply_atomize(memory: Memory, plan: AtomizePlan) -> list[dict[str, Any]]:
    """Store the pieces as corrections of the original (one batch; it leaves search)."""
    view = memory.get_memory(plan.id)
    source = f"{view.get('source') or 'memory'} (atomized from {plan.id})"
    batch = [
        claims.Claim(
            piece,
            source,
            namespace=view["namespace"],
            tags=tuple(view["tags"]),
            importance=view["importance"],
            kind=MemoryKind.of(view["kind"]),
            discovered=view["discovered"],
            supersedes=(plan.id,) if number == 0 else None,
        )
        for number, piece in enumerate(plan.pieces)
    ]
    return [dict(outcome) for outcome in memory.store_many(batch)]


# -- settings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One sealed setting a user may change: its type, default and meaning."""

    key: str
    kind: type
    default: Any
    meaning: str

    def parse(self, raw: str) -> Any:
        """The value typed on a command line, checked."""
        text = raw.strip().lower()
        if self.kind is bool:
            if text in ("on", "true", "yes", "1"):
                return True
            if text in ("off", "false", "no", "0"):
                return False
            raise InputError(f"{self.key} is on or off, not {raw!r}")
        if text in ("none", "off", "") and self.default is None:
            return None
        try:
            value = int(text)
        except ValueError:
            raise InputError(f"{self.key} is a whole number, not {raw!r}") from None
        if value < 1:
            raise InputError(f"{self.key} must be at least 1")
        return value


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting(
            MAX_CHARS_SETTING,
            int,
            claims.DEFAULT_MAX_CHARS,
            "the longest text one authored memory may hold (one claim)",
        ),
        Setting(
            AUTO_EXPIRE_SETTING,
            bool,
            True,
            "forget memories past their expiry day by themselves (off: only `expire` does)",
        ),
        Setting(
            AUTO_STORE_SETTING,
            bool,
            False,
            "store unreviewed claims directly: the user's own plain statements from capture and"
            " verified calls from `proxy run --remember` (off: they wait in `review`)",
        ),
        Setting(
            AUTO_LOCK_SETTING,
            int,
            None,
            "lock the unlock session after this many idle minutes (none: never)",
        ),
    )
}


def setting(key: str) -> Setting:
    """The setting named ``key``; UsageError listing every key otherwise."""
    try:
        return SETTINGS[key]
    except KeyError:
        raise UsageError(
            f"unknown setting {key!r}", f"settings are: {', '.join(sorted(SETTINGS))}"
        ) from None


def list_settings(memory: Memory) -> list[dict[str, Any]]:
    """Every setting with its value in this vault and its default."""
    return [
        {
            "key": s.key,
            "value": memory.vault.get_setting(s.key, s.default),
            "default": s.default,
            "meaning": s.meaning,
        }
        for s in SETTINGS.values()
    ]


def set_setting(memory: Memory, key: str, raw: str) -> dict[str, Any]:
    """Parse, check and seal one setting; the new value."""
    chosen = setting(key)
    value = chosen.parse(raw)
    memory.vault.set_setting(chosen.key, value)
    return {"key": chosen.key, "value": value}

"""The relation graph: subject -predicate-> object edges, stored as sealed ``relation`` records.

Prose memories answer "what do I know about X"; edges answer structured questions (who owns
what, which file is canonical) exactly, with no ranking involved. An edge may cite the
memory it came from (``src_id``) and a validity window (``valid_from``/``valid_to``, dates
or ISO times, inclusive), so "who owned the repo on 2026-03-01" has one answer.

Edges live in the vault like memories (sealed, audited, picked up by other processes);
queries scan the RAM view, which is fine for graphs of agent scale (tens of thousands).
Linking the same edge twice returns the existing one (idempotent).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from affidavit.access import check_name
from affidavit.core.clock import utc_iso
from affidavit.core.errors import InputError, NotFoundError
from affidavit.recall.views import RelationPage, RelationView
from affidavit.vault import VaultItem

RELATION = "relation"
MAX_FIELD_CHARS = 200
DEFAULT_LIMIT = 50


def _field(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"a relation needs a non-empty {name}", "e.g. link alice owns repo-x")
    text = " ".join(value.split())
    if len(text) > MAX_FIELD_CHARS:
        raise InputError(
            f"the relation's {name} is longer than {MAX_FIELD_CHARS} characters",
            "name the entity, do not describe it",
        )
    return text


def parse_moment(value: Any, name: str) -> str | None:
    """A validity bound as an ISO date or time (a unix timestamp is converted)."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return utc_iso(datetime.fromtimestamp(value, UTC), timespec="auto")
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
            return value
        except ValueError:
            pass
    raise InputError(f"{name} {value!r} is not a date or time", "write it as YYYY-MM-DD")


@dataclass(frozen=True)
class Link:
    """One edge to record, subject -predicate-> object, checked when it is made.

    ``src_id``: the memory it came from; ``valid_from`` / ``valid_to``: its validity window
    (dates or ISO times, inclusive; a unix time is converted); ``namespace`` None: the
    caller's own.
    """

    subject: str
    predicate: str
    object: str
    src_id: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    namespace: str | None = None

    def __post_init__(self) -> None:
        start = parse_moment(self.valid_from, "valid_from")
        end = parse_moment(self.valid_to, "valid_to")
        if start and end and _norm(end) < _norm(start):
            raise InputError("valid_to is before valid_from", "swap them or drop one")
        if self.src_id is not None and (not isinstance(self.src_id, str) or not self.src_id):
            raise InputError("src_id must be a memory id")
        if self.namespace is not None:
            check_name(self.namespace, "namespace")
        normal = {
            "subject": _field(self.subject, "subject"),
            "predicate": _field(self.predicate, "predicate"),
            "object": _field(self.object, "object"),
            "valid_from": start,
            "valid_to": end,
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)  # frozen: normalised once, here

    def data(self) -> dict[str, Any]:
        """The JSON sealed for this edge."""
        out: dict[str, Any] = {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
        }
        for key, value in (
            ("src_id", self.src_id),
            ("valid_from", self.valid_from),
            ("valid_to", self.valid_to),
        ):
            if value:
                out[key] = value
        return out


def _norm(moment: str) -> str:
    """Comparable form of a date or time: dates compare as the start of that day."""
    return moment.replace("Z", "")[:19] if "T" in moment else moment[:10]


def _valid_at(data: dict[str, Any], as_of: str) -> bool:
    point = _norm(as_of)
    start, end = data.get("valid_from"), data.get("valid_to")
    if start and point < _norm(start):
        return False
    return not (end and point[: len(_norm(end))] > _norm(end))


@dataclass(frozen=True)
class EdgeQuery:
    """What ``relations`` filters on; every given field must match (case-insensitive).

    Checked when it is made: ``limit`` at least 1, ``as_of`` a date or time (a unix time is
    converted), ``namespace`` a valid name.
    """

    entity: str | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    as_of: str | None = None
    namespace: str | None = None
    limit: int = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1:
            raise InputError("limit must be at least 1")
        if self.namespace is not None:
            check_name(self.namespace, "namespace")
        object.__setattr__(self, "as_of", parse_moment(self.as_of, "as_of"))

    def matches(self, item: VaultItem) -> bool:
        """Whether one edge answers this query."""
        d = item.data
        low = {k: str(d.get(k, "")).casefold() for k in ("subject", "predicate", "object")}
        if self.namespace is not None and item.namespace != self.namespace:
            return False
        if self.entity is not None and self.entity.casefold() not in (
            low["subject"],
            low["object"],
        ):
            return False
        for key, want in (
            ("subject", self.subject),
            ("predicate", self.predicate),
            ("object", self.object),
        ):
            if want is not None and low[key] != want.casefold():
                return False
        return self.as_of is None or _valid_at(d, self.as_of)


def edge_view(item: VaultItem) -> RelationView:
    """An edge as reads return it."""
    view = {"id": item.id, "namespace": item.namespace, "saved_at": item.saved_at, **item.data}
    return cast("RelationView", view)


def same_edge(items: Iterable[VaultItem], namespace: str, data: dict[str, Any]) -> VaultItem | None:
    """An existing edge identical to ``data`` (for idempotent links)."""
    key = {k: str(v).casefold() for k, v in data.items()}
    for item in items:
        if (
            item.namespace == namespace
            and {k: str(v).casefold() for k, v in item.data.items()} == key
        ):
            return item
    return None


def query(items: Iterable[VaultItem], q: EdgeQuery) -> RelationPage:
    """Edges matching ``q``, newest first, at most ``q.limit``, with a ``truncated`` flag."""
    found = sorted((it for it in items if q.matches(it)), key=lambda it: -it.seq)
    return {
        "relations": [edge_view(it) for it in found[: q.limit]],
        "truncated": len(found) > q.limit,
        "total": len(found),
    }


def require_edge(item: VaultItem) -> None:
    """Refuse to unlink something that is not an edge (forget memories with ``forget``)."""
    if item.kind != RELATION:
        raise NotFoundError(f"{item.id} is not a relation", "use `affidavit forget` for memories")

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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, cast

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


def edge_data(
    subject: Any,
    predicate: Any,
    obj: Any,
    *,
    src_id: str | None = None,
    valid_from: Any = None,
    valid_to: Any = None,
) -> dict[str, Any]:
    """Validate one edge and return the JSON sealed for it."""
    data: dict[str, Any] = {
        "subject": _field(subject, "subject"),
        "predicate": _field(predicate, "predicate"),
        "object": _field(obj, "object"),
    }
    start, end = parse_moment(valid_from, "valid_from"), parse_moment(valid_to, "valid_to")
    if start and end and _norm(end) < _norm(start):
        raise InputError("valid_to is before valid_from", "swap them or drop one")
    for key, value in (("src_id", src_id), ("valid_from", start), ("valid_to", end)):
        if value:
            data[key] = value
    return data


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
    """What ``relations`` filters on; every given field must match (case-insensitive)."""

    entity: str | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    as_of: str | None = None
    namespace: str | None = None
    limit: int = DEFAULT_LIMIT

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
    if q.limit < 1:
        raise InputError("limit must be at least 1")
    if q.as_of is not None:  # a unix time becomes the ISO moment the edges are compared with
        q = replace(q, as_of=parse_moment(q.as_of, "as_of"))
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

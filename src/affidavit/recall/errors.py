"""The error recall adds to :mod:`affidavit.core.errors`: an id of the wrong kind of record."""

from __future__ import annotations

from affidavit.core.errors import NotFoundError


class WrongKindError(NotFoundError):
    """The id names a record the caller may read, but of another kind than the one asked for
    (a relation given to ``Memory.get_memory``, a memory to ``Memory.get_relation``)."""

    def __init__(self, item_id: str, kind: str, wanted: str) -> None:
        super().__init__(f"{item_id} is a {kind}, not a {wanted}")
        self.kind = kind

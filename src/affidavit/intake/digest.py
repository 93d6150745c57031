"""The daily digest of what capture stored without review (``auto_store`` on).

A person who never reviews still deserves to see what went into their memory in their name:
the console's Review page shows, day by day, every memory capture stored directly (tagged
:data:`~affidavit.intake.capture.AUTO_STORED`), each linked to its page where it can be
corrected or forgotten. Read through :meth:`Memory.get_memory`, so the caller's grants, expiry
and the "superseded by" marker apply as on any read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from affidavit.core.errors import NotFoundError, PolicyError
from affidavit.intake.capture import AUTO_STORED, MEMORY

if TYPE_CHECKING:
    from affidavit.recall import Memory, MemoryView


@dataclass(frozen=True)
class DigestDay:
    """The memories capture stored on one UTC day (``YYYY-MM-DD``), oldest first."""

    day: str
    memories: list[MemoryView]


def digest(memory: Memory, days: int = 7) -> list[DigestDay]:
    """What capture stored without review in the last ``days`` days the caller may read,
    newest day first."""
    since = (datetime.now(UTC) - timedelta(days=days - 1)).date().isoformat()
    memory.vault.refresh()
    picked = sorted(
        (
            it
            for it in memory.vault.items(MEMORY)
            if it.saved_at[:10] >= since and AUTO_STORED in (it.data.get("tags") or ())
        ),
        key=lambda it: (it.saved_at, it.seq),
    )
    by_day: dict[str, list[MemoryView]] = defaultdict(list)
    for it in picked:
        try:
            by_day[it.saved_at[:10]].append(memory.get_memory(it.id))
        except (NotFoundError, PolicyError):  # not the caller's, or expired
            continue
    return [DigestDay(day, by_day[day]) for day in sorted(by_day, reverse=True)]

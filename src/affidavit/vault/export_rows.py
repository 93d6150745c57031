"""The rows of a plaintext export (``affidavit export --plaintext``), read back for an import.

One parser for every importer (the ``import`` command, the console's import page), so a file
is accepted or refused the same way wherever it is imported: every line is checked before
anything is stored, and the first bad line is named.
"""

from __future__ import annotations

import base64
import json

from affidavit.core.errors import InputError
from affidavit.vault.items import NewItem


def parse_export(text: str, source: str) -> list[NewItem]:
    """The records of an export's JSON lines (``source`` names the file in errors)."""
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not an object")
            vector = row.get("vector")
            items.append(
                NewItem(
                    data=row["data"],
                    kind=row.get("kind", "memory"),
                    namespace=row.get("namespace", "default"),
                    vector=base64.b64decode(vector, validate=True) if vector else None,
                    id=row["id"],
                    saved_at=row.get("saved_at"),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"{source} line {number}: not an export row ({exc})",
                "nothing was imported; fix that line",
            ) from None
        except RecursionError:
            raise InputError(
                f"{source} line {number}: JSON nested too deeply to read", "nothing was imported"
            ) from None
    return items

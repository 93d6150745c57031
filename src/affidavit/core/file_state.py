"""A file's state: what changes whenever its bytes do, read with one ``stat``.

Size, modification time, change time and inode: an edit or a replacement moves at least
one, and the change time cannot be set back by the file's owner (``touch -d`` sets mtime
only). Callers keep the state beside what they derived from the file and derive it again
when the state differs: an installed pack's revocation list, a memory's audit-log receipt.
"""

from __future__ import annotations

from pathlib import Path

FileState = tuple[int, int, int, int]


def file_state(path: Path | str | None) -> FileState | None:
    """The state of the file at ``path``; None when there is no path or no file."""
    if path is None:
        return None
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

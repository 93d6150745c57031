"""Reading the console's forms: bounded parsing, trimmed text fields, uploads, local paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request

from affidavit.core.errors import UsageError

MAX_FIELD = 1024 * 1024


async def read_form(request: Request, max_files: int = 1) -> FormData:
    """The request's form: at most ``max_files`` uploads and 1 MiB per text field."""
    try:
        return await request.form(max_files=max_files, max_fields=64, max_part_size=MAX_FIELD)
    except Exception as exc:  # multipart errors: malformed or over a bound
        raise UsageError(f"the form could not be read ({exc})", "send it again") from None


def text(form: FormData, name: str) -> str:
    """A text field, trimmed ('' when absent)."""
    value: Any = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def upload(form: FormData, name: str) -> UploadFile | None:
    """An uploaded file, or None when the field was left empty."""
    value: Any = form.get(name)
    return value if isinstance(value, UploadFile) and value.filename else None


def local_path(label: str, value: str) -> Path:
    """A path on this machine typed into a form: absolute (``~`` allowed), or an error."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise UsageError(f"{label} {value!r} is not an absolute path", "write it from / (or ~)")
    return path

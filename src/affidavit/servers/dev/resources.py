"""Resources: ``repo://status``, ``repo://log`` and the template ``repo://file/{path}``.

Status and log are JSON with the same fields as the ``git_status`` / ``git_log`` tools, so a
verifier can re-derive them from git and compare field by field. File contents are the exact
bytes on disk: text when they are UTF-8, base64 otherwise. ``repo://file/`` paths go through
the same confinement as the tools (percent-decoding first, so ``%2e%2e`` is still ``..``).
"""

from __future__ import annotations

import base64
import json
import mimetypes
import urllib.parse

import mcp_types as types

from affidavit.core.errors import InputError, NotFoundError
from affidavit.servers.dev import files
from affidavit.servers.dev.worktree import WorkTree

STATUS_URI = "repo://status"
LOG_URI = "repo://log"
FILE_PREFIX = "repo://file/"
FILE_TEMPLATE = "repo://file/{path}"
LOG_COUNT = 50

RESOURCES = [
    types.Resource(
        uri=STATUS_URI,
        name="status",
        description="Current branch, HEAD and changed paths (JSON).",
        mime_type="application/json",
    ),
    types.Resource(
        uri=LOG_URI,
        name="log",
        description=f"The newest {LOG_COUNT} commits reachable from HEAD (JSON).",
        mime_type="application/json",
    ),
]
TEMPLATES = [
    types.ResourceTemplate(
        uri_template=FILE_TEMPLATE,
        name="file",
        description="A file inside the repository, by its path from the repository root.",
    )
]


def read(repo: WorkTree, uri: str) -> types.TextResourceContents | types.BlobResourceContents:
    """The contents behind ``uri``, or an AffidavitError saying why not."""
    if uri == STATUS_URI:
        return _json(uri, repo.status())
    if uri == LOG_URI:
        return _json(uri, {"commits": repo.log(LOG_COUNT)})
    if uri.startswith(FILE_PREFIX):
        raw = urllib.parse.unquote(uri.removeprefix(FILE_PREFIX).split("?", 1)[0].split("#", 1)[0])
        if not raw:
            raise InputError("repo://file/ needs a path", "e.g. repo://file/README.md")
        rel, data = files.read_bytes(repo.root, raw)
        mime = mimetypes.guess_type(rel)[0]
        try:
            return types.TextResourceContents(
                uri=uri, mime_type=mime or "text/plain", text=data.decode("utf-8")
            )
        except UnicodeDecodeError:
            return types.BlobResourceContents(
                uri=uri,
                mime_type=mime or "application/octet-stream",
                blob=base64.b64encode(data).decode("ascii"),
            )
    raise NotFoundError(
        f"unknown resource {uri!r}", f"resources are {STATUS_URI}, {LOG_URI}, {FILE_TEMPLATE}"
    )


def _json(uri: str, value: object) -> types.TextResourceContents:
    return types.TextResourceContents(
        uri=uri, mime_type="application/json", text=json.dumps(value, indent=2, sort_keys=True)
    )

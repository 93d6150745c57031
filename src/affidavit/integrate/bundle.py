"""``affidavit bundle``: a Claude Desktop bundle (``.mcpb``) of the memory server.

An MCPB file is a zip with ``manifest.json`` at its root (MCPB manifest spec 0.3). Ours is a
``python`` server: ``server/main.py`` starts ``affidavit serve`` and ``server/lib`` holds
affidavit and every distribution it needs at run time, copied file by file from the
environment running this command (the files each distribution's RECORD lists, so nothing of
the dev tools comes along). The embedding model is one of those distributions, so the bundle
works offline and keeps its sha256 check. Compiled extensions (onnxruntime, numpy,
cryptography) tie the bundle to this platform and Python minor version; the manifest says so
in ``compatibility``, and a bundle per platform is built on that platform (ADR 142).

The settings form (``user_config``) asks for the vault folder and the caller name; Claude
Desktop substitutes them into the server's arguments. No secret is asked for: the vault is
unlocked with ``affidavit unlock`` or the memory_unlock tool, never from a stored setting.

A *pack bundle* (``affidavit bundle --pack DIR``) serves one signed pack instead: the pack's
files sit under ``pack/``, ``server/main.py`` runs ``pack serve`` on them, and the settings
form holds the trust flags (pinned fingerprint, minimum sequence, strict), pre-filled with the
signer's fingerprint and the pack's sequence so a bundle pins what it was built from. What
the evidence plane never imports (the embedding model and its runtime) is left out.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from affidavit import __version__
from affidavit.core.atomic import fsync_dir
from affidavit.core.errors import UnsupportedError, UsageError

MANIFEST_VERSION = "0.3"
ROOT_DISTRIBUTION = "affidavit"
LIB = "server/lib"
ENTRY_POINT = "server/main.py"
# Zip timestamps are fixed so the same environment gives the same bytes.
_EPOCH = (1980, 1, 1, 0, 0, 0)
# Left out of server/lib: bytecode (rebuilt on first run) and where the builder installed from.
_SKIP = re.compile(r"(^|/)__pycache__/|\.pyc$|(^|/)direct_url\.json$|^__editable__|\.pth$")

MAIN_PY = '''"""Start affidavit's memory server from this bundle: Claude Desktop runs this file."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))


def _args(given):
    """``serve`` with the settings form's values; an option left empty is dropped."""
    args, i = ["serve"], 0
    while i < len(given):
        if given[i].startswith("--") and i + 1 < len(given):
            if given[i + 1].strip():
                args += [given[i], given[i + 1]]
            i += 2
        else:
            args.append(given[i])
            i += 1
    return args


if __name__ == "__main__":
    from affidavit.cli.main import main

    sys.argv = ["affidavit", *_args(sys.argv[1:])]
    sys.exit(main())
'''


PACK_DIR = "pack"
# Runtime distributions `pack serve` never imports: semantic recall's runtime and index. A
# pack bundle leaves them (and what only they require) out, and the model file affidavit
# ships (23 MB); its test starts the server from the bundle alone, so a wrong entry here
# fails there.
RECALL_ONLY = frozenset({"onnxruntime", "tokenizers", "usearch"})
RECALL_MODEL = f"{LIB}/affidavit/recall/model/model.onnx"

PACK_MAIN_PY = '''"""Serve the signed pack in this bundle, read-only: Claude Desktop runs this."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))


def _args(given):
    """``pack serve`` on the bundled pack, with each trust flag the settings form filled in
    (``--flag=value``; a flag left empty is dropped)."""
    args = ["pack", "serve", "--pack", str(HERE.parent / "pack")]
    return args + [item for item in given if item.partition("=")[2].strip()]


if __name__ == "__main__":
    from affidavit.cli.main import main

    sys.argv = ["affidavit", *_args(sys.argv[1:])]
    sys.exit(main())
'''


@dataclass(frozen=True)
class PackTrust:
    """The trust settings a pack bundle's form starts with (the user may change them)."""

    fingerprint: str  # the signer's, unless the builder pinned another
    min_sequence: int | None
    strict: bool


@dataclass(frozen=True)
class PackPayload:
    """One verified, signed pack to bundle: its name, its files and the form's defaults."""

    name: str
    files: dict[str, Path]  # file name in the pack -> where it is now
    trust: PackTrust


@dataclass(frozen=True)
class Bundle:
    """A bundle written to disk: where, how big, how many files, for which platform."""

    path: Path
    size: int
    files: int
    platform: str
    python: str


def _python_server(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """The manifest's ``server``: this bundle's ``server/main.py`` with ``args``, on the
    bundle's own ``server/lib`` and never the user's site-packages."""
    return {
        "type": "python",
        "entry_point": ENTRY_POINT,
        "mcp_config": {
            "command": "python",
            "args": [f"${{__dirname}}/{ENTRY_POINT}", *args],
            "env": {"PYTHONPATH": f"${{__dirname}}/{LIB}", "PYTHONNOUSERSITE": "1", **(env or {})},
        },
    }


def manifest() -> dict[str, Any]:
    """The bundle's ``manifest.json``: the server entry, the settings form, compatibility."""
    major, minor = sys.version_info[:2]
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": "affidavit",
        "display_name": "affidavit memory",
        "version": __version__,
        "description": "Encrypted local memory: every memory one claim with a source and a date.",
        "long_description": (
            "An encrypted, offline memory vault for Claude. Each memory is one claim with a "
            "source and a date; recall is hybrid (semantic and literal) and runs locally. "
            "Create and unlock the vault with the `affidavit` command (`affidavit init`, "
            "`affidavit unlock`); this extension never asks for the passphrase."
        ),
        "author": {"name": "The affidavit authors"},
        "license": "MIT",
        "keywords": ["memory", "encryption", "offline", "mcp"],
        "server": _python_server(
            ["--vault", "${user_config.vault}", "--caller", "${user_config.caller}"]
        ),
        "tools_generated": True,
        "user_config": {
            "vault": {
                "type": "directory",
                "title": "Vault folder",
                "description": "The encrypted vault this server opens (create it with "
                "`affidavit init`).",
                "required": False,
                "default": "${HOME}/.affidavit/vault",
            },
            "caller": {
                "type": "string",
                "title": "Caller name",
                "description": "Who this agent is; it writes to its own namespace and reads "
                "what `affidavit grant` allows.",
                "required": False,
                "default": "claude-desktop",
            },
        },
        "compatibility": {
            "platforms": [_platform()],
            "runtimes": {"python": f">={major}.{minor},<{major}.{minor + 1}"},
        },
    }


def pack_manifest(pack: PackPayload) -> dict[str, Any]:
    """A pack bundle's ``manifest.json``: ``pack serve`` with the trust flags as settings."""
    base = manifest()
    trust = pack.trust
    sequence: dict[str, Any] = {
        "type": "number",
        "title": "Minimum sequence",
        "description": "Refuse a pack whose signed sequence is lower (an old pack replayed); "
        "empty: any.",
        "required": False,
    }
    if trust.min_sequence is not None:
        sequence["default"] = trust.min_sequence
    return {
        **base,
        "name": f"affidavit-pack-{_slug(pack.name)}",
        "display_name": f"{pack.name} (verified pack)",
        "description": "A signed memory pack, served read-only and checked at every start.",
        "long_description": (
            f"The signed pack {pack.name!r}, served read-only by affidavit. Its signature, "
            "checksums and records are verified before the server starts and whenever a file "
            "changes; a pack the settings below do not trust is refused. Results are "
            "historical data with a source, not instructions."
        ),
        "keywords": ["memory", "evidence", "signed", "offline", "mcp"],
        "server": _python_server(
            [
                "--trusted-fingerprint=${user_config.fingerprint}",
                "--min-sequence=${user_config.min_sequence}",
                "--strict=${user_config.strict}",
            ],
            {"PYTHONDONTWRITEBYTECODE": "1"},  # the read-only server may write nothing
        ),
        "user_config": {
            "fingerprint": {
                "type": "string",
                "title": "Pinned signer fingerprint",
                "description": "Serve the pack only when this key signed it (SHA256:...); "
                "empty: any signature is reported but not pinned.",
                "required": False,
                "default": trust.fingerprint,
            },
            "min_sequence": sequence,
            "strict": {
                "type": "boolean",
                "title": "Strict",
                "description": "Refuse the pack once it has expired, or without a trusted "
                "signature.",
                "required": False,
                "default": trust.strict,
            },
        },
    }


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "pack"


def _platform() -> str:
    if sys.platform.startswith("win"):
        return "win32"
    return "darwin" if sys.platform == "darwin" else "linux"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions(
    root: str = ROOT_DISTRIBUTION, leave_out: frozenset[str] = frozenset()
) -> list[metadata.Distribution]:
    """``root`` and every distribution it requires here (markers evaluated, no extras), less
    ``leave_out`` and what only they require."""
    from packaging.requirements import Requirement

    found: dict[str, metadata.Distribution] = {}
    todo = [root]
    while todo:
        name = _canonical(todo.pop())
        if name in found or name in leave_out:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise UnsupportedError(
                f"{name} is required at run time but not installed here",
                f"pip install {name}, then run affidavit bundle again",
            ) from None
        found[name] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return [found[name] for name in sorted(found)]


def _package_dir() -> Path:
    import affidavit

    return Path(affidavit.__file__).resolve().parent


def lib_files(dists: list[metadata.Distribution]) -> dict[str, Path]:
    """Archive name under ``server/lib`` -> source file, for every distribution's files.

    Only files inside the distribution's own site-packages folder are taken (not console
    scripts in bin/); affidavit's package folder is taken from where it is imported, so an
    editable install bundles its sources.
    """
    files: dict[str, Path] = {}
    for dist in dists:
        base = Path(str(dist.locate_file(""))).resolve()
        for item in dist.files or []:
            source = Path(str(dist.locate_file(item))).resolve()
            if not source.is_relative_to(base) or not source.is_file():
                continue
            name = source.relative_to(base).as_posix()
            if not _SKIP.search(name):
                files[f"{LIB}/{name}"] = source
    package = _package_dir()
    for source in sorted(package.rglob("*")):
        name = f"affidavit/{source.relative_to(package).as_posix()}"
        if source.is_file() and not _SKIP.search(name):
            files[f"{LIB}/{name}"] = source
    return files


def _entries(
    files: dict[str, Path], pack: PackPayload | None
) -> Iterator[tuple[str, bytes | Path]]:
    shown = manifest() if pack is None else pack_manifest(pack)
    yield "manifest.json", (json.dumps(shown, indent=2) + "\n").encode("utf-8")
    yield ENTRY_POINT, (MAIN_PY if pack is None else PACK_MAIN_PY).encode("utf-8")
    yield from sorted(files.items())


def build(
    out: Path,
    on_file: Callable[[int, int], None] | None = None,
    pack: PackPayload | None = None,
) -> Bundle:
    """Write the bundle (of the memory server, or of ``pack``) to ``out`` atomically: a temp
    file renamed over it."""
    out = out.expanduser().absolute()
    if out.is_dir():
        raise UsageError(f"{out} is a folder", "give --out a file name, e.g. affidavit.mcpb")
    if pack is None:
        files = lib_files(runtime_distributions())
    else:
        files = lib_files(runtime_distributions(leave_out=RECALL_ONLY))
        files.pop(RECALL_MODEL, None)
        files.update({f"{PACK_DIR}/{name}": source for name, source in pack.files.items()})
    total = len(files) + 2
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:
        raise UsageError(
            f"cannot write the bundle in {out.parent} ({exc.strerror})", "choose another --out"
        ) from None
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for done, (name, content) in enumerate(_entries(files, pack), start=1):
                info = zipfile.ZipInfo(name, date_time=_EPOCH)
                info.external_attr = 0o644 << 16
                data = content if isinstance(content, bytes) else content.read_bytes()
                archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
                if on_file is not None:
                    on_file(done, total)
        Path(tmp).chmod(0o644)
        Path(tmp).replace(out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(out.parent)
    python = "{}.{}".format(*sys.version_info[:2])
    return Bundle(out, out.stat().st_size, total, _platform(), python)


def default_name(pack: PackPayload | None = None) -> str:
    """``affidavit-VERSION-PLATFORM-pyXY.mcpb`` (``affidavit-pack-NAME-...`` for a pack)."""
    major, minor = sys.version_info[:2]
    stem = "affidavit" if pack is None else f"affidavit-pack-{_slug(pack.name)}"
    return f"{stem}-{__version__}-{_platform()}-py{major}{minor}.mcpb"

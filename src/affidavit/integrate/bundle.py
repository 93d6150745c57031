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


@dataclass(frozen=True)
class Bundle:
    """A bundle written to disk: where, how big, how many files, for which platform."""

    path: Path
    size: int
    files: int
    platform: str
    python: str


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
        "server": {
            "type": "python",
            "entry_point": ENTRY_POINT,
            "mcp_config": {
                "command": "python",
                "args": [
                    f"${{__dirname}}/{ENTRY_POINT}",
                    "--vault",
                    "${user_config.vault}",
                    "--caller",
                    "${user_config.caller}",
                ],
                "env": {"PYTHONPATH": f"${{__dirname}}/{LIB}", "PYTHONNOUSERSITE": "1"},
            },
        },
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


def _platform() -> str:
    if sys.platform.startswith("win"):
        return "win32"
    return "darwin" if sys.platform == "darwin" else "linux"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions(root: str = ROOT_DISTRIBUTION) -> list[metadata.Distribution]:
    """``root`` and every distribution it requires here (markers evaluated, no extras)."""
    from packaging.requirements import Requirement

    found: dict[str, metadata.Distribution] = {}
    todo = [root]
    while todo:
        name = _canonical(todo.pop())
        if name in found:
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


def _entries(files: dict[str, Path]) -> Iterator[tuple[str, bytes | Path]]:
    yield "manifest.json", (json.dumps(manifest(), indent=2) + "\n").encode("utf-8")
    yield ENTRY_POINT, MAIN_PY.encode("utf-8")
    yield from sorted(files.items())


def build(out: Path, on_file: Callable[[int, int], None] | None = None) -> Bundle:
    """Write the bundle to ``out`` (atomically: a temp file renamed over it)."""
    out = out.expanduser().absolute()
    if out.is_dir():
        raise UsageError(f"{out} is a folder", "give --out a file name, e.g. affidavit.mcpb")
    files = lib_files(runtime_distributions())
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
            for done, (name, content) in enumerate(_entries(files), start=1):
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


def default_name() -> str:
    """``affidavit-VERSION-PLATFORM-pyXY.mcpb``."""
    major, minor = sys.version_info[:2]
    return f"affidavit-{__version__}-{_platform()}-py{major}{minor}.mcpb"

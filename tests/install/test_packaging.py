"""The install lines of docs/install.md, for real: `python -m build` makes an sdist and, from
that sdist, a wheel; `twine check` accepts both; the wheel installs into a fresh virtual
environment with no index at all (its dependencies, the embedding model included, from a
wheelhouse made beforehand, as on an offline machine), with the tray extra, and the installed
command runs with semantic recall on; `pipx install` of the same wheel puts a working
`affidavit` on pipx's path.

The build runs on a copy of the tracked files, so it leaves nothing in the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import affidavit
from tests.support import REPO_ROOT, cli_env

VERSION = affidavit.__version__
# a build, then a fresh venv of every dependency: minutes, more on a loaded machine
pytestmark = pytest.mark.timeout(1800)


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel built by `python -m build` from a copy of the tracked files."""
    source = tmp_path_factory.mktemp("source")
    tracked = _run(["git", "ls-files", "-z"], cwd=REPO_ROOT).stdout.split("\0")
    for name in filter(None, tracked):
        if (REPO_ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(source)])
    return out


def test_build_makes_one_sdist_and_one_wheel_twine_accepts(dist):
    names = sorted(p.name for p in dist.iterdir())
    assert names == [f"affidavit-{VERSION}-py3-none-any.whl", f"affidavit-{VERSION}.tar.gz"]
    checked = _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())])
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_wheel_carries_the_data_files_and_the_entry_points(dist):
    with zipfile.ZipFile(dist / f"affidavit-{VERSION}-py3-none-any.whl") as wheel:
        names = set(wheel.namelist())
        entry_points = wheel.read(f"affidavit-{VERSION}.dist-info/entry_points.txt").decode()
    assert "affidavit = affidavit.cli.main:main" in entry_points
    assert "[affidavit.verifiers]" in entry_points
    packaged = {n for n in names if n.startswith("affidavit/")}
    in_tree = {
        p.relative_to(REPO_ROOT / "src").as_posix()
        for p in (REPO_ROOT / "src" / "affidavit").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert in_tree - packaged == set(), "files of the package the wheel leaves out"
    with tarfile.open(dist / f"affidavit-{VERSION}.tar.gz") as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "LICENSE"} <= members


@pytest.fixture(scope="module")
def wheelhouse(dist, tmp_path_factory) -> Path:
    """On a connected machine: every dependency as a file, the tray extra's included (pip's
    cache makes reruns cheap)."""
    out = tmp_path_factory.mktemp("wheelhouse")
    _run([sys.executable, "-m", "pip", "download", "--dest", str(out), f"{_wheel(dist)}[tray]"])
    return out


def _wheel(dist: Path) -> Path:
    return dist / f"affidavit-{VERSION}-py3-none-any.whl"


def _offline_env() -> dict[str, str]:
    """The offline machine: no pip configuration, so no index but the one given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PIPX_"))}
    return env | {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_the_wheel_installs_offline_into_a_fresh_venv_and_runs(dist, wheelhouse, tmp_path):
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    with_tray = f"{_wheel(dist)}[tray]"  # docs/install.md's tray line: the extra comes along
    fresh = tmp_path / "fresh"
    _run([sys.executable, "-m", "venv", str(fresh)])
    pip = [str(fresh / "bin" / "python"), "-m", "pip"]
    env = _offline_env()
    _run([*pip, "install", "--no-index", "--find-links", str(wheelhouse), with_tray], env=env)
    listed = _run([*pip, "list", "--format=freeze"], env=env).stdout
    for requirement in [*project["dependencies"], *project["optional-dependencies"]["tray"]]:
        name = requirement.split(";")[0].split("[")[0]
        name = name.split("=")[0].split("<")[0].split(">")[0].strip().lower()
        assert name.replace("_", "-") in listed.lower().replace("_", "-"), name
    home = tmp_path / "home"
    home.mkdir()
    command = fresh / "bin" / "affidavit"
    version = _run([str(command), "--version"], env=cli_env(home))
    assert VERSION in version.stdout
    code = "from affidavit.recall.embedder import availability; print(availability()['semantic'])"
    semantic = _run([str(fresh / "bin" / "python"), "-c", code], env=cli_env(home), cwd=home)
    assert semantic.stdout.strip() == "True", semantic.stderr


def test_pipx_installs_the_wheel_with_the_command_on_its_path(dist, tmp_path):
    """docs/install.md's `pipx install dist/...whl`, on a connected machine as written there
    (pipx itself fetches a current pip for its shared environment): its own environment,
    `affidavit` in pipx's bin folder (here a temporary one, PIPX_HOME and PIPX_BIN_DIR)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIPX_")} | {
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    _run([sys.executable, "-m", "pipx", "install", str(_wheel(dist))], env=env)
    home = tmp_path / "home"
    home.mkdir()
    version = _run([str(tmp_path / "bin" / "affidavit"), "--version"], env=cli_env(home))
    assert VERSION in version.stdout

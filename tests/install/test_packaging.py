"""The install lines of docs/install.md, for real: `python -m build` makes an sdist and, from
that sdist, a wheel; `twine check` accepts both; the wheel installs into a fresh virtual
environment with no index at all (its dependencies, the embedding model included, from a
wheelhouse made beforehand, as on an offline machine), with the tray extra, and the installed
command runs with semantic recall on.

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


def test_the_wheel_installs_offline_into_a_fresh_venv_and_runs(dist, tmp_path):
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    wheel = dist / f"affidavit-{VERSION}-py3-none-any.whl"
    wheelhouse = tmp_path / "wheelhouse"
    # on a connected machine: every dependency as a file (pip's cache makes reruns cheap)
    with_tray = f"{wheel}[tray]"  # docs/install.md's tray line: the extra comes along
    _run([sys.executable, "-m", "pip", "download", "--dest", str(wheelhouse), with_tray])
    fresh = tmp_path / "fresh"
    _run([sys.executable, "-m", "venv", str(fresh)])
    pip = [str(fresh / "bin" / "python"), "-m", "pip"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    # on the offline machine: no index at all
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

"""Every asset the console serves ships in the package, and none is fetched from elsewhere."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from importlib import resources

from tests.support import REPO_ROOT

STATIC = resources.files("affidavit.console") / "static"


def test_every_static_file_is_in_the_package_data_globs():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["affidavit"]
    for item in STATIC.iterdir():
        path = f"console/static/{item.name}"
        assert any(fnmatch(path, glob) for glob in globs), f"{path} would not ship in the wheel"


def test_no_asset_or_page_reaches_for_the_network():
    remote = re.compile(r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}""", re.I)
    sources = [item.read_text(encoding="utf-8") for item in STATIC.iterdir()]
    sources += [
        path.read_text(encoding="utf-8")
        for path in (REPO_ROOT / "src" / "affidavit" / "console").glob("*.py")
    ]
    for text in sources:
        found = [m for m in remote.findall(text) if m != "http://www.w3.org"]  # svg xmlns
        assert not found, found

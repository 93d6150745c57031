"""The sandbox, armed in a real child process: reads work, writes, processes and sockets don't.

Audit hooks cannot be removed, so every probe runs in a fresh interpreter that reports each
outcome as one JSON line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBES = r"""
import json, os, socket, subprocess, sys, tempfile
from pathlib import Path

work = Path(sys.argv[1])
existing = work / "existing.txt"
existing.write_text("before\n")
(work / "probe_module.py").write_text("VALUE = 42\n")
sys.path.insert(0, str(work))

from affidavit.core import sandbox
from affidavit.core.errors import PolicyError
assert not sandbox.is_armed()
sandbox.arm("test probe")

def probe(name, action):
    try:
        result = action()
    except PolicyError as exc:
        print(json.dumps({"probe": name, "refused": True, "message": str(exc),
                          "oserror": isinstance(exc, PermissionError)}))
    else:
        print(json.dumps({"probe": name, "refused": False, "result": repr(result)[:80]}))

probe("read", lambda: existing.read_text())
probe("listdir", lambda: sorted(os.listdir(work)))
probe("stat", lambda: os.stat(existing).st_size)
probe("import", lambda: __import__("probe_module").VALUE)
probe("open_w", lambda: open(work / "new.txt", "w"))
probe("open_a", lambda: open(existing, "a"))
probe("open_rplus", lambda: open(existing, "r+"))
probe("open_x", lambda: open(work / "x.txt", "x"))
probe("os_open_creat", lambda: os.open(work / "c.txt", os.O_WRONLY | os.O_CREAT))
probe("os_open_rdwr", lambda: os.open(existing, os.O_RDWR))
probe("write_text", lambda: existing.write_text("after\n"))
probe("remove", lambda: os.remove(existing))
probe("rename", lambda: os.rename(existing, work / "moved.txt"))
probe("mkdir", lambda: os.mkdir(work / "d"))
probe("chmod", lambda: os.chmod(existing, 0o600))
probe("utime", lambda: os.utime(existing))
probe("symlink", lambda: os.symlink(existing, work / "link"))
probe("tempfile", lambda: tempfile.mkstemp(dir=work))
probe("subprocess", lambda: subprocess.run(["true"]))
probe("system", lambda: os.system("true"))
probe("socket", lambda: socket.socket())
probe("getaddrinfo", lambda: socket.getaddrinfo("localhost", 80))
print(json.dumps({"probe": "after", "content": existing.read_text(),
                  "files": sorted(os.listdir(work))}))
"""

ALLOWED = {"read", "listdir", "stat", "import"}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    work = tmp_path_factory.mktemp("sandbox")
    done = subprocess.run(
        [sys.executable, "-c", PROBES, str(work)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": ""},
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {line["probe"]: line for line in lines}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_reading_still_works(outcomes: dict[str, dict], name: str) -> None:
    assert outcomes[name]["refused"] is False


@pytest.mark.parametrize(
    "name",
    [
        "open_w",
        "open_a",
        "open_rplus",
        "open_x",
        "os_open_creat",
        "os_open_rdwr",
        "write_text",
        "remove",
        "rename",
        "mkdir",
        "chmod",
        "utime",
        "symlink",
        "tempfile",
    ],
)
def test_file_writes_are_refused(outcomes: dict[str, dict], name: str) -> None:
    outcome = outcomes[name]
    assert outcome["refused"] is True
    assert outcome["oserror"] is True  # code that copes with a read-only disk keeps coping
    assert "this process is read-only (test probe)" in outcome["message"]


@pytest.mark.parametrize("name", ["subprocess", "system"])
def test_processes_are_refused(outcomes: dict[str, dict], name: str) -> None:
    assert outcomes[name]["refused"] is True
    assert "start a process" in outcomes[name]["message"]


@pytest.mark.parametrize("name", ["socket", "getaddrinfo"])
def test_sockets_are_refused(outcomes: dict[str, dict], name: str) -> None:
    assert outcomes[name]["refused"] is True
    assert "use a socket" in outcomes[name]["message"]


def test_nothing_changed_on_disk(outcomes: dict[str, dict]) -> None:
    after = outcomes["after"]
    assert after["content"] == "before\n"
    assert after["files"] == ["existing.txt", "probe_module.py"]


def test_unarmed_process_is_not_affected(tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; import affidavit.core.sandbox as s;"
        "p = Path(sys.argv[1]) / 'f.txt'; p.write_text('ok'); print(s.is_armed(), p.read_text())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == ["False", "ok"]


def test_the_pack_server_arms_it_once_stdio_is_connected(tmp_path: Path) -> None:
    from tests.packs._build_fixtures import build_sample

    pack = build_sample(tmp_path / "pack")
    script = (
        "import sys; from pathlib import Path\n"
        "from affidavit.core import sandbox\n"
        "from affidavit.packs.verify import verify_pack\n"
        "from affidavit.servers.packs import serve_pack\n"
        "assert not sandbox.is_armed()\n"
        "serve_pack(verify_pack(Path(sys.argv[1])))  # stdin is empty: serves, then returns\n"
        "try:\n"
        "    open(sys.argv[2], 'w')\n"
        "except sandbox.SandboxViolation as exc:\n"
        "    print('refused:', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(pack), str(tmp_path / "written.txt")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "refused: sandbox: refused to open a file for writing" in done.stdout
    assert "(pack server)" in done.stdout
    assert not (tmp_path / "written.txt").exists()

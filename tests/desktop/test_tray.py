"""``affidavit tray`` on a real X server (Xvfb): it shows the vault locked, a passphrase typed
into its dialog unlocks it and lists the last memories, Lock locks it, Open console starts
the console, Quit ends both. Keys are pressed through the XTEST extension, the screen is read
with a screenshot, window titles with Xlib; the vault is a real one made by the CLI.

Xvfb has no system tray, so the panel opens as a window (what a desktop without a tray gets).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import PYTHON, cli_env, run_cli
from tests.vault.conftest import TEST_PASSPHRASE

if importlib.util.find_spec("pystray") is None:  # importing it needs a display
    pytest.skip("the tray extra is not installed", allow_module_level=True)
Image = pytest.importorskip("PIL.Image")
ImageGrab = pytest.importorskip("PIL.ImageGrab")

LOCKED_RGB = (0xB0, 0x3A, 0x2E)
UNLOCKED_RGB = (0x1E, 0x84, 0x49)
MEMORIES = ("The staging database listens on port 5433.", "Deploys go out on Tuesdays.")


@pytest.fixture
def display() -> Iterator[str]:
    """A private X server (Xvfb) on a free display number."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (.ci/run installs Debian's xvfb)")
    number = next(n for n in range(90, 400) if not Path(f"/tmp/.X{n}-lock").exists())
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    socket = Path(f"/tmp/.X11-unix/X{number}")
    _wait(socket.exists, "Xvfb to start")
    yield f":{number}"
    server.terminate()
    server.wait(timeout=30)


def _wait(ready, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


class Screen:
    """The X server as a user meets it: window titles, a pointer, a keyboard, the pixels."""

    def __init__(self, name: str) -> None:
        from Xlib import display

        self.name = name
        self.x = display.Display(name)

    def titles(self) -> list[str]:
        found: list[str] = []
        todo = [self.x.screen().root]
        while todo:
            for child in todo.pop().query_tree().children:
                title = child.get_wm_name()
                if isinstance(title, bytes):
                    title = title.decode("utf-8", "replace")
                if title:
                    found.append(title)
                todo.append(child)
        return found

    def wait_for_title(self, title: str) -> None:
        _wait(lambda: title in self.titles(), f"a window titled {title!r}")

    def point_at(self, x: int, y: int) -> None:
        from Xlib import X
        from Xlib.ext import xtest

        xtest.fake_input(self.x, X.MotionNotify, x=x, y=y)
        self.x.sync()

    def type(self, text: str) -> None:
        from Xlib import XK, X
        from Xlib.ext import xtest

        for char in text:
            name = {" ": "space", "\n": "Return"}.get(char, char)
            code = self.x.keysym_to_keycode(XK.string_to_keysym(name))
            xtest.fake_input(self.x, X.KeyPress, code)
            xtest.fake_input(self.x, X.KeyRelease, code)
            self.x.sync()
            time.sleep(0.02)

    def shot(self, path: Path) -> Image.Image:
        image = ImageGrab.grab(xdisplay=self.name)
        image.save(path)
        return image


def _pixels(image, rgb: tuple[int, int, int]) -> int:
    counts = image.convert("RGB").getcolors(maxcolors=1 << 24) or []
    return next((count for count, color in counts if color == rgb), 0)


def _cmdlines() -> Iterator[str]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                yield (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="ignore")
            except OSError:
                continue


def _children(pid: int) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):
            continue
    return found


def _status(home: Path) -> str:
    done = run_cli(["status", "--json"], home)
    return json.loads(done.stdout)["state"]


def test_the_tray_shows_unlocks_lists_locks_and_quits(display, home, tmp_path):
    secret = {"AFFIDAVIT_PASSPHRASE": TEST_PASSPHRASE}
    assert run_cli(["init", "--no-integrate"], home, env=secret).returncode == 0
    for text in MEMORIES:
        stored = run_cli(["store", text, "--source", "user"], home, env=secret)
        assert stored.returncode == 0, stored.stderr
    assert _status(home) == "locked"

    env = cli_env(home, {"DISPLAY": display, "BROWSER": "true"})
    log = (tmp_path / "tray.out").open("w+")
    tray = subprocess.Popen([PYTHON, "-m", "affidavit", "tray"], env=env, stdout=log, stderr=log)
    screen = Screen(display)
    try:
        screen.wait_for_title("affidavit: locked")
        time.sleep(1)  # the first paint
        assert _pixels(screen.shot(tmp_path / "1-locked.png"), LOCKED_RGB) > 200

        leaks: list[str] = []
        watching = threading.Event()

        def watch() -> None:  # every process's argv while the passphrase is in play
            while not watching.is_set():
                leaks.extend(c for c in _cmdlines() if TEST_PASSPHRASE in c)
                time.sleep(0.01)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        screen.point_at(120, 120)  # over the panel (at +20+20); the dialog opens under it
        screen.type("u")
        screen.wait_for_title("Unlock affidavit")
        screen.type(TEST_PASSPHRASE)
        screen.shot(tmp_path / "2-dialog.png")
        screen.type("\n")
        screen.wait_for_title(f"affidavit: unlocked ({len(MEMORIES)} recent)")
        watching.set()
        watcher.join()
        assert leaks == [], "the passphrase was in a process's argv"
        assert _status(home) == "unlocked"
        time.sleep(1)
        assert _pixels(screen.shot(tmp_path / "3-unlocked.png"), UNLOCKED_RGB) > 200

        screen.point_at(120, 120)
        screen.type("l")
        screen.wait_for_title("affidavit: locked")
        assert _status(home) == "locked"

        screen.type("c")
        _wait(lambda: any(" console" in c for c in _children(tray.pid)), "the console")
        screen.type("q")
        assert tray.wait(timeout=60) == 0
        assert not any(" console" in c for c in _children(tray.pid))
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait()
    log.seek(0)
    output = log.read()
    assert TEST_PASSPHRASE not in output and "Traceback" not in output, output


def test_without_the_extra_or_a_display_it_says_what_to_do(home):
    env = {"DISPLAY": "", "WAYLAND_DISPLAY": ""}
    done = run_cli(["tray"], home, env={k: v for k, v in env.items()})
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "desktop session" in done.stderr or "affidavit[tray]" in done.stderr


def test_quitting_leaves_no_process_behind(display, home, tmp_path):
    assert os.environ.get("DISPLAY") != display  # the test's own server, not the user's
    env = cli_env(home, {"DISPLAY": display, "BROWSER": "true"})
    tray = subprocess.Popen([PYTHON, "-m", "affidavit", "tray"], env=env)
    screen = Screen(display)
    try:
        screen.wait_for_title("affidavit: no vault")
        screen.point_at(120, 120)
        screen.type("q")
        assert tray.wait(timeout=60) == 0
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait()

"""``affidavit tray``: the icon in the system tray, with the panel behind it.

The icon (pystray) is green when the vault is unlocked and red when it is locked; its menu
lists the state, the last memories stored, Lock, Unlock…, Open console and Quit. Backends
without menus (pystray's plain X11 one) open the panel on a click instead. On an X11 desktop
with no system tray at all (nothing owns the ``_NET_SYSTEM_TRAY`` selection) there is nowhere
to put an icon, so the panel opens as an ordinary window. Menu callbacks run on pystray's
thread and are handed to the Tk thread (:meth:`Panel.post`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from affidavit.core.errors import UnsupportedError
from affidavit.desktop import state as vault_state
from affidavit.desktop.panel import COLORS, Panel

INSTALL_HINT = "pip install 'affidavit[tray]' (pystray and Pillow)"


def _require_gui() -> None:
    """One clear error when the extra or a display is missing, before any window code runs."""
    try:
        import PIL  # noqa: F401
        import pystray  # noqa: F401  (picks its backend on import: no display fails here)
    except ImportError:
        raise UnsupportedError("the tray needs the tray extra", INSTALL_HINT) from None
    except Exception as exc:
        raise UnsupportedError(f"no desktop to show the tray on ({exc})", _DISPLAY) from None


_DISPLAY = "run it in a desktop session (DISPLAY or WAYLAND_DISPLAY set)"


def _x11_tray_present() -> bool:
    """Whether an X11 system tray is running (something owns ``_NET_SYSTEM_TRAY_S<n>``)."""
    from Xlib import X, display

    connection = display.Display()
    try:
        screen = connection.get_default_screen()
        atom = connection.intern_atom(f"_NET_SYSTEM_TRAY_S{screen}")
        owner = connection.get_selection_owner(atom)
        return owner is not None and owner != X.NONE
    finally:
        connection.close()


def _icon_image(state: str) -> Any:
    from PIL import Image, ImageDraw

    image = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse((6, 6, 58, 58), fill=COLORS[state])
    return image


def _has_tray() -> bool:
    if not sys.platform.startswith("linux") or os.environ.get("WAYLAND_DISPLAY"):
        return True  # macOS, Windows and Wayland (AppIndicator) always have somewhere to go
    return _x11_tray_present()


def _menu(panel: Panel) -> Any:
    from pystray import Menu, MenuItem

    def recent() -> list[Any]:
        rows = list(panel.current.recent) or ["(none shown)"]
        return [MenuItem(row, None, enabled=False) for row in rows]

    def act(action: Any) -> Any:
        return lambda _icon, _item: panel.post(action)

    return Menu(
        MenuItem("Open panel", act(panel.root.deiconify), default=True),
        MenuItem(lambda _item: panel.current.title, None, enabled=False),
        MenuItem("Last memories", Menu(recent)),
        Menu.SEPARATOR,
        MenuItem("Lock", act(panel.lock)),
        MenuItem("Unlock…", act(panel.unlock)),
        MenuItem("Open console", act(panel.open_console)),
        MenuItem("Quit", act(panel.quit)),
    )


def run() -> None:
    """Show the tray (or, without a system tray, the panel) until Quit."""
    _require_gui()
    import tkinter as tk

    try:
        root = tk.Tk()
    except tk.TclError as exc:
        raise UnsupportedError(f"no desktop to show the tray on ({exc})", _DISPLAY) from None
    icon: Any = None
    panel = Panel(root)
    if _has_tray():
        import pystray

        root.withdraw()
        image = _icon_image(vault_state.LOCKED)
        icon = pystray.Icon("affidavit", image, "affidavit", menu=_menu(panel))

        def follow(now: vault_state.TrayState) -> None:
            icon.icon = _icon_image(now.state)
            icon.title = now.title
            icon.update_menu()

        panel.on_state = follow
        icon.run_detached()
    panel.refresh_every()
    try:
        root.mainloop()
    finally:
        if icon is not None:
            icon.stop()
        root.destroy()

"""``affidavit tray``: the desktop presence (the optional extra ``affidavit[tray]``)."""

from __future__ import annotations

import click


@click.command("tray")
def tray() -> None:
    """The vault in the system tray: its state, last memories, lock.

    The icon shows locked or unlocked; its menu and panel show the last memories stored and
    Lock, Unlock (a passphrase dialog), Open console and Quit.

    Needs `pip install 'affidavit[tray]'` and a desktop session. Without a system tray the
    panel opens as a window; the keys l, u, c and q press its buttons.
    """
    from affidavit.desktop.tray import run

    run()

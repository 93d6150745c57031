"""The desktop presence: ``affidavit tray``, a tray icon and a small panel (optional extra
``affidavit[tray]``: pystray and Pillow; the panel is Tk).

It shows whether the vault is locked, the last memories stored, and offers Lock, Unlock (a
passphrase dialog), Open console and Quit; everything else stays in the console. It drives
the vault only through the ``affidavit`` command (:mod:`affidavit.desktop.state`), so it holds
no key and follows the CLI's rules.
"""

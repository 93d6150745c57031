"""Getting a passphrase from a person or a script, never from argv.

On a terminal the user is asked (twice when choosing one); otherwise the environment
variable is read (``AFFIDAVIT_PASSPHRASE``, or ``AFFIDAVIT_NEW_PASSPHRASE`` for a new one).
Neither path echoes, logs or repeats the secret in an error message. A passphrase must be
UTF-8 text: bytes in another encoding, typed or in the variable, get one clear error (the
key derivation checks the variable's value; :func:`_ask` checks what was typed). A variable
set to the empty string counts as unset (:func:`affidavit.crypto.passphrases.from_env`), and a
new passphrase must pass the strength rule of :mod:`affidavit.crypto.passphrases` unless the
command was given ``--weak-passphrase-ok``.
"""

from __future__ import annotations

import getpass
import sys

import click

from affidavit.core.errors import AuthError, UsageError
from affidavit.crypto.passphrases import WAIVER_FLAG, check_new, from_env

CURRENT_ENV = "AFFIDAVIT_PASSPHRASE"
NEW_ENV = "AFFIDAVIT_NEW_PASSPHRASE"


def _tty() -> bool:
    return sys.stdin.isatty()


def current(prompt: str = "Vault passphrase: ") -> str:
    """The passphrase that opens the vault now."""
    value = from_env(CURRENT_ENV)
    if value is not None:
        return value
    if not _tty():
        raise AuthError(
            "no passphrase: stdin is not a terminal and AFFIDAVIT_PASSPHRASE is not set",
            "run it in a terminal, or set AFFIDAVIT_PASSPHRASE for this one process",
        )
    return _ask(prompt)


def _ask(prompt: str) -> str:
    """Read a secret from the terminal without echo; typed bytes that are not UTF-8 are one
    clear error, not a traceback that quotes them."""
    try:
        return getpass.getpass(prompt)
    except UnicodeDecodeError:
        from affidavit.crypto.keyslots import not_utf8

        raise not_utf8() from None


weak_ok_option = click.option(
    WAIVER_FLAG,
    "weak_ok",
    is_flag=True,
    help="Accept a new passphrase below the strength rule (12+ characters, not a common "
    "password): for tests and throwaway vaults only.",
)


def choose(env: str = CURRENT_ENV, what: str = "passphrase", *, weak_ok: bool = False) -> str:
    """A new passphrase: asked twice on a terminal, else read from ``env``; refused when it
    is weaker than the rule allows, unless ``weak_ok``."""
    value = from_env(env)
    if value is None:
        if not _tty():
            raise AuthError(
                f"no {what}: stdin is not a terminal and {env} is not set",
                f"run it in a terminal, or set {env} for this one process",
            )
        value = _ask(f"New {what}: ")
        if _ask(f"Repeat the new {what}: ") != value:
            raise UsageError("the two entries differ", "run the command again")
    if not value:
        raise UsageError(f"the {what} is empty", f"choose a non-empty {what}")
    return value if weak_ok else check_new(value, what)


def may_prompt() -> bool:
    """True when a locked vault may be opened by asking the person at the terminal."""
    return from_env(CURRENT_ENV) is None and _tty()

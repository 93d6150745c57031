"""What a passphrase must be: read from the environment (empty means unset), and strong enough
to choose.

Argon2id makes each guess slow, not impossible: a passphrase from a list of common passwords, or
a few characters long, falls to a guessing run against a copied vault whatever the KDF costs.
So a *new* passphrase (``init``, ``passwd``) must have at least :data:`MIN_LENGTH` characters
and must not be a common password or a trivial variation of one (case, spaces, separators,
digits or symbols added at the ends, one character repeated). The rule is deterministic and
offline (ADR 0179); ``--weak-passphrase-ok`` waives it for tests and throwaway vaults. A
passphrase already in use is never judged: opening a vault asks only whether it is right.

An empty ``AFFIDAVIT_PASSPHRASE=`` is treated as unset, so a shell that clears the variable
that way still opens the vault through the unlock session instead of failing as a wrong
passphrase.
"""

from __future__ import annotations

import itertools
import os
import re

from affidavit.core.errors import InputError
from affidavit.core.wording import counted

MIN_LENGTH = 12
WAIVER_FLAG = "--weak-passphrase-ok"

#: The most common passwords and passphrases of public breach lists (lower case, without
#: spaces or separators), and famous examples people copy. Variations are folded onto these
#: by :func:`_folded` before the lookup.
COMMON = frozenset(
    """
    password passw0rd p4ssw0rd pa55word passwort motdepasse contrasena wachtwoord salasana
    123456 1234567 12345678 123456789 1234567890 12345678910 123123 123321 654321 111111 000000
    121212 112233 159753 147258369 987654321 0987654321 1q2w3e4r 1q2w3e4r5t 1qaz2wsx qwerty
    qwertz azerty qwertyuiop asdfgh asdfghjkl zxcvbnm qazwsx qweasdzxc trustno1 letmein welcome
    welcometo iloveyou iloveyoutoo loveyou lovely monkey dragon master shadow sunshine princess
    football baseball basketball soccer hockey superman batman starwars pokemon computer
    internet freedom whatever nothing secret mysecret opensesame changeme changeit default
    admin administrator root toor guest login access letmein1 abc123 abcdef abcdefg abcdefgh
    abcdefghijkl abc12345 a1b2c3 aa123456 qwe123 zaq12wsx michael jennifer jordan hunter
    hunter2 killer charlie andrew thomas daniel jessica ashley matthew robert anthony joshua
    amanda summer winter spring autumn flower cheese chocolate cookie butterfly tigger ginger
    buster pepper maggie sparky mustang ferrari corvette harley yankees cowboys eagles lakers
    liverpool chelsea arsenal blink182 metallica slipknot nirvana 666666 696969 777777 888888
    999999 131313 passwordpassword password1234 mypassword yourpassword thepassword newpassword
    oldpassword correcthorsebatterystaple correcthorse horsebatterystaple trustnoone iloveu
    letmeinplease pleaseletmein ihateyou fuckyou fuckoff mustang1 superstar rockstar
    qwerty123456 qwertyqwerty 1qaz2wsx3edc zxcvbnm123 asdfqwer qwerasdf asdf1234 administrator1
    rootroot adminadmin useruser testtest test1234 test12345 testing123 affidavit
    affidavitvault vaultpassword mastervault masterpassword passphrase mypassphrase
    secretpassphrase thequickbrownfoxjumpsoverthelazydog
    """.split()  # noqa: SIM905 - a word list reads best as words
)
_SEPARATORS = re.compile(r"[\s._\-]+")
_AROUND = re.compile(r"^[\W\d_]+|[\W\d_]+$")
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
)


def from_env(name: str) -> str | None:
    """The passphrase in the environment variable ``name``; None when unset *or empty* (an
    empty passphrase is never one, so ``NAME=`` means "none given", not "wrong")."""
    value = os.environ.get(name)
    return value or None


def _folded(passphrase: str) -> set[str]:
    """The forms a passphrase is looked up in: lower case without separators; then with digits
    and symbols stripped from its ends; then with common letter-for-digit swaps undone."""
    bare = _SEPARATORS.sub("", passphrase.lower())
    core = _AROUND.sub("", bare)
    return {bare, core, bare.translate(_LEET), core.translate(_LEET)}


def weakness(passphrase: str) -> str | None:
    """Why ``passphrase`` is too weak to choose, in words; None when it passes the rule."""
    if len(passphrase) < MIN_LENGTH:
        return f"it has {counted(len(passphrase), 'character')}, fewer than {MIN_LENGTH}"
    if len(set(passphrase.lower())) <= 2:
        return "it repeats one or two characters"
    folded = _folded(passphrase)
    if folded & COMMON or any(_repeated(form) or _sequential(form) for form in folded):
        return "it is a common password, or a small variation of one"
    return None


def _sequential(form: str) -> bool:
    """True for a run like ``123456789012`` or ``lkjihgfedcba`` (digits wrap 9 -> 0)."""
    steps = {ord(b) - ord(a) for a, b in itertools.pairwise(form)}
    return bool(steps) and (steps <= {1, -9} or steps <= {-1, 9})


def _repeated(form: str) -> bool:
    """True for a short block or a common password written over and over (``abcabcabcabc``,
    ``letmeinletmein``)."""
    for size in range(1, len(form) // 2 + 1):
        block = form[:size]
        if len(form) % size == 0 and block * (len(form) // size) == form:
            return size <= 4 or block in COMMON
    return False


def check_new(passphrase: str, what: str = "passphrase") -> str:
    """``passphrase`` if it is UTF-8 text strong enough to choose, else one InputError saying
    why (the passphrase itself is never repeated)."""
    try:
        passphrase.encode("utf-8")
    except UnicodeEncodeError:
        from affidavit.crypto.keyslots import not_utf8  # the KDF's own wording, loaded late

        raise not_utf8() from None
    why = weakness(passphrase)
    if why is not None:
        raise InputError(
            f"the new {what} is too weak: {why}",
            f"choose at least {MIN_LENGTH} characters that are not a common password, e.g. "
            f"four unrelated words (for a test vault only: {WAIVER_FLAG})",
        )
    return passphrase

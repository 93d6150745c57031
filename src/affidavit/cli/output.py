"""How the CLI talks to people and scripts: data on stdout, everything else on stderr.

Stored data (memory text, sources, tags, relation names) may hold anything a model or an
import wrote, including terminal escape sequences that retitle the window, hide text or
write the clipboard (OSC 52), and rich markup such as ``[link=...]``. Human-readable output
shows it only through :func:`shown` or :func:`visible` (errors and warnings too: they may quote
an id, a line of a file or a value the user passed); ``--json`` output is exact JSON, which
escapes control characters itself.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

_log = logging.getLogger("affidavit.cli")


#: C0 and C1 controls, DEL, and the bidirectional overrides and isolates that reorder what a
#: terminal shows ("Trojan Source").
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control picture: ESC shows as ␛
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(value: object) -> str:
    """``value`` as text whose control characters are shown, not obeyed by the terminal."""
    return _UNSAFE.sub(_picture, str(value))


def shown(value: object) -> Text:
    """Stored data ready for a console or a table cell: controls visible, never markup."""
    from rich.text import Text

    return Text(visible(value))


@cache
def _console(name: str) -> Console:
    from rich.console import Console

    return Console(stderr=name == "stderr", highlight=False, soft_wrap=True)


def __getattr__(name: str) -> Console:
    """``stdout`` and ``stderr``: rich consoles, made (and rich imported) on first use, so a
    command that prints one line or JSON never pays for rich."""
    if name in ("stdout", "stderr"):
        return _console(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def print_json(value: Any) -> None:
    """Write ``value`` as one JSON document on stdout (the ``--json`` contract)."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    """A one-line warning on stderr (a log record: ``--quiet`` leaves it out)."""
    _log.warning("%s", message)


def error(message: str) -> None:
    """A one-line error on stderr, whatever the log settings."""
    sys.stderr.write(visible(f"affidavit: error: {message}") + "\n")
    sys.stderr.flush()

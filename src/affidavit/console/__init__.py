"""The local web console: pack maker, pack checker and live proxy verdicts on 127.0.0.1.

``affidavit console`` calls :func:`serve`; everything else is internal to this package.
"""

from __future__ import annotations

from affidavit.console.context import ConsoleSettings
from affidavit.console.server import serve

__all__ = ["ConsoleSettings", "serve"]

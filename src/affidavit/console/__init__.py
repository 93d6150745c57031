"""The local web console on 127.0.0.1: memory, pack maker, pack checker, live proxy verdicts.

``affidavit console`` calls :func:`serve`; ``affidavit proxy --console`` starts one beside the
proxy with :func:`start_beside`. Importing this package is cheap: Starlette and uvicorn are
imported only when a console starts.
"""

from __future__ import annotations

from affidavit.console.server import serve, start_beside, stop_beside
from affidavit.console.settings import ConsoleSettings

__all__ = ["ConsoleSettings", "serve", "start_beside", "stop_beside"]

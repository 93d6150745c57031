"""The local web console on a loopback address: memory, pack maker, pack checker, proxy verdicts.

``affidavit console`` calls :func:`serve`; ``affidavit proxy --console`` starts one beside the
proxy with :func:`start_beside`. Importing this package is cheap: Starlette and uvicorn are
imported only when a console starts.
"""

from __future__ import annotations

from affidavit.console.server import loopback_address, serve, start_beside, stop_beside
from affidavit.console.settings import ConsoleSettings

__all__ = ["ConsoleSettings", "loopback_address", "serve", "start_beside", "stop_beside"]

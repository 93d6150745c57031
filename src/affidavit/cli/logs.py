"""Where log records go while ``affidavit`` runs as a command.

Library modules log through ``logging.getLogger(__name__)`` and never configure logging (a
program that imports affidavit routes the records its own way). The command routes every
logger to stderr, one line per record, in the shape of its own messages
(``affidavit: warning: ...``) and with control characters shown, not obeyed: a record may
quote stored data. Warnings and errors show by default, ``--quiet`` leaves only errors.
``--verbose`` adds affidavit's own info records (twice: debug, with tracebacks); other
libraries stay at warnings, because their debug records may quote what they carry (an MCP
message with a passphrase in it) and a server's stderr often ends up in a client's log file.
stdout is never written: it carries data, or the MCP protocol when the command is a server.

A running proxy (:func:`route_proxy_diagnostics`) reports in its own voice instead: every
record of the proxy plane, one ``affidavit proxy: ...`` line each, whatever the verbosity
(receipts and refusals are what its user watches its stderr for), scrubbed of secrets.
"""

from __future__ import annotations

import logging
import sys

LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}


class OneLine(logging.Formatter):
    """``affidavit: LEVEL: message``, on one line whatever the message holds.

    An exception attached to the record is named in the same line; its traceback is added
    only at debug verbosity, where the reader asked for everything.
    """

    def __init__(self, *, tracebacks: bool) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        from affidavit.cli.output import visible

        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            message = f"{message} ({type(error).__name__}: {error})"
        line = visible(f"affidavit: {record.levelname.lower()}: {message}")
        if self.tracebacks and record.exc_info:
            return line + "\n" + self.formatException(record.exc_info)
        return line


class ProxyLines(logging.StreamHandler):
    """``affidavit proxy: message`` on stderr, with anything that looks like a secret scrubbed
    (a backend's error text or a verifier's claim may quote one). A stderr that is gone
    (the client closed it) drops the line silently: the proxy keeps relaying."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def format(self, record: logging.LogRecord) -> str:
        from affidavit.core.secret_text import scrub

        return f"affidavit proxy: {scrub(record.getMessage())}"

    def handleError(self, record: logging.LogRecord) -> None:
        """Nothing: there is nowhere left to report a failed diagnostic line."""


def route_proxy_diagnostics() -> None:
    """Send the proxy plane's records (``affidavit.proxy.*``, info and up) to stderr in the
    proxy's words, and only there."""
    proxy = logging.getLogger("affidavit.proxy")
    proxy.handlers[:] = [ProxyLines()]
    proxy.setLevel(logging.INFO)
    proxy.propagate = False


def configure(verbosity: int) -> None:
    """Send log records to stderr: affidavit's at ``verbosity``'s level, others' from
    warnings up (errors only when quiet). Replaces whatever an earlier call installed, so two
    commands in one process are safe."""
    level = LEVELS.get(verbosity, logging.DEBUG)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine(tracebacks=level <= logging.DEBUG))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(level, logging.WARNING))
    logging.getLogger("affidavit").setLevel(level)

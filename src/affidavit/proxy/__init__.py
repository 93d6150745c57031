"""The tool plane: a transparent JSON-RPC relay that verifies what MCP tools claim.

Public API (every name is loaded on first use: ``affidavit audit verify`` never imports the
relay or an HTTP client)::

    from affidavit.proxy import Relay, ProxyInterceptor, ProxyOptions

    Relay(backend).run(make_interceptor) -> exit code   forward every message byte for
        byte, except around what the interceptor judges (tools/call, resources/read)
    ProxyInterceptor(relay, options)   policy, pins, verified replay, verifiers, audit log
    ProxyOptions                     what the command line configured (``remember``: a callable
        that hears of each VERIFIED state change once its audit entry is written, as a
        VerifiedChange(text, tool, verifier, log, entry, when): ``proxy run --remember``)
    StdioBackend(argv), HttpBackend(url, headers), validate_url(url)   the two backends
    load_policy(path) -> Policy      a policy file, checked (verimcp's spellings too)
    SamplingLimit(limit, window_s)   a limit on backend sampling requests
    validate_cli_roots(paths)        the roots given with --root
    make_telemetry(exporter, endpoint) -> Telemetry | None   optional OpenTelemetry
    Verifier, load_verifiers()       the verifier contract, and every installed plugin
    github_api_url_problem(url)      why a --github-api URL cannot be used (None: it can)
    PINS_FILE, trust_tools(path, tools=None, backend=None) -> [changes]   accept changed
        tool definitions (``affidavit proxy trust-tools``)

    The audit log (hash-chained JSONL, nothing secret in it):
    AuditLog(path, session), AuditEntry (one entry, typed), default_log_path(),
    read_entries(path) -> [AuditEntry] (a broken chain is refused), verify_log(path) -> LogReport
        (a verimcp log is read as well, and reported as not chained)
    check_receipt(path, entry_hash) -> ReceiptCheck   whether an entry of an intact chain
        still proves a VERIFIED call (a memory's evidence); read_receipts(path) -> ReceiptBook
        reads and verifies the log once, .check(entry_hash) for each of its receipts
    LogFollower(path).poll() -> LogUpdate   the entries appended since the last poll (the
        console's live feed), each link verified as it is read
    backtest(entries, policy) -> Backtest   which recorded calls a new policy would decide
        differently (``affidavit proxy replay`` and the console)
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.proxy.audit import (
        AuditEntry,
        AuditLog,
        LogFollower,
        LogReport,
        LogUpdate,
        ReceiptBook,
        ReceiptCheck,
        check_receipt,
        default_log_path,
        read_entries,
        read_receipts,
        verify_log,
    )
    from affidavit.proxy.backend_http import HttpBackend, validate_url
    from affidavit.proxy.backend_stdio import StdioBackend
    from affidavit.proxy.backtest import Backtest, backtest
    from affidavit.proxy.changes import VerifiedChange
    from affidavit.proxy.intercept import ProxyInterceptor
    from affidavit.proxy.options import ProxyOptions
    from affidavit.proxy.otel import make_telemetry
    from affidavit.proxy.pinning import PINS_FILE
    from affidavit.proxy.pinning import trust as trust_tools
    from affidavit.proxy.policy import SamplingLimit, load_policy
    from affidavit.proxy.relay import Relay
    from affidavit.proxy.roots import validate_cli_roots
    from affidavit.proxy.verifiers.base import Verifier
    from affidavit.proxy.verifiers.github import api_url_problem as github_api_url_problem
    from affidavit.proxy.verifiers.registry import load_verifiers

__all__ = [
    "PINS_FILE",
    "AuditEntry",
    "AuditLog",
    "Backtest",
    "HttpBackend",
    "LogFollower",
    "LogReport",
    "LogUpdate",
    "ProxyInterceptor",
    "ProxyOptions",
    "ReceiptBook",
    "ReceiptCheck",
    "Relay",
    "SamplingLimit",
    "StdioBackend",
    "VerifiedChange",
    "Verifier",
    "backtest",
    "check_receipt",
    "default_log_path",
    "github_api_url_problem",
    "load_policy",
    "load_verifiers",
    "make_telemetry",
    "read_entries",
    "read_receipts",
    "trust_tools",
    "validate_cli_roots",
    "validate_url",
    "verify_log",
]
__getattr__, __dir__ = lazy_exports(globals())

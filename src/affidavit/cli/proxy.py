"""``affidavit proxy run`` (the verifying MCP proxy), ``proxy trust-tools``, ``proxy trust-log``
and ``proxy replay``.

Everything after ``--`` is the backend command; :class:`_BackendCommand` splits it off before
option parsing so backend flags never collide with ours. ``affidavit proxy [OPTIONS] -- CMD``
(what client configs say) is ``proxy run``: the group's default command. The proxy plane is
imported inside the commands.

verimcp's command line carries over unchanged (``--policy-config``, ``--verifiers``,
``--sampling-limit``/``--sampling-window``, ``--approval-timeout``, and ``replay LOG
--policy-config P --session S``), so a client config that ran ``verimcp ARGS`` runs
``affidavit proxy ARGS``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from affidavit.cli import logs
from affidavit.cli.output import print_json, warn
from affidavit.cli.params import EXISTING, MANY, PATH, json_option
from affidavit.core.errors import UsageError

if TYPE_CHECKING:
    from affidavit.intake import CallMemories
    from affidavit.proxy import VerifiedChange

_BACKEND_ARGV = "affidavit.proxy.backend_argv"
_SENSITIVE = re.compile(r"(authorization|token|key|secret|cookie|password|credential)", re.I)
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _BackendCommand(click.Command):
    """Take everything after ``--`` as the backend command before click parses options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta[_BACKEND_ARGV] = args[cut + 1 :]
            args = args[:cut]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "-- BACKEND CMD ARGS..."]


def _env(name: str, flag: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise UsageError(f"{flag}: the environment variable {name} is not set", f"export {name}")
    return value


def _expand(value: str, flag: str) -> str:
    """``value`` with each ``${ENV}`` replaced by that variable's value."""
    return _ENV_REF.sub(lambda match: _env(match[1], flag), value)


def parse_headers(literal: list[str], from_env: list[str]) -> dict[str, str]:
    """Headers for an HTTP backend; secrets come only from the environment.

    ``--header 'K: V'`` may reference ``${ENV}``; a literal value for a credential-looking
    header is refused, so a token never has to sit in argv or a client config.
    """
    headers: dict[str, str] = {}
    for item in literal:
        name, sep, value = item.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise UsageError(
                f"--header {name or item!r} is not 'Name: value'", "e.g. 'X-Team: core'"
            )
        if _SENSITIVE.search(name) and not _ENV_REF.search(value):
            raise UsageError(
                f"--header {name} carries a credential in the command line",
                f"use --header '{name}: Bearer ${{ENV}}' or --header-from-env {name}=ENV",
            )
        headers[name] = _expand(value, f"--header {name}")
    for item in from_env:
        name, sep, env = item.partition("=")
        if not sep or not name.strip() or not env.strip():
            raise UsageError(
                f"--header-from-env {item!r} is not NAME=ENV", "e.g. Authorization=TOKEN"
            )
        headers[name.strip()] = _env(env.strip(), f"--header-from-env {name.strip()}")
    return headers


def _load_verifiers(specs: list[str], names: str | None = None) -> tuple[Any, ...]:
    """Built-in and entry-point verifiers (only those ``names`` lists, when given), plus
    ``--verifier MODULE:ATTR`` ones."""
    import importlib

    from affidavit.proxy import Verifier, load_verifiers

    loaded: list[Any] = list(load_verifiers(names.split(",") if names is not None else None))
    for spec in specs:
        module_name, sep, attr = spec.partition(":")
        if not sep:
            raise UsageError(
                f"--verifier {spec!r} is not MODULE:ATTR", "e.g. mypkg.checks:MyVerifier"
            )
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise UsageError(
                f"--verifier {spec!r} cannot be loaded ({exc})", "check the name"
            ) from None
        verifier = target() if isinstance(target, type) else target
        if not isinstance(verifier, Verifier):
            raise UsageError(
                f"--verifier {spec!r} is not a verifier",
                "it needs what affidavit.proxy.verifiers.base.Verifier lists: name, applies, "
                "snapshot, verify, still_holds",
            )
        loaded.insert(0, verifier)
    return tuple(loaded)


@click.command("run", cls=_BackendCommand)
@click.option("--root", type=EXISTING, **MANY, help="A directory verifiers may look in.")
@click.option(
    "--idempotent-replay", is_flag=True, help="Answer a retry of a VERIFIED call from its result."
)
@click.option("--receipts", is_flag=True, help="Append each receipt to the result.")
@click.option(
    "--policy", "--policy-config", "policy", type=EXISTING, help="YAML allow/deny/approval rules."
)
@click.option("--pin-tools", is_flag=True, help="Refuse tools that changed.")
@click.option("--audit-log", type=PATH, help="Hash-chained JSONL log.")
@click.option("--backend-url", help="Streamable HTTP URL.")
@click.option("--header", **MANY, help="'Name: value' (may use ${ENV}).")
@click.option("--header-from-env", **MANY, help="NAME=ENV: header NAME with the value of $ENV.")
@click.option("--otel-exporter", help="console or otlp.")
@click.option("--otel-endpoint", help="OTLP HOST:PORT.")
@click.option("--verifier", **MANY, help="Extra verifier MODULE:ATTR.")
@click.option("--github-api", help="GitHub REST API URL to check GitHub claims against.")
@click.option("--verifiers", help="Load only these installed verifiers (comma-separated names).")
@click.option("--sampling-limit", type=int, help="Backend sampling requests allowed per window.")
@click.option(
    "--sampling-window", type=float, default=60.0, help="Seconds of the --sampling-limit window."
)
@click.option(
    "--approval-timeout", type=float, default=600.0, help="Seconds to wait for an approval."
)
@click.option("--verify-timeout", type=float, default=60.0, help="Seconds per verifier step.")
@click.option(
    "--console", is_flag=True, help="Also open the web console on this audit log (link on stderr)."
)
@click.option(
    "--remember",
    metavar="NAMESPACE",
    help="Turn VERIFIED state changes into memories for NAMESPACE (review, or auto_store).",
)
@click.pass_context
def run(
    ctx: click.Context,
    root: tuple[Path, ...],
    idempotent_replay: bool,
    receipts: bool,
    policy: Path | None,
    pin_tools: bool,
    audit_log: Path | None,
    backend_url: str | None,
    header: tuple[str, ...],
    header_from_env: tuple[str, ...],
    otel_exporter: str | None,
    otel_endpoint: str | None,
    verifier: tuple[str, ...],
    verifiers: str | None,
    github_api: str | None,
    sampling_limit: int | None,
    sampling_window: float,
    approval_timeout: float,
    verify_timeout: float,
    console: bool,
    remember: str | None,
) -> None:
    """Run the proxy in front of one MCP server.

    It verifies the server's claims, answers verified retries from their result and enforces
    a policy. The backend is the command after `--`, or the server at the --backend-url URL.
    The policy file's format: `affidavit proxy --help`.
    """
    import asyncio
    from urllib.parse import urlparse

    from affidavit.core import offline
    from affidavit.proxy import (
        AuditLog,
        ProxyInterceptor,
        ProxyOptions,
        Relay,
        SamplingLimit,
        default_log_path,
        load_policy,
        make_telemetry,
        validate_cli_roots,
    )

    argv = list(ctx.meta.get(_BACKEND_ARGV, []))
    if backend_url is not None and argv:
        raise UsageError("give either --backend-url or a command after `--`, not both")
    if backend_url is None and (header or header_from_env):
        raise UsageError("--header and --header-from-env need --backend-url")
    for flag, seconds in (
        ("--verify-timeout", verify_timeout),
        ("--approval-timeout", approval_timeout),
        ("--sampling-window", sampling_window),
    ):
        if seconds <= 0:
            raise UsageError(f"{flag} must be positive")
    if sampling_limit is not None and sampling_limit < 0:
        raise UsageError("--sampling-limit must be a whole number >= 0")
    settings: dict[str, Any] = {}
    if github_api is not None:
        from affidavit.proxy import github_api_url_problem

        problem = github_api_url_problem(github_api)
        if problem is not None:
            raise UsageError(f"--github-api: {problem}", "e.g. --github-api https://api.github.com")
        settings["github_api_url"] = github_api
    backend: Any
    if backend_url is not None:
        from affidavit.proxy import HttpBackend, validate_url

        validate_url(backend_url)
        offline.allow([urlparse(backend_url).hostname or ""])
        backend = HttpBackend(backend_url, parse_headers(list(header), list(header_from_env)))
    else:
        from affidavit.proxy import StdioBackend

        backend = StdioBackend(argv)
    if otel_endpoint:
        offline.allow([otel_endpoint.rsplit(":", 1)[0].strip("[]")])
    log_path = Path(os.path.normpath((audit_log or default_log_path()).expanduser().absolute()))
    AuditLog(log_path, session="").check_writable()
    memories = _call_memories(remember, log_path) if remember is not None else None
    options = ProxyOptions(
        audit_log=log_path,
        roots=validate_cli_roots(list(root)),
        idempotent_replay=idempotent_replay,
        receipts=receipts,
        policy=load_policy(policy) if policy is not None else None,
        pin_tools=pin_tools,
        verifiers=_load_verifiers(list(verifier), verifiers),
        verify_timeout=verify_timeout,
        settings=settings,
        telemetry=make_telemetry(otel_exporter, otel_endpoint),
        sampling=(
            SamplingLimit(sampling_limit, sampling_window) if sampling_limit is not None else None
        ),
        approval_timeout=approval_timeout,
        remember=_remember_into(memories) if memories is not None else None,
    )
    relay = Relay(backend)
    logs.route_proxy_diagnostics()  # from here on the proxy speaks for itself on stderr
    beside = None
    if console:
        from affidavit.console import start_beside

        beside = start_beside(log_path)
    try:
        code = asyncio.run(relay.run(lambda r: ProxyInterceptor(r, options)))
    finally:
        if beside is not None:
            from affidavit.console import stop_beside

            stop_beside(beside)
        if memories is not None:
            memories.close()
    ctx.exit(code)


def _call_memories(namespace: str, log: Path) -> CallMemories:
    """``--remember NAMESPACE``: the queue each verified change goes to (docs/evidence.md);
    it registers ``log`` as a receipt log the vault trusts when it opens the vault."""
    from affidavit.access import check_name
    from affidavit.cli.opening import open_memory_unasked
    from affidavit.intake import CallMemories

    check_name(namespace, "--remember")
    return CallMemories(namespace, log, open_memory_unasked, warn)


def _remember_into(memories: CallMemories) -> Callable[[VerifiedChange], None]:
    """What the proxy (tool plane) calls with each VERIFIED change once its audit entry is
    written: the change as a claim with its receipt (memory plane), queued."""
    from affidavit.intake import CallClaim
    from affidavit.recall import ToolReceipt

    def remember(change: VerifiedChange) -> None:
        source = f"affidavit proxy verified {change.tool} ({change.verifier}) at {change.when}"
        memories.put(CallClaim(change.text, source, ToolReceipt(change.log, change.entry)))

    return remember


@click.command("trust-tools")
@click.option("--audit-log", type=PATH, help="The log the pins sit beside.")
@click.option("--tool", **MANY, help="Trust only this tool (repeatable).")
@click.option("--backend", help="Only this backend (as listed).")
def trust_tools(audit_log: Path | None, tool: tuple[str, ...], backend: str | None) -> None:
    """Accept tool definitions that changed since they were pinned."""
    from affidavit.cli.output import stdout
    from affidavit.proxy import PINS_FILE, default_log_path, trust_tools

    path = (audit_log or default_log_path()).expanduser().absolute().parent / PINS_FILE
    accepted = trust_tools(path, set(tool) if tool else None, backend)
    if not accepted:
        stdout.print("nothing to trust: no changed tool definitions are waiting")
        return
    for change in accepted:
        stdout.print(
            f"trusted {change.tool} ({change.backend}): now pinned at {change.seen[:16]}",
            markup=False,
        )
        stdout.print(f"  its description now reads: {change.description!r}", markup=False)


@click.command("trust-log")
@click.argument("path", type=PATH, required=False, help="A proxy audit log (--audit-log).")
@click.option("--remove", is_flag=True, help="Stop trusting PATH's receipts.")
@click.option("--list", "list_", is_flag=True, help="Show the trusted logs instead.")
@json_option
def trust_log(path: Path | None, remove: bool, list_: bool, as_json: bool) -> None:
    """Trust the receipts in the proxy audit log PATH.

    A memory's receipt proves something only when its log is the proxy's default log or one
    registered here (sealed in the vault; `proxy run --remember` registers its own log).
    --remove takes PATH off again: memories resting on it then show as stale.
    """
    from affidavit.cli.opening import open_vault
    from affidavit.cli.output import stdout
    from affidavit.recall import default_receipt_log, registered_logs, trust_log, untrust_log

    if list_ == (path is not None):
        raise UsageError("pass PATH (with --remove to stop trusting it), or --list")
    line = ""
    with open_vault() as vault:
        if path is not None and remove:
            line = f"no longer trusted: {untrust_log(vault, path)}"
        elif path is not None:
            key, new = trust_log(vault, path)
            line = f"{'trusted' if new else 'already trusted'}: {key}"
        registered = registered_logs(vault)
    if as_json:
        print_json({"default": default_receipt_log(), "registered": list(registered)})
    elif line:
        stdout.print(line, markup=False)
    else:
        stdout.print(f"{default_receipt_log()} (the default log)", markup=False)
        for log in registered:
            stdout.print(log, markup=False)


@click.command("replay")
@click.argument("audit", type=EXISTING, help="An audit log written by the proxy (or by verimcp).")
@click.option(
    "--policy",
    "--policy-config",
    "policy",
    type=EXISTING,
    required=True,
    help="The new policy to back-test.",
)
@click.option("--session", help="Only the calls of this proxy session.")
@json_option
def replay(audit: Path, policy: Path, session: str | None, as_json: bool) -> None:
    """Back-test a new policy on an audit log.

    Reports which recorded calls it would have decided differently. A verimcp audit log is
    read too (it is not hash-chained, so it is taken as it is).
    """
    from affidavit.cli.output import stdout
    from affidavit.proxy import backtest, load_policy, read_entries

    entries = read_entries(audit)
    if session is not None:
        entries = [e for e in entries if e.get("session") == session]
    report = backtest(entries, load_policy(policy))
    if as_json:
        print_json(report.as_dict())
        return
    stdout.print(
        f"{report.calls} recorded calls; {len(report.changed)} would be decided differently"
    )
    for row in report.changed:
        rule = f"rule {row.rule}" if row.rule else "the default"
        change = f"{row.was} -> {row.would_be}"
        stdout.print(f"  #{row.call} {row.ts} {row.tool}: {change} ({rule})")

"""``affidavit proxy``: the verifying MCP proxy, ``proxy trust-tools`` and ``proxy replay``.

Everything after ``--`` is the backend command; the group splits it off before option parsing
so backend flags never collide with ours. The proxy plane is imported inside the commands.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from affidavit.cli.output import print_json, stdout
from affidavit.core.errors import UsageError

_BACKEND_ARGV = "affidavit.proxy.backend_argv"
_SENSITIVE = re.compile(r"(authorization|token|key|secret|cookie|password|credential)", re.I)
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _ProxyGroup(TyperGroup):
    """Take everything after ``--`` as the backend command before click parses options."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta[_BACKEND_ARGV] = args[cut + 1 :]
            args = args[:cut]
        return super().parse_args(ctx, args)


POLICY_HELP = """Policy file (--policy) is YAML; rules are tried in order, the first match
decides:

\b
  default: allow                     # allow | deny | require-approval
  rules:
    - tool: "write_*"                # glob on the tool name
      arguments: {path: "secrets/*"} # every listed argument must match its glob
      action: deny                   # allow | deny | require-approval
      reason: secrets are off limits
  sampling: {max_per_minute: 10}     # backend sampling requests allowed per minute

A path is matched as written, in normal form, and wherever it really leads (symlinks
resolved) from the roots and the backend's own directories; deny and require-approval match
any of these readings, allow must hold for all of them. A resource read is decided as a call
to the tool resources/read with the arguments uri and, for a file resource, path."""

proxy_app = typer.Typer(
    cls=_ProxyGroup,
    invoke_without_command=True,
    add_completion=False,
    rich_markup_mode=None,
    help=(
        "Front an MCP server: verify its claims, replay verified retries, enforce a policy. "
        "Run it as: affidavit proxy [OPTIONS] -- BACKEND CMD ARGS...  (or --backend-url URL)."
    ),
    epilog=POLICY_HELP,
)


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


def _load_verifiers(specs: list[str]) -> tuple[Any, ...]:
    """Built-in and entry-point verifiers, plus ``--verifier MODULE:ATTR`` ones."""
    import importlib

    from affidavit.proxy.verifiers.base import Verifier

    loaded: list[Any] = []
    try:
        from affidavit.proxy.verifiers.registry import load_verifiers
    except ImportError:
        pass
    else:
        loaded.extend(load_verifiers())
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


_Strs = list[str] | None
_Opt = typer.Option


@proxy_app.callback()
def proxy(
    ctx: typer.Context,
    root: Annotated[
        list[Path] | None, _Opt("--root", help="A directory verifiers may look in.")
    ] = None,
    idempotent_replay: Annotated[
        bool, _Opt("--idempotent-replay", help="Answer a retry of a VERIFIED call from its result.")
    ] = False,
    receipts: Annotated[
        bool, _Opt("--receipts", help="Append each receipt to the result.")
    ] = False,
    policy: Annotated[Path | None, _Opt("--policy", help="YAML allow/deny/approval rules.")] = None,
    pin_tools: Annotated[bool, _Opt("--pin-tools", help="Refuse tools that changed.")] = False,
    audit_log: Annotated[Path | None, _Opt("--audit-log", help="Hash-chained JSONL log.")] = None,
    backend_url: Annotated[str | None, _Opt("--backend-url", help="Streamable HTTP URL.")] = None,
    header: Annotated[_Strs, _Opt("--header", help="'Name: value' (may use ${ENV}).")] = None,
    header_from_env: Annotated[
        _Strs, _Opt("--header-from-env", help="NAME=ENV: header NAME with the value of $ENV.")
    ] = None,
    otel_exporter: Annotated[str | None, _Opt("--otel-exporter", help="console or otlp.")] = None,
    otel_endpoint: Annotated[str | None, _Opt("--otel-endpoint", help="OTLP HOST:PORT.")] = None,
    verifier: Annotated[_Strs, _Opt("--verifier", help="Extra verifier MODULE:ATTR.")] = None,
    verify_timeout: Annotated[
        float, _Opt("--verify-timeout", help="Seconds per verifier step.")
    ] = 60.0,
    console: Annotated[
        bool,
        _Opt("--console", help="Also open the web console on this audit log (link on stderr)."),
    ] = False,
) -> None:
    """Run the proxy: ``affidavit proxy [OPTIONS] -- BACKEND CMD ARGS...``."""
    if ctx.invoked_subcommand is not None:
        return
    root, header, header_from_env = root or [], header or [], header_from_env or []
    import asyncio
    from urllib.parse import urlparse

    from affidavit.core import offline
    from affidavit.proxy.audit import AuditLog, default_log_path
    from affidavit.proxy.intercept import ProxyInterceptor
    from affidavit.proxy.options import ProxyOptions
    from affidavit.proxy.otel import make_telemetry
    from affidavit.proxy.policy import load_policy
    from affidavit.proxy.relay import Relay
    from affidavit.proxy.roots import validate_cli_roots

    argv = list(ctx.meta.get(_BACKEND_ARGV, []))
    if backend_url is not None and argv:
        raise UsageError("give either --backend-url or a command after `--`, not both")
    if backend_url is None and (header or header_from_env):
        raise UsageError("--header and --header-from-env need --backend-url")
    if verify_timeout <= 0:
        raise UsageError("--verify-timeout must be positive")
    backend: Any
    if backend_url is not None:
        from affidavit.proxy.backend_http import HttpBackend, validate_url

        validate_url(backend_url)
        offline.allow([urlparse(backend_url).hostname or ""])
        backend = HttpBackend(backend_url, parse_headers(header, header_from_env))
    else:
        from affidavit.proxy.backend_stdio import StdioBackend

        backend = StdioBackend(argv)
    if otel_endpoint:
        offline.allow([otel_endpoint.rsplit(":", 1)[0].strip("[]")])
    log_path = (audit_log or default_log_path()).expanduser().absolute()
    AuditLog(log_path, session="").check_writable()
    options = ProxyOptions(
        audit_log=log_path,
        roots=validate_cli_roots(root),
        idempotent_replay=idempotent_replay,
        receipts=receipts,
        policy=load_policy(policy) if policy is not None else None,
        pin_tools=pin_tools,
        verifiers=_load_verifiers(verifier or []),
        verify_timeout=verify_timeout,
        telemetry=make_telemetry(otel_exporter, otel_endpoint),
    )
    relay = Relay(backend)
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
    raise typer.Exit(code)


@proxy_app.command("trust-tools")
def trust_tools(
    audit_log: Annotated[
        Path | None, typer.Option("--audit-log", help="The log the pins sit beside.")
    ] = None,
    tool: Annotated[_Strs, _Opt("--tool", help="Trust only this tool (repeatable).")] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="Only this backend (as listed).")
    ] = None,
) -> None:
    """Accept tool definitions that changed since they were pinned."""
    from affidavit.proxy.audit import default_log_path
    from affidavit.proxy.pinning import PINS_FILE, trust

    path = (audit_log or default_log_path()).expanduser().absolute().parent / PINS_FILE
    accepted = trust(path, set(tool) if tool else None, backend)
    if not accepted:
        stdout.print("nothing to trust: no changed tool definitions are waiting")
        return
    for change in accepted:
        stdout.print(
            f"trusted {change.tool} ({change.backend}): now pinned at {change.seen[:16]}",
            markup=False,
        )
        stdout.print(f"  its description now reads: {change.description!r}", markup=False)


@proxy_app.command("replay")
def replay(
    audit: Annotated[Path, typer.Argument(help="An audit log written by the proxy.")],
    policy: Annotated[Path, _Opt("--policy", help="The new policy to back-test.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Report which past calls a new policy would have decided differently."""
    from affidavit.proxy.audit import read_entries
    from affidavit.proxy.backtest import backtest
    from affidavit.proxy.policy import load_policy

    report = backtest(read_entries(audit), load_policy(policy))
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


def register(app: typer.Typer) -> None:
    """Add ``affidavit proxy`` and its subcommands."""
    app.add_typer(proxy_app, name="proxy")

"""The command tree of ``affidavit``: one group per plane, each command named by import path.

Reading this file is reading ``affidavit --help``: every group in the order help shows it
(``demo`` first: it is where to start), the module that holds each command, and the older
top-level names kept as aliases (``affidavit store`` is ``affidavit memory store``; MCP client
configs written before the groups existed run ``affidavit serve`` and ``affidavit proxy --``).
Importing it costs click and nothing else; a command's module is imported when it runs.
"""

from __future__ import annotations

import click

from affidavit import __version__
from affidavit.cli.lazy import HELP_OPTIONS, LazyGroup

_VAULT = "affidavit.cli.vault"
_RECALL = "affidavit.cli.recall"
_SERVER = "affidavit.cli.memory_server"
_INTEGRATE = "affidavit.cli.integrate"
_MAINTENANCE = "affidavit.cli.maintenance"

memory = LazyGroup(
    "memory",
    help="The encrypted memory vault and its MCP server.",
    commands={
        "init": f"{_VAULT}:init",
        "unlock": f"{_VAULT}:unlock",
        "lock": f"{_VAULT}:lock",
        "status": f"{_VAULT}:status",
        "store": f"{_RECALL}:store",
        "search": f"{_RECALL}:search",
        "recent": f"{_RECALL}:recent",
        "namespaces": f"{_RECALL}:namespaces",
        "get": f"{_VAULT}:get",
        "forget": f"{_VAULT}:forget",
        "expire": f"{_RECALL}:expire",
        "link": f"{_RECALL}:link",
        "relations": f"{_RECALL}:relations",
        "unlink": f"{_RECALL}:unlink",
        "export": f"{_VAULT}:export",
        "import": "affidavit.cli.intake:import_",
        "serve": f"{_SERVER}:serve",
        "grant": f"{_SERVER}:grant",
        "unlock-tool": f"{_SERVER}:unlock_tool",
        "passwd": f"{_VAULT}:passwd",
        "2fa": LazyGroup(
            "2fa",
            help="Require a keyfile as well as the passphrase, or stop.\n\n"
            "Both feed Argon2id: once it is on, the passphrase alone opens nothing.",
            commands={"enable": f"{_VAULT}:twofa_enable", "disable": f"{_VAULT}:twofa_disable"},
        ),
        "verify": f"{_VAULT}:verify",
        "reindex": f"{_MAINTENANCE}:reindex",
        "retag": f"{_MAINTENANCE}:retag",
        "atomize": f"{_MAINTENANCE}:atomize",
        "selftest": f"{_MAINTENANCE}:selftest",
        "settings": f"{_MAINTENANCE}:settings",
        "migrate": "affidavit.cli.migrate:migrate",
        "bench": LazyGroup(
            "bench",
            help="Reproducible benchmarks of this installation.",
            commands={"retrieval": f"{_RECALL}:bench_retrieval"},
        ),
        "token": "affidavit.cli.tokens:token",
    },
)

pack = LazyGroup(
    "pack",
    help="Build, sign, verify and serve signed memory packs.",
    commands={
        "build": "affidavit.cli.pack_build:build",
        "sign": "affidavit.cli.pack_sign:sign",
        "verify": "affidavit.cli.pack_verify:verify",
        "serve": "affidavit.cli.pack_serve:serve",
        "messages": "affidavit.cli.pack_build:messages",
        "install": "affidavit.cli.pack_install:install",
        "uninstall": "affidavit.cli.pack_install:uninstall",
    },
)

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

proxy = LazyGroup(
    "proxy",
    help="A verifying proxy in front of any MCP server.\n\n"
    "Run it as `affidavit proxy run [OPTIONS] -- BACKEND CMD ARGS...`, or with a URL "
    "(--backend-url) instead of a command; `run` may be left out, as client configs do.",
    epilog=POLICY_HELP,
    commands={
        "run": "affidavit.cli.proxy:run",
        "replay": "affidavit.cli.proxy:replay",
        "trust-tools": "affidavit.cli.proxy:trust_tools",
        "trust-log": "affidavit.cli.proxy:trust_log",
        "wrap": f"{_INTEGRATE}:wrap",
        "unwrap": f"{_INTEGRATE}:unwrap",
    },
    default="run",
)

dev = LazyGroup(
    "dev",
    help="A git/CI MCP server to try agents and the proxy on.",
    commands={"serve": "affidavit.cli.devserver:serve"},
)

audit = LazyGroup(
    "audit",
    help="Verify a tamper-evident audit chain.\n\n"
    "The vault's sealed chain (needs the vault unlocked), or a proxy log (--log, no key).",
    commands={"verify": "affidavit.cli.audit:verify"},
)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        click.echo(f"affidavit {__version__}")
        ctx.exit()


def _setup(assert_offline: bool, verbose: int, quiet: bool) -> None:
    """What every command shares: the offline guard, and where log records go.

    ``AFFIDAVIT_DEBUG=1`` is ``-vv``: a server started by an MCP client is rarely given flags,
    and its bugs are logged with their tracebacks only then (ADR 102).
    """
    import os

    from affidavit.cli import logs
    from affidavit.core.errors import UsageError

    if assert_offline:
        from affidavit.core import offline

        offline.install()
    if verbose and quiet:
        raise UsageError("--verbose and --quiet contradict each other", "give one of them")
    debug = os.environ.get("AFFIDAVIT_DEBUG") == "1"
    logs.configure(2 if debug else -1 if quiet else verbose)


root = LazyGroup(
    "affidavit",
    help="A trust layer for MCP agents: encrypted memory, signed packs, a verifying proxy.",
    context_settings={"help_option_names": HELP_OPTIONS, "show_default": True},
    callback=_setup,
    params=[
        click.Option(
            ["--version"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_print_version,
            help="Print the version and exit.",
        ),
        click.Option(
            ["--assert-offline"],
            is_flag=True,
            help="Abort on any network connection that was not configured (loopback is allowed).",
        ),
        click.Option(
            ["-v", "--verbose"],
            count=True,
            show_default=False,
            help="Show what the command does (info log records); twice: debug records too.",
        ),
        click.Option(
            ["-q", "--quiet"], is_flag=True, help="Show only errors: no warnings, no log records."
        ),
    ],
    commands={
        "demo": "affidavit.cli.demo:demo",
        "memory": memory,
        "pack": pack,
        "proxy": proxy,
        "dev": dev,
        "integrate": f"{_INTEGRATE}:integrate",
        "bundle": "affidavit.cli.bundle:bundle",
        "console": "affidavit.cli.console:console",
        "tray": "affidavit.cli.tray:tray",
        "audit": audit,
        "completion": "affidavit.cli.completion:completion",
        "hook": "affidavit.cli.intake:hook",
        "review": "affidavit.cli.intake:review",
    },
    aliases={
        **{name: ("memory", name) for name in memory.entries},
        "wrap": ("proxy", "wrap"),
        "unwrap": ("proxy", "unwrap"),
        "devserver": ("dev", "serve"),
    },
)

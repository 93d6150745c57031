"""Option pieces the command modules share, so each kind of parameter reads one way everywhere."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from affidavit.packs import TrustOptions

T = TypeVar("T")

PATH = click.Path(path_type=Path)
"""A file or directory argument, handed to the command as a ``pathlib.Path``."""

MANY: dict[str, Any] = {"multiple": True, "default": ()}
"""A repeatable option (``--tag a --tag b``): a tuple of its values, empty when not given."""

json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
"""``--json``, the same on every command that returns data: one JSON document on stdout."""


def http_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--http HOST:PORT`` and its companions, handed to ``command`` as one ``http``
    argument: an :class:`affidavit.servers.http.HttpOptions`, or None to serve over stdio."""

    @functools.wraps(command)
    def wrapper(*args: Any, http: str | None, **kwargs: Any) -> Any:
        from affidavit.core.errors import UsageError
        from affidavit.core.http_connections import ConnectionLimits
        from affidavit.servers import http as transport

        given = {name: kwargs.pop(name) for name in _HTTP_FLAGS}
        if http is None and any(given.values()):
            raise UsageError("the HTTP options need --http HOST:PORT", "add --http 127.0.0.1:8765")
        options = None
        if http is not None:
            host, port = transport.parse_address(http)
            connections = ConnectionLimits(
                **{
                    name: given[flag]
                    for name, flag in _CONNECTION_FLAGS.items()
                    if given[flag] is not None
                }
            )
            chosen = {name: given[name] for name in _OPTION_FLAGS if given[name] is not None}
            options = transport.HttpOptions(host, port, connections=connections, **chosen)
            options.check()  # before anything is opened or bound
        return command(*args, http=options, **kwargs)

    decorators = [
        click.option(
            "--http",
            metavar="HOST:PORT",
            help="Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio "
            "(port 0: a free one).",
        ),
        click.option(
            "--allow-remote",
            is_flag=True,
            help="Allow a HOST other than 127.0.0.1 (needs TLS or --insecure-http).",
        ),
        click.option("--tls-cert", type=PATH, help="PEM certificate chain: serve HTTPS."),
        click.option("--tls-key", type=PATH, help="PEM private key of --tls-cert."),
        click.option(
            "--insecure-http",
            is_flag=True,
            help="Allow plain HTTP on a remote address (behind your own TLS proxy only).",
        ),
        *(
            click.option(flag, name, type=kind, metavar=metavar, help=text)
            for flag, name, kind, metavar, text in _LIMITS
        ),
    ]
    for decorate in reversed(decorators):
        wrapper = decorate(wrapper)
    return wrapper


_SECURITY_FLAGS = ("allow_remote", "tls_cert", "tls_key", "insecure_http")
_LIMITS = (
    (
        "--rate-limit",
        "rate_limit",
        click.FloatRange(min=0.01),
        "N",
        "Requests per second one caller may make, sustained (default 100).",
    ),
    (
        "--rate-burst",
        "rate_burst",
        click.IntRange(min=1),
        "N",
        "Requests one caller may make at once (default: 10 seconds' worth).",
    ),
    (
        "--auth-failures",
        "auth_failures",
        click.IntRange(min=1),
        "N",
        "Missing or wrong tokens one client address may send per minute (default 20).",
    ),
    (
        "--max-open-requests",
        "open_requests",
        click.IntRange(min=1),
        "N",
        "Requests one caller may have open at once (default 32).",
    ),
    (
        "--max-body",
        "max_body",
        click.IntRange(min=1024),
        "BYTES",
        "Largest request body in bytes (default 1048576).",
    ),
    (
        "--max-connections",
        "max_connections",
        click.IntRange(min=1),
        "N",
        "Open connections one client address may hold (default 64).",
    ),
    (
        "--header-timeout",
        "header_timeout",
        click.FloatRange(min=0.1),
        "SECONDS",
        "Time a request head may take to arrive (default 10).",
    ),
    (
        "--idle-timeout",
        "idle_timeout",
        click.FloatRange(min=0.1),
        "SECONDS",
        "Time a connection may stay silent while the server waits (default 30).",
    ),
)
"""The limits of an HTTP server: (flag, parameter, type, metavar, help); defaults live in
``affidavit.servers.http`` and ``affidavit.core.http_connections``."""
_CONNECTION_FLAGS = {
    "per_address": "max_connections",
    "header_timeout": "header_timeout",
    "idle_timeout": "idle_timeout",
}
"""The limits that are fields of ``ConnectionLimits`` (by field name); the others, and the
security flags, are fields of ``HttpOptions`` under their parameter's name."""
_OPTION_FLAGS = (
    *_SECURITY_FLAGS,
    *(name for _, name, *_ in _LIMITS if name not in _CONNECTION_FLAGS.values()),
)
_HTTP_FLAGS = (*_OPTION_FLAGS, *_CONNECTION_FLAGS.values())


token_file_option = click.option(
    "--token-file",
    type=PATH,
    help="With --http: a file (mode 0600) whose first line is the bearer token clients send.",
)
"""The HTTP token of a server without a vault (pack serve, devserver); required with --http."""


def check_token_file(http: Any, token_file: Path | None) -> None:
    """UsageError unless --token-file comes exactly with --http (a server without a vault)."""
    from affidavit.core.errors import UsageError

    if http is not None and token_file is None:
        raise UsageError(
            "--http needs --token-file: clients must present a bearer token",
            "write one to a file with mode 0600 and pass --token-file FILE",
        )
    if http is None and token_file is not None:
        raise UsageError("--token-file needs --http HOST:PORT", "add --http 127.0.0.1:8765")


def parse_pack_args(
    args: list[str], command: str, flag: str, read: Callable[[str], T]
) -> tuple[TrustOptions, Path, T | None, bool]:
    """``(trust options, pack directory, value of flag, --json)`` from the raw command line of
    ``pack verify`` or ``pack install``: the trust flags as the evidence plane reads them,
    one absolute pack directory, ``--json`` and one command-specific ``flag`` whose value
    ``read`` turns into the command's type (raising UsageError when it cannot).

    Both commands take the same raw line so that a host's trust flags mean the same on each;
    one reader keeps them from drifting apart.
    """
    from affidavit.core.errors import UsageError
    from affidavit.packs import absolute_path, flag_value, parse_bool, parse_trust_args, take_flag

    options, rest = parse_trust_args(args)
    pack: str | None = None
    value: T | None = None
    as_json = False
    index = 0
    while index < len(rest):
        taken = flag_value(rest, index, flag)
        if taken is not None:
            value, index = read(taken[0]), taken[1]
            continue
        json_flag = take_flag(rest, index, "--json")
        if json_flag is not None:
            as_json = parse_bool("--json", json_flag[0])
            index = json_flag[1]
            continue
        arg = rest[index]
        index += 1
        if arg.startswith("-"):
            raise UsageError(f"unknown option {arg}", f"see `affidavit pack {command} --help`")
        if pack is not None:
            raise UsageError(f"unexpected argument {arg}", "give exactly one pack directory")
        pack = arg
    pack_dir = absolute_path("pack directory", pack or "")
    if pack_dir is None:
        raise UsageError("no pack directory given", f"usage: affidavit pack {command} DIR [flags]")
    return options, pack_dir, value, as_json

"""Option pieces the command modules share, so each kind of parameter reads one way everywhere."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click

if TYPE_CHECKING:
    from affidavit.packs import TrustOptions

T = TypeVar("T")
E = TypeVar("E", bound=StrEnum)

PATH = click.Path(path_type=Path)
"""A file or directory argument, handed to the command as a ``pathlib.Path``."""


class EnumChoice(click.Choice[str], Generic[E]):
    """One of a StrEnum's values (``--from claude-memory``, not click's member name
    ``CLAUDE_MEMORY``), handed to the command as the member: the flag's choices, its help and
    its completion come from the enum the rest of the code uses, never from a copied list."""

    def __init__(self, kind: type[E]) -> None:
        super().__init__([member.value for member in kind])
        self.kind = kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> E:
        return self.kind(super().convert(value, param, ctx))


class _Existing(click.ParamType):
    """A file or directory the command reads: one that is not there is "not found" (exit 3)
    before the command starts, and the error names the flag the user gave (``--records
    r.jsonl does not exist``), not a path deep inside a reader. ``-`` (stdin) passes when
    ``dash`` is set."""

    name = "path"

    def __init__(self, *, dash: bool = False) -> None:
        self.dash = dash

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Path) or (self.dash and value == "-"):
            return value
        require_existing(_flag(param), value)
        return str(value) if self.dash else Path(value)


def require_existing(flag: str, value: str | Path) -> None:
    """NotFoundError (exit 3) naming ``flag`` unless ``value`` names something that is there:
    the one wording of a missing input, for click's options and the raw-argv pack flags."""
    from affidavit.core.errors import NotFoundError

    if not Path(value).expanduser().exists():
        raise NotFoundError(f"{flag} {value} does not exist".lstrip(), "check the path")


def _flag(param: click.Parameter | None) -> str:
    """How the user names ``param``: its option's first name, or an argument's metavar."""
    if isinstance(param, click.Option):
        return param.opts[0]
    if param is not None:
        return param.human_readable_name
    return ""


class _Output(click.ParamType):
    """A file the command writes: its folder must exist (exit 3 naming the flag otherwise),
    so the command never fails half-way on a path it could have refused at once."""

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from affidavit.core.errors import NotFoundError

        path = value if isinstance(value, Path) else Path(value)
        folder = path.expanduser().absolute().parent
        if not folder.is_dir():
            raise NotFoundError(
                f"{_flag(param)} {value}: the folder {folder} does not exist",
                "create it first, or choose a path in an existing folder",
            )
        return path


OUTPUT = _Output()
"""A file the command writes; a missing folder is exit 3 naming the flag."""

EXISTING = _Existing()
"""A file or directory the command reads; missing is exit 3 naming the flag."""

EXISTING_OR_STDIN = _Existing(dash=True)
""":data:`EXISTING`, or ``-`` for standard input; handed to the command as a string."""


class _Date(click.ParamType):
    """A calendar date flag (YYYY-MM-DD, a full ISO time cut to its date), checked when the
    command line is read so the error names the flag typed (``--since``), not the field
    recall calls it."""

    name = "date"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from datetime import date

        try:
            return date.fromisoformat(str(value)[:10]).isoformat()
        except ValueError:
            self.fail(f"{value!r} is not a date; write it as YYYY-MM-DD", param, ctx)


DATE = _Date()
"""A YYYY-MM-DD flag, handed to the command as that string."""


class _Moment(click.ParamType):
    """A relation's validity bound: an ISO date or time (``2026-03-01``,
    ``2026-03-01T09:00:00Z``), checked when the command line is read (errors name the flag)."""

    name = "date|time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from datetime import datetime

        try:
            datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            self.fail(f"{value!r} is not a date or time; write it as YYYY-MM-DD", param, ctx)
        return str(value)


MOMENT = _Moment()
"""An ISO date or time flag, handed to the command as the string given."""

LIMIT = click.IntRange(min=1)
"""How many to list: a whole number of at least 1."""


class _Expires(click.ParamType):
    """A memory's last day: a date or a duration from today (:mod:`affidavit.core.durations`),
    read once here so a bad one is an error about ``--expires``."""

    name = "date|duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from datetime import UTC, datetime

        from affidavit.core.durations import parse_day

        today = datetime.now(UTC).date()
        day = parse_day(value, _flag(param), today)  # "--expires '3x' is neither a date nor ..."
        if day < today:
            self.fail(f"{value!r} is in the past (today is {today} UTC)", param, ctx)
        return day.isoformat()


EXPIRES = _Expires()
"""``--expires``: a memory's last day (a date, or 14d / 2w / 3m / 1y), as YYYY-MM-DD."""


MANY: dict[str, Any] = {"multiple": True, "default": ()}
"""A repeatable option (``--tag a --tag b``): a tuple of its values, empty when not given."""

json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
"""``--json``, the same on every command that returns data: one JSON document on stdout."""

caller_option = click.option(
    "--caller",
    default="user",
    envvar="AFFIDAVIT_CALLER",
    show_envvar=True,
    help="Who is asking: the caller whose grants apply and whose namespace is the default "
    "(as `serve --caller`).",
)
"""``--caller``: the terminal is a caller like an MCP client, ``user`` unless told otherwise."""


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
        click.option("--tls-cert", type=EXISTING, help="PEM certificate chain: serve HTTPS."),
        click.option("--tls-key", type=EXISTING, help="PEM private key of --tls-cert."),
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
    type=EXISTING,
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
    from affidavit.packs import absolute_path, flag_value, parse_bool, take_flag

    options, rest = trust_args(args)
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
    require_existing("DIR", pack_dir)
    return options, pack_dir, value, as_json


def trust_args(args: Sequence[str]) -> tuple[TrustOptions, list[str]]:
    """The evidence plane's trust flags read from a raw command line (every other argument
    returned in order), with a key file that is not there refused as "not found" naming its
    flag before any pack is read."""
    from affidavit.packs import REVOKED_KEYS, TRUSTED_KEYS, parse_trust_args

    options, rest = parse_trust_args(args)
    for flag, path in ((TRUSTED_KEYS, options.trusted_keys), (REVOKED_KEYS, options.revoked_keys)):
        if path is not None:
            require_existing(flag, path)
    return options, rest

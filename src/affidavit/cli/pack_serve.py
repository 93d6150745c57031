"""``affidavit pack serve``: the read-only MCP server for one verified pack, over stdio.

The flags come straight from raw argv (``--flag value`` and ``--flag=value``), because MCP
client configs and Claude Desktop settings pass them that way; the trust flags are the ones
``pack verify`` takes. Anything else, a missing ``--pack`` or a relative path is refused before
the pack is even opened.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.cli.output import warn
from affidavit.cli.params import (
    check_token_file,
    http_options,
    require_existing,
    token_file_option,
    trust_args,
)
from affidavit.core.errors import UsageError

if TYPE_CHECKING:
    from affidavit.packs import TrustOptions
    from affidavit.servers.http import HttpOptions

PACK_FLAG = "--pack"
_USAGE = "usage: affidavit pack serve --pack /absolute/pack/dir [trust flags]"


def parse_serve_args(args: Sequence[str]) -> tuple[Path, TrustOptions]:
    """``(pack directory, TrustOptions)`` from raw arguments; refuses anything unknown."""
    from affidavit.packs import absolute_path, flag_value

    trust, rest = trust_args(args)
    pack: Path | None = None
    index = 0
    while index < len(rest):
        taken = flag_value(rest, index, PACK_FLAG)
        if taken is None:
            raise UsageError(f"unknown argument {rest[index]!r}", _USAGE)
        if pack is not None:
            raise UsageError(f"{PACK_FLAG} is given twice", "serve one pack per server")
        value, index = taken
        pack = absolute_path(PACK_FLAG, value)
    if pack is None:
        raise UsageError(f"{PACK_FLAG} is required", _USAGE)
    require_existing(PACK_FLAG, pack)
    return pack, trust


@click.command(
    "serve",
    options_metavar="--pack DIR [TRUST FLAGS]",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@http_options
@token_file_option
@click.pass_context
def serve(ctx: click.Context, http: HttpOptions | None, token_file: Path | None) -> None:
    """Serve a verified pack to one MCP client over stdio (or --http).

    Tools: verified_memory_search and verified_memory_get. Flags: --pack DIR (absolute,
    required), and the trust flags of `pack verify`: --trusted-keys FILE,
    --trusted-fingerprint FP, --revoked-keys FILE, --min-sequence N, --require-signature,
    --strict. The pack is verified before stdio connects; if its files change while serving,
    every call is refused until restart. Over --http clients send the bearer token of
    --token-file (required), and the process stays read-only.
    """
    pack_dir, trust = parse_serve_args(ctx.args)
    check_token_file(http, token_file)
    from affidavit.packs import verify_pack

    pack = verify_pack(pack_dir, trust)  # before any MCP code runs or stdio is connected
    for message in pack.warnings:
        warn(message)
    from affidavit.servers.packs import serve_pack, serve_pack_http

    if http is not None and token_file is not None:
        serve_pack_http(pack, http, token_file)
    else:
        serve_pack(pack)

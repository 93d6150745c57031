"""``affidavit memory serve`` (the memory MCP server), ``grant`` and ``unlock-tool`` (its settings).

An MCP client starts ``serve`` for every session and waits for it (ADR 60), so this module
imports click and nothing else at load time: the MCP SDK is the one big import on that path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.access import Mode
from affidavit.cli.params import PATH, EnumChoice, http_options, json_option

if TYPE_CHECKING:
    from affidavit.servers.http import HttpOptions


@click.command("serve")
@click.option(
    "--caller",
    default="user",
    help="Who this agent is; it writes to its own namespace by default.",
)
@click.option(
    "--vault",
    type=PATH,
    help="Vault directory (default: AFFIDAVIT_VAULT or ~/.affidavit/vault).",
)
@http_options
def serve(caller: str, vault: Path | None, http: HttpOptions | None) -> None:
    """Serve the memory vault to an MCP client over stdio (or --http).

    The memory_* tools. The vault is opened after the handshake; a locked vault still serves
    memory_status and answers every other call with the advice to unlock. Over --http each
    client sends a bearer token from `affidavit grant token CALLER`, which names its caller.
    """
    from affidavit import access

    if http is not None:
        source = click.get_current_context().get_parameter_source("caller")
        if source is click.core.ParameterSource.COMMANDLINE:
            from affidavit.core.errors import UsageError

            raise UsageError(
                "--caller does not apply to --http: each token names its caller",
                "issue one per caller with `affidavit grant token CALLER`",
            )
        from affidavit.servers.memory.http import serve_http

        serve_http(http, vault)
        return
    access.check_name(caller, "caller")  # one line on stderr, before any MCP code is imported
    from affidavit.servers.memory import serve as run

    run(caller, vault)


@click.command("grant")
@click.argument("caller", required=False, help="The caller (agent) name, e.g. cursor.")
@click.argument("namespace", required=False, help="A namespace, or '*' for every one.")
@click.argument(
    "mode",
    metavar="[MODE]",
    type=EnumChoice(Mode),
    required=False,
    help=f"What CALLER may do there: {', '.join(Mode)}.",
)
@click.option("--list", "list_", is_flag=True, help="Show every grant instead.")
@click.option("--json", "json_out", is_flag=True, help="Print the grants as JSON.")
def grant(
    caller: str | None, namespace: str | None, mode: Mode | None, list_: bool, json_out: bool
) -> None:
    """Give CALLER rw, ro or no access to NAMESPACE.

    Grants are sealed in the vault's settings; --list shows them. `grant token CALLER` issues
    CALLER's HTTP bearer token (the same as `affidavit token CALLER`).
    """
    if caller == "token" and namespace and not mode and not list_:
        from affidavit.cli.tokens import token

        click.get_current_context().invoke(
            token, caller=namespace, list_=False, revoke=False, as_json=json_out
        )
        return
    from affidavit import access as acl
    from affidavit.cli.opening import open_vault
    from affidavit.cli.output import print_json, stdout
    from affidavit.core.errors import UsageError

    with open_vault() as v:
        if list_:
            grants = acl.Grants.load(v)
        elif caller and namespace and mode:
            grants = acl.grant(v, caller, namespace, mode)
        else:
            raise UsageError("pass CALLER NAMESPACE rw|ro|none, or --list")
    if json_out:
        print_json(grants.table)
        return
    if not grants.table:
        stdout.print(
            "no grants set: defaults apply (user: rw everywhere; others: rw on own "
            "namespace, ro elsewhere)"
        )
    for who, rules in sorted(grants.table.items()):
        for ns, access in sorted(rules.items()):
            stdout.print(f"{who} {ns} {access}", markup=False)


@click.command("unlock-tool")
@click.argument("action", help="enable, disable or status.")
@json_option
def unlock_tool(action: str, as_json: bool) -> None:
    """Allow or forbid the memory_unlock MCP tool.

    Off by default: it exposes the passphrase to the MCP client.
    """
    from affidavit.access import unlock_gate
    from affidavit.cli.opening import open_vault
    from affidavit.cli.output import print_json, stdout
    from affidavit.core.errors import UsageError

    if action not in {"enable", "disable", "status"}:
        raise UsageError(f"unknown action {action!r}", "use enable, disable or status")
    with open_vault() as v:
        if action != "status":
            unlock_gate.set_unlock_tool(v, action == "enable")
        enabled = unlock_gate.unlock_tool_enabled(v)
    if as_json:
        print_json({"tool": "memory_unlock", "enabled": enabled})
        return
    stdout.print(f"memory_unlock tool: {'enabled' if enabled else 'disabled'}")

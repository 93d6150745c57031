"""``affidavit serve`` (the memory MCP server), ``grant`` and ``unlock-tool`` (its settings)."""

from __future__ import annotations

from pathlib import Path

import typer

from affidavit.cli.output import print_json, stdout


def serve(
    caller: str = typer.Option(
        "user", "--caller", help="Who this agent is; it writes to its own namespace by default."
    ),
    vault: str | None = typer.Option(
        None, "--vault", help="Vault directory (default: AFFIDAVIT_VAULT or ~/.affidavit/vault)."
    ),
) -> None:
    """Serve the memory vault to an MCP client over stdio (14 memory_* tools)."""
    from affidavit.recall import access as acl
    from affidavit.servers.memory import serve as run

    acl.check_name(caller, "caller")
    run(caller, Path(vault) if vault else None)


def grant(
    caller: str | None = typer.Argument(None, help="The caller (agent) name, e.g. cursor."),
    namespace: str | None = typer.Argument(None, help="A namespace, or '*' for every one."),
    mode: str | None = typer.Argument(None, help="rw, ro or none."),
    list_: bool = typer.Option(False, "--list", help="Show every grant instead."),
    json_out: bool = typer.Option(False, "--json", help="Print the grants as JSON."),
) -> None:
    """Give CALLER rw, ro or no access to NAMESPACE (sealed in the vault's settings)."""
    from affidavit.cli.vault import open_vault
    from affidavit.core.errors import UsageError
    from affidavit.recall import access as acl

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


def unlock_tool(
    action: str = typer.Argument(..., help="enable, disable or status."),
) -> None:
    """Allow or forbid the memory_unlock MCP tool (off by default: it exposes the passphrase)."""
    from affidavit.cli.vault import open_vault
    from affidavit.core.errors import UsageError
    from affidavit.recall import access as acl

    if action not in {"enable", "disable", "status"}:
        raise UsageError(f"unknown action {action!r}", "use enable, disable or status")
    with open_vault() as v:
        if action != "status":
            acl.set_unlock_tool(v, action == "enable")
        enabled = acl.unlock_tool_enabled(v)
    stdout.print(f"memory_unlock tool: {'enabled' if enabled else 'disabled'}")


def register(app: typer.Typer) -> None:
    """Add ``serve``, ``grant`` and ``unlock-tool``."""
    app.command("serve")(serve)
    app.command("grant")(grant)
    app.command("unlock-tool")(unlock_tool)

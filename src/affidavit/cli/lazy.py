"""A click group whose commands are imported only when one runs, is completed or shows help.

Commands are named by ``"module:attribute"``, so ``affidavit pack verify`` imports the pack
commands and nothing of the memory plane, and ``affidavit --version`` imports no command at
all. Help and completion show each command's whole one-line summary (click would cut it with
"..." to fit the terminal); the summaries are written short enough to fit 80 columns, which
``tests/cli`` checks.

Aliases are further names for a command somewhere below this group (``store`` for
``memory store``): they resolve like the command itself, so the command path in errors is the
one the user typed, but help lists them once, in a short section of their own.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

HELP_OPTIONS = ["-h", "--help"]
"""Every command takes both (set once on the root context; click passes it down)."""


def summary(command: click.Command) -> str:
    """The command's one-line summary, never shortened."""
    return command.get_short_help_str(limit=sys.maxsize)


class LazyGroup(click.Group):
    """A group of commands named by import path, with aliases and an optional default command.

    ``commands`` maps each name, in the order help lists them, to a ``click.Command`` or to
    ``"module:attribute"`` of one. ``aliases`` maps a further name to the path of names that
    leads to a command below this group (``{"store": ("memory", "store")}``). ``default``
    names the command that runs when the first argument is an option rather than a command
    (``affidavit proxy --receipts -- CMD`` is ``affidavit proxy run --receipts -- CMD``).
    """

    def __init__(
        self,
        name: str,
        *,
        commands: Mapping[str, click.Command | str],
        aliases: Mapping[str, tuple[str, ...]] | None = None,
        default: str | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("no_args_is_help", True)
        super().__init__(name, **options)
        self.entries: dict[str, click.Command | str] = dict(commands)
        self.aliases = dict(aliases or {})
        self.default = default

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.entries)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        path = self.aliases.get(cmd_name)
        if path is not None:
            return self._follow(ctx, path)
        entry = self.entries.get(cmd_name)
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = getattr(importlib.import_module(module), attribute)
            assert isinstance(entry, click.Command), f"{module}:{attribute} is no click command"
            self.entries[cmd_name] = entry
        return entry

    def _follow(self, ctx: click.Context, path: tuple[str, ...]) -> click.Command | None:
        command: click.Command | None = self
        for name in path:
            if not isinstance(command, click.Group):
                return None
            command = command.get_command(ctx, name)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if self.get_command(ctx, args[0]) is None and not ctx.resilient_parsing:
            # click suggests close names from ``self.commands``, which a lazy group leaves empty
            raise click.exceptions.NoSuchCommand(
                args[0], possibilities=[*self.entries, *self.aliases], ctx=ctx
            )
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        option = args[0] if args and args[0].startswith("-") else None
        if self.default and option and option not in ctx.help_option_names:  # its only option
            args = [self.default, *args]
        return super().parse_args(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary(command)) for name, command in self._visible(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
        if self.aliases:
            with formatter.section("Aliases (older names that still work)"):
                formatter.write_dl(self._alias_rows())

    def _alias_rows(self) -> list[tuple[str, str]]:
        """``("memory NAME", "init unlock ...")``: the aliases that keep a command's own name
        share one row; any other alias has a row of its own (``("dev serve", "devserver")``)."""
        rows: dict[str, list[str]] = {}
        for name, path in self.aliases.items():
            target = " ".join([*path[:-1], "NAME"]) if name == path[-1] else " ".join(path)
            rows.setdefault(target, []).append(name)
        return [(target, " ".join(names)) for target, names in rows.items()]

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        items = [
            CompletionItem(name, help=summary(command))
            for name, command in self._visible(ctx)
            if name.startswith(incomplete)
        ]
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def _visible(self, ctx: click.Context) -> list[tuple[str, click.Command]]:
        found = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        return [(name, command) for name, command in found if command and not command.hidden]

"""The command tree: groups by plane, the old names as aliases, `-h` everywhere, whole summaries."""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest

from affidavit.cli.app import root
from affidavit.cli.reference import WIDTH
from tests.support import run_cli

OLD_TOP_LEVEL = [
    "init", "unlock", "lock", "passwd", "2fa", "store", "get", "forget", "export", "import",
    "status", "verify", "search", "recent", "link", "relations", "unlink", "expire", "serve",
    "grant", "unlock-tool", "bench", "integrate", "wrap", "unwrap", "devserver", "demo", "pack",
    "audit", "proxy",
]  # fmt: skip
"""Every top-level command name before the groups (MCP configs and scripts still say them)."""


def _walk(
    command: click.Command, ctx: click.Context, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
    yield path, command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            sub_ctx = sub.make_context(name, [], parent=ctx, resilient_parsing=True)
            yield from _walk(sub, sub_ctx, (*path, name))


def _tree() -> list[tuple[tuple[str, ...], click.Command, click.Context]]:
    top = root.make_context("affidavit", [], resilient_parsing=True, terminal_width=WIDTH)
    return list(_walk(root, top))


def _help(args: list[str]) -> str:
    """``affidavit ARGS`` run in this process by click itself, its output captured."""
    from click.testing import CliRunner

    done = CliRunner().invoke(root, args, prog_name="affidavit", terminal_width=WIDTH)
    assert done.exit_code == 0, (args, done.output, done.exception)
    return done.output


def test_groups_by_plane_with_demo_first() -> None:
    ctx = root.make_context("affidavit", [], resilient_parsing=True)
    assert root.list_commands(ctx) == [
        "demo", "memory", "pack", "proxy", "dev", "integrate", "bundle", "console", "tray",
        "audit", "completion", "hook", "review",
    ]  # fmt: skip
    shown = _help(["--help"])
    listed = re.findall(r"^  (\S+)  ", shown.split("Commands:")[1].split("Aliases")[0], re.M)
    assert listed[0] == "demo"
    assert "store" not in listed and "serve" not in listed  # aliases are not listed as commands


@pytest.mark.parametrize("name", OLD_TOP_LEVEL)
def test_every_old_top_level_name_still_resolves(name: str) -> None:
    ctx = root.make_context("affidavit", [], resilient_parsing=True)
    command = root.get_command(ctx, name)
    assert command is not None
    if name in root.aliases:
        group = root.get_command(ctx, root.aliases[name][0])
        assert isinstance(group, click.Group)
        assert command is group.get_command(ctx, root.aliases[name][-1])


def test_aliases_are_listed_once_in_their_own_section() -> None:
    aliases = _help(["--help"]).split("Aliases")[1]
    for name in root.aliases:
        assert re.search(rf"(^|\s){re.escape(name)}(\s|$)", aliases), name


def test_dash_h_works_for_every_command_and_alias() -> None:
    paths = [list(path) for path, _, _ in _tree()] + [[name] for name in root.aliases]
    for path in paths:
        shown = _help([*path, "-h"])
        assert shown.startswith(f"Usage: affidavit {' '.join(path)}".rstrip()), path
        assert shown == _help([*path, "--help"])


def test_summaries_are_whole_and_fit_one_line() -> None:
    """click cuts a long summary with '...'; each one is written to fit, and is shown whole."""
    for path, command, ctx in _tree():
        if not isinstance(command, click.Group):
            continue
        shown = ctx.get_help()
        section = shown.split("Commands:\n")[1].split("\n\n")[0]
        for line in section.splitlines():
            assert re.match(r"  \S+ +\S", line), (path, line)  # no wrapped continuation line
            assert not line.endswith("..."), (path, line)


def test_the_old_names_run_from_a_real_process(home) -> None:
    done = run_cli(["devserver", "-h"], home)
    assert done.returncode == 0 and done.stdout.startswith("Usage: affidavit devserver")
    done = run_cli(["memory", "serve", "-h"], home)
    assert done.returncode == 0 and "--caller" in done.stdout

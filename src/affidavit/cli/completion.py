"""``affidavit completion bash|zsh|fish``: print the script that teaches a shell to complete.

The script is click's: on TAB the shell runs ``affidavit`` again with ``_AFFIDAVIT_COMPLETE``
set, and click answers with the commands, options and values that fit (see docs/cli.md).
"""

from __future__ import annotations

import sys

import click

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_AFFIDAVIT_COMPLETE"


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS), help="The shell to complete in.")
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script (bash, zsh or fish).

    \b
    bash:  source <(affidavit completion bash)      in ~/.bashrc
    zsh:   source <(affidavit completion zsh)       in ~/.zshrc
    fish:  affidavit completion fish > ~/.config/fish/completions/affidavit.fish
    """
    from click.shell_completion import get_completion_class

    script = get_completion_class(shell)
    assert script is not None, f"click has no completion for {shell}"
    source = script(ctx.find_root().command, {}, "affidavit", COMPLETE_VAR).source()
    if shell == "fish":  # click's script splits a reply at every comma, cutting summaries
        source = source.replace('(string split "," ', '(string split --max 1 "," ')
    sys.stdout.write(source)

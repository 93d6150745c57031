"""Stored text meets the user's terminal: escape sequences and rich markup are shown, not obeyed.

A memory's text, source, tags and a relation's names come from models and imports. Printed
raw, ``ESC ] 0 ;`` retitles the window, ``ESC ] 52 ;`` writes the clipboard, ``ESC [ 8 m`` hides
what follows and the 8-bit CSI (U+009B) does the same on terminals that honour C1 controls;
``[link=...]`` would become a live hyperlink through rich markup.
"""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.recall import Claim, Link
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE

TITLE = "\x1b]0;owned\x07"
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
HIDDEN = "\x1b[8mrm -rf ~\x1b[0m"
C1_CSI = "\x9b31m"
MARKUP = "[bold red]urgent[/bold red] [link=https://evil.example]docs[/link]"
TEXT = f"The freezer is set to -18 C {TITLE}{CLIPBOARD}{HIDDEN}{C1_CSI} {MARKUP}"
RAW = ("\x1b", "\x07", "\x9b")


def _store(home: Path, env: dict[str, str]) -> str:
    from affidavit.recall.memory import Memory
    from affidavit.vault import Vault

    with Vault.open(Path(env["AFFIDAVIT_VAULT"]), passphrase=TEST_PASSPHRASE) as v:
        memory = Memory(v)
        made = memory.store(Claim(text=TEXT, source=f"chat {TITLE}", tags=[f"t{C1_CSI}"]))
        memory.link(Link(f"grace{TITLE}", "owns", MARKUP, src_id=made["id"]))
        return str(made["id"])


def test_get_recent_search_and_relations_show_controls_and_markup_literally(
    home: Path, cli_vault: dict[str, str]
) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off", "COLUMNS": "400"}
    memory_id = _store(home, env)
    for args in (
        ["get", memory_id],
        ["recent"],
        ["search", "freezer"],
        ["relations", "--predicate", "owns"],
    ):
        done = run_cli(args, home, env=env)
        assert done.returncode == 0, done.stderr
        out = done.stdout
        for raw in RAW:
            assert raw not in out, (args, out)
        assert "␛]0;owned␇" in out, (args, out)
        assert "[bold red]urgent[/bold red]" in out and "[link=https://evil.example]" in out
        if args[0] != "relations":
            assert "␛]52;c;" in out and "␛[8mrm -rf ~␛[0m" in out and "\\x9b31m" in out

    exact = json.loads(run_cli(["get", memory_id, "--json"], home, env=env).stdout)
    assert exact["memory"]["text"] == TEXT  # --json stays exact: JSON escapes controls itself
    listed = json.loads(run_cli(["recent", "--json"], home, env=env).stdout)["results"]
    assert listed[0]["text"] == TEXT and listed[0]["source"] == f"chat {TITLE}"

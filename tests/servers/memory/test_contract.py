"""The CLI's ``--json`` and the MCP server's ``structuredContent`` are one wire shape.

Issue 15: ``affidavit search --json`` printed the API's dict (its own fields, its own notice)
while ``memory_search`` reshaped the same memories with another notice. Both now go through
one serializer per value (``affidavit.recall.views``), so for the same vault and question they
must answer the same JSON, byte for byte after parsing: same fields, same scores, same notice.
"""

from __future__ import annotations

import json

from affidavit.recall import NOTICE
from tests.servers.memory.conftest import LIGHT, body, run
from tests.support import mcp_client, run_cli

FACTS = [
    ("Deploys of Lantern run every Friday afternoon.", ["ops"]),
    ("Ada owns the Lantern release checklist.", ["people"]),
    ("The Lantern staging database listens on port 5433.", ["ops"]),
]


def test_cli_search_json_and_memory_search_are_the_same_json(setup):
    env = setup.env(**LIGHT)
    for text, tags in FACTS:
        args = ["store", text, "--source", "chat", "--namespace", "user"]
        for tag in tags:
            args += ["--tag", tag]
        assert run_cli(args, setup.home, env=env).returncode == 0
    cli = run_cli(["search", "when does Lantern deploy", "--json"], setup.home, env=env)
    assert cli.returncode == 0, cli.stderr
    printed = json.loads(cli.stdout)
    recent = run_cli(["recent", "--json"], setup.home, env=env)
    listed = json.loads(recent.stdout)

    async def scenario():
        async with mcp_client(["serve"], setup.home, env=env) as client:
            served = body(
                await client.call_tool("memory_search", {"query": "when does Lantern deploy"})
            )
            assert served == printed
            newest = body(await client.call_tool("memory_recent", {}))
            assert newest["results"] == listed

    run(scenario)
    assert printed["notice"] == NOTICE
    assert printed["results"] and set(printed["results"][0]) >= {"id", "text", "source", "score"}

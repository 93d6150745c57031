"""Compartment's spellings (record_id, unix since/until/as_of, subject/object filters,
truncated) and installed packs, through the official MCP client over stdio."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from affidavit.packs import sign_pack
from tests.packs._build_fixtures import build_sample
from tests.packs.conftest import make_key
from tests.servers.memory.conftest import LIGHT, body, error_text, run
from tests.support import mcp_client, run_cli


def test_compartment_argument_names(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            stored = body(
                await client.call_tool(
                    "memory_store", {"text": "The kiln fires on Thursdays.", "source": "chat"}
                )
            )
            got = body(await client.call_tool("memory_get", {"record_id": stored["id"]}))
            assert got["memory"]["id"] == stored["id"]
            both = await client.call_tool("memory_get", {"id": stored["id"], "record_id": "x1"})
            assert "exactly one of id / record_id" in error_text(both)
            neither = await client.call_tool("memory_get", {})
            assert "record_id" in error_text(neither)

            now = int(time.time())
            found = body(
                await client.call_tool(
                    "memory_search", {"query": "kiln", "since": now - 3600, "until": now + 3600}
                )
            )
            assert [r["id"] for r in found["results"]] == [stored["id"]]
            later = body(
                await client.call_tool("memory_search", {"query": "kiln", "since": now + 3600})
            )
            assert later["results"] == []
            as_date = body(
                await client.call_tool("memory_search", {"query": "kiln", "until": "2000-01-01"})
            )
            assert as_date["results"] == []
            bad = await client.call_tool("memory_search", {"query": "kiln", "since": "last week"})
            assert "since must be a date YYYY-MM-DD or a unix time in seconds" in error_text(bad)

            for obj in ("Ada", "Bo", "Cy"):
                await client.call_tool(
                    "memory_link",
                    {"subject": "Max", "predicate": "mentors", "object": obj,
                     "valid_from": "2026-01-01", "valid_to": "2026-06-30"},
                )  # fmt: skip
            some = body(await client.call_tool("memory_relations", {"subject": "max", "limit": 2}))
            assert len(some["relations"]) == 2 and some["truncated"] is True
            one = body(await client.call_tool("memory_relations", {"object": "bo"}))
            assert [r["object"] for r in one["relations"]] == ["Bo"] and one["truncated"] is False
            march = int(datetime(2026, 3, 1, tzinfo=UTC).timestamp())
            valid = body(await client.call_tool("memory_relations", {"as_of": march}))
            assert len(valid["relations"]) == 3
            december = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp())
            gone = body(await client.call_tool("memory_relations", {"as_of": december}))
            assert gone["relations"] == []

            forgotten = body(await client.call_tool("memory_forget", {"record_id": stored["id"]}))
            assert forgotten == {"forgotten": True, "id": stored["id"], "shredded": False}

            status = body(await client.call_tool("memory_status", {}))
            assert status["model"] is None and status["index"]["indexed"] == 0
            assert status["packs"] == []
            assert status["audit"]["entries"] > 1 and len(status["audit"]["head"]) == 64

    run(scenario)


def test_compartment_value_forms(setup):
    """Compartment's remaining value forms (issue 28 item 1): unix times on memory_link's
    validity (their UTC day), decimal unix times wherever a unix time is taken, and
    memory_recent's include_seeded (affidavit seeds no starter facts: both values list the
    same memories)."""

    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            start = datetime(2026, 1, 1, 18, 30, tzinfo=UTC).timestamp() + 0.25
            end = datetime(2026, 6, 30, 23, 59, tzinfo=UTC).timestamp()
            linked = body(
                await client.call_tool(
                    "memory_link",
                    {
                        "subject": "Max",
                        "predicate": "mentors",
                        "object": "Ada",
                        "valid_from": start,
                        "valid_to": int(end),
                    },
                )
            )
            relation = body(await client.call_tool("memory_relations", {"subject": "max"}))
            [only] = relation["relations"]
            assert only == linked["relation"]
            assert (only["valid_from"], only["valid_to"]) == ("2026-01-01", "2026-06-30")
            march = datetime(2026, 3, 1, tzinfo=UTC).timestamp() + 0.5
            valid = body(await client.call_tool("memory_relations", {"as_of": march}))
            assert valid["relations"] == [only]

            stored = body(
                await client.call_tool(
                    "memory_store", {"text": "The kiln fires on Thursdays.", "source": "chat"}
                )
            )
            now = time.time()
            found = body(
                await client.call_tool("memory_search", {"query": "kiln", "since": now - 60.5})
            )
            assert [r["id"] for r in found["results"]] == [stored["id"]]
            later = body(
                await client.call_tool("memory_search", {"query": "kiln", "since": now + 3600.5})
            )
            assert later["results"] == []

            plain = body(await client.call_tool("memory_recent", {}))
            for flag in (True, False):
                seeded = body(await client.call_tool("memory_recent", {"include_seeded": flag}))
                assert seeded == plain
            assert [m["id"] for m in plain["results"]] == [stored["id"]]
            wrong = await client.call_tool(
                "memory_link", {"subject": "a", "predicate": "b", "object": "c", "valid_from": -1}
            )
            assert "valid_from" in error_text(wrong)

    run(scenario)


def test_an_installed_pack_is_searched_read_only_and_drops_out_when_edited(setup, tmp_path: Path):
    key = make_key(tmp_path / "keys")
    pack = tmp_path / "library"
    expires = datetime.now(UTC) + timedelta(days=30)
    sign_pack(build_sample(tmp_path / "draft"), key.private, expires, pack, sequence=3)
    env = setup.env(**LIGHT)
    installed = run_cli(
        ["pack", "install", str(pack), f"--trusted-fingerprint={key.fingerprint}"],
        setup.home,
        env=env,
    )
    assert installed.returncode == 0, installed.stderr
    assert "installed pack library" in installed.stdout and "sequence 3" in installed.stdout

    async def scenario():
        async with mcp_client(["serve"], setup.home, env=env) as client:
            found = body(await client.call_tool("memory_search", {"query": "key box code"}))
            hit = found["results"][0]
            assert hit["namespace"] == "pack:library"
            assert hit["pack"]["sequence"] == 3 and hit["pack"]["signature"] == "verified"
            assert hit["pack"]["freshness"] == "fresh"
            refused = await client.call_tool(
                "memory_store",
                {"text": "The key box code is 1.", "source": "x", "namespace": "pack:library"},
            )
            assert "read-only" in error_text(refused)
            no_forget = await client.call_tool("memory_forget", {"id": hit["id"]})
            assert "read-only" in error_text(no_forget)
            status = body(await client.call_tool("memory_status", {}))
            assert status["packs"][0]["name"] == "library" and status["packs"][0]["in_recall"]

            (pack / "MEMORY.md").write_text("# replaced\n")
            after = body(await client.call_tool("memory_search", {"query": "key box code"}))
            assert after["results"] == []
            assert "changed on disk" in after["warnings"][0]

    run(scenario)
    removed = run_cli(["pack", "uninstall", "library"], setup.home, env=env)
    assert removed.returncode == 0 and "uninstalled pack library" in removed.stdout
    again = run_cli(["pack", "uninstall", "library"], setup.home, env=env)
    assert again.returncode != 0 and "no pack named 'library'" in again.stderr
    assert "Traceback" not in again.stderr


def test_recent_is_newest_first_unless_the_call_asks_or_is_compartments(setup):
    """Our callers keep newest first; ``order`` or Compartment's ``include_seeded`` turns the
    same memories oldest first (ADR 0227)."""

    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            ids = [
                body(await client.call_tool("memory_store", {"text": text, "source": "chat"}))["id"]
                for text in ("The kiln fires on Thursdays", "Ada owns the van", "Bo has a key")
            ]

            async def recent(**args):
                got = body(await client.call_tool("memory_recent", {"limit": 2, **args}))
                return [m["id"] for m in got["results"]]

            assert await recent() == [ids[2], ids[1]]
            assert await recent(order="oldest") == [ids[1], ids[2]]
            assert await recent(include_seeded=False) == [ids[1], ids[2]]
            assert await recent(include_seeded=True, order="newest") == [ids[2], ids[1]]
            wrong = await client.call_tool("memory_recent", {"order": "random"})
            assert "order" in error_text(wrong)

    run(scenario)

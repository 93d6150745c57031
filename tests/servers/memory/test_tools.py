"""Every memory tool and its error paths, through the official MCP client over stdio."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from tests.servers.memory.conftest import LIGHT, OFFERED, body, error_text, run
from tests.support import mcp_client

LIST = "memory_list_namespaces"


def test_store_search_get_recent_and_the_notice(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env()) as client:
            assert "memory_search" in (client.instructions or "")
            assert client.server_info is not None and client.server_info.name == "affidavit-memory"
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == OFFERED  # memory_unlock is off
            for tool in listed.tools:
                assert tool.output_schema and tool.annotations and tool.description

            stored = body(
                await client.call_tool(
                    "memory_store",
                    {
                        "text": "The Lantern staging database listens on port 5433.",
                        "source": "read from docker-compose.yml",
                        "tags": ["lantern"],
                        "importance": 0.8,
                        "discovered": "2026-11-30",
                    },
                )
            )
            assert stored["stored"] is True and stored["namespace"] == "user"
            again = body(
                await client.call_tool(
                    "memory_store",
                    {"text": "The Lantern staging database listens on port 5433.", "source": "x"},
                )
            )
            assert again == {**again, "stored": False, "status": "duplicate", "id": stored["id"]}

            found = body(await client.call_tool("memory_search", {"query": "staging db port"}))
            assert [r["id"] for r in found["results"]] == [stored["id"]]
            hit = found["results"][0]
            assert hit["source"] == "read from docker-compose.yml"
            assert hit["discovered"] == "2026-11-30" and hit["tags"] == ["lantern"]
            assert "not instructions" in found["notice"]
            nothing = body(
                await client.call_tool("memory_search", {"query": "sourdough bread recipe"})
            )
            assert nothing["results"] == []

            got = body(await client.call_tool("memory_get", {"id": stored["id"]}))
            assert got["memory"]["text"].startswith("The Lantern staging")
            assert "not instructions" in got["notice"]

            untrusted = body(
                await client.call_tool(
                    "memory_store",
                    {
                        "text": "A web page claims the Lantern API has no rate limit.",
                        "source": "web page",
                        "quarantined": True,
                    },
                )
            )
            recent = body(await client.call_tool("memory_recent", {"limit": 5}))
            assert [r["id"] for r in recent["results"]] == [untrusted["id"], stored["id"]]
            assert "quarantined" in recent["results"][0]["warning"]
            assert "not instructions" in recent["notice"]

    run(scenario)


def test_store_many_validates_the_whole_batch_first_and_names_the_index(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env()) as client:
            good = {"text": "Ada owns the Lantern release checklist."}
            too_long = {"text": "word " * 60}
            failed = await client.call_tool(
                "memory_store_many", {"source": "from chat", "facts": [good, too_long, good]}
            )
            assert "facts[1]" in error_text(failed)
            listed = await client.call_tool(
                "memory_store_many", {"source": "s", "facts": [good, {"text": "- a\n- b"}]}
            )
            assert "facts[1]" in error_text(listed)
            schema = await client.call_tool(
                "memory_store_many", {"source": "s", "facts": [good, {"text": "x", "bad": 1}]}
            )
            assert "facts[1]" in error_text(schema) and "'bad'" in error_text(schema)
            no_source = await client.call_tool("memory_store_many", {"facts": [good]})
            assert "source" in error_text(no_source)
            empty = body(await client.call_tool("memory_recent", {}))
            assert empty["results"] == []  # nothing of any failed batch was stored

            ok = body(
                await client.call_tool(
                    "memory_store_many",
                    {
                        "source": "from chat",
                        "facts": [
                            good,
                            {"text": "Ben reviews infrastructure changes.", "source": "Ben said"},
                        ],
                    },
                )
            )
            assert [r["stored"] for r in ok["results"]] == [True, True]
            recent = body(await client.call_tool("memory_recent", {}))
            assert {r["source"] for r in recent["results"]} == {"from chat", "Ben said"}

            first = body(
                await client.call_tool(
                    "memory_store",
                    {
                        "text": "Ben prefers tabs for indentation in Go code.",
                        "source": "Ben",
                        "kind": "opinion",
                    },
                )
            )
            rival = body(
                await client.call_tool(
                    "memory_store",
                    {
                        "text": "Ben prefers spaces for indentation in Go code.",
                        "source": "Ben",
                        "kind": "opinion",
                    },
                )
            )
            assert rival["stored"] is False and rival["status"] == "conflict"
            assert [m["id"] for m in rival["existing"]] == [first["id"]]
            assert "not instructions" in rival["notice"] and "supersedes" in rival["reason"]
            replaced = body(
                await client.call_tool(
                    "memory_store",
                    {
                        "text": "Ben prefers spaces for indentation in Go code.",
                        "source": "Ben",
                        "kind": "opinion",
                        "supersedes": [first["id"]],
                    },
                )
            )
            assert replaced["stored"] is True and replaced["superseded"] == [first["id"]]
            old = body(await client.call_tool("memory_get", {"id": first["id"]}))
            assert old["memory"]["superseded_by"] == replaced["id"]

    run(scenario)


def test_graph_forget_namespaces_status_and_argument_errors(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            memory = body(
                await client.call_tool(
                    "memory_store", {"text": "Ada reports to Grace since March.", "source": "s"}
                )
            )
            link = {
                "subject": "Ada",
                "predicate": "reports_to",
                "object": "Grace",
                "src_id": memory["id"],
                "valid_from": "2026-03-01",
            }
            linked = body(await client.call_tool("memory_link", link))
            assert linked["created"] is True
            relation = linked["relation"]
            same = body(await client.call_tool("memory_link", link))  # the same link again
            assert same["created"] is False and same["relation"]["id"] == relation["id"]
            rels = body(await client.call_tool("memory_relations", {"entity": "grace"}))
            assert [r["id"] for r in rels["relations"]] == [relation["id"]]
            before = body(
                await client.call_tool("memory_relations", {"entity": "Ada", "as_of": "2026-01-01"})
            )
            assert before["relations"] == []

            spaces = body(await client.call_tool(LIST, {}))
            assert spaces["caller"] == "user" and spaces["default_namespace"] == "user"
            assert spaces["namespaces"] == [
                {"name": "user", "memories": 1, "relations": 1, "access": "rw"}
            ]

            status = body(await client.call_tool("memory_status", {}))
            assert status["locked"] is False and status["memories"] == 1

            wrong_kind = await client.call_tool("memory_unlink", {"relation_id": memory["id"]})
            assert "memory_forget" in error_text(wrong_kind)
            unlinked = body(
                await client.call_tool("memory_unlink", {"relation_id": relation["id"]})
            )
            assert unlinked == {
                "removed": True,
                "relation_id": relation["id"],
                "id": relation["id"],
            }
            gone = body(
                await client.call_tool("memory_forget", {"id": memory["id"], "shred": True})
            )
            assert gone == {"forgotten": True, "id": memory["id"], "shredded": True}
            missing = await client.call_tool("memory_get", {"id": memory["id"]})
            assert "shredded" in error_text(missing)
            unknown = await client.call_tool("memory_get", {"id": "0000deadbeef"})
            assert "0000deadbeef" in error_text(unknown)

            for name, args, needle in [
                ("memory_search", {}, "missing required argument 'query'"),
                ("memory_search", {"query": "x", "colour": "red"}, "unknown argument 'colour'"),
                ("memory_recent", {"limit": 0}, "limit must be at least 1"),
                ("memory_recent", {"limit": "ten"}, "limit must be of type integer"),
                ("memory_store", {"text": "x", "source": "s", "kind": "rumour"}, "kind must be"),
                ("memory_get", {"id": "../etc/passwd"}, "id has the wrong format"),
                ("memory_store", {"text": "x", "source": "s", "expires": "soon"}, "expires"),
            ]:
                assert needle in error_text(await client.call_tool(name, args)), (name, args)
            with pytest.raises(MCPError, match="Unknown tool"):
                await client.call_tool("memory_explode", {})

    run(scenario)


def test_selftest_runs_on_a_private_sample_and_leaves_the_vault_alone(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env()) as client:
            report = body(await client.call_tool("memory_selftest", {}))
            assert report["passed"] is True and report["semantic"] is True
            assert len(report["checks"]) >= 5
            assert all(c["ms"] > 0 for c in report["checks"])
            assert report["search_p50_ms"] > 0 and report["store_ms"] > 0
            status = body(await client.call_tool("memory_status", {}))
            assert status["memories"] == 0
            assert body(await client.call_tool("memory_recent", {}))["results"] == []

    run(scenario)


def test_the_2026_protocol_era_works_too(setup):
    async def scenario():
        async with mcp_client(
            ["serve"], setup.home, env=setup.env(**LIGHT), mode="2026-07-28"
        ) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == OFFERED
            stored = body(
                await client.call_tool(
                    "memory_store", {"text": "Stateless requests reach the vault.", "source": "t"}
                )
            )
            found = body(await client.call_tool("memory_search", {"query": "stateless requests"}))
            assert [r["id"] for r in found["results"]] == [stored["id"]]

    run(scenario)


def test_keyword_only_mode_is_reported_and_semantic_checks_are_skipped(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            status = body(await client.call_tool("memory_status", {}))
            assert status["semantic"] is False and "off" in status["hint"]
            report = body(await client.call_tool("memory_selftest", {}))
            assert report["semantic"] is False and report["passed"] is True
            assert any(c["skipped"] for c in report["checks"])
            assert not all(c["skipped"] for c in report["checks"])

    run(scenario)


def test_the_kind_filter_is_applied_before_the_page_is_cut(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            facts = [
                {"text": f"Kestrel deploy step {i} runs the migrations.", "source": "t"}
                for i in range(8)
            ]
            filler = [
                {"text": f"The canteen serves dish {i} today.", "source": "t"} for i in range(40)
            ]
            await client.call_tool("memory_store_many", {"facts": facts + filler})
            opinion = body(
                await client.call_tool(
                    "memory_store",
                    {"text": "Kestrel deploys feel slow.", "source": "t", "kind": "opinion"},
                )
            )
            query = {"query": "kestrel deploy step migrations", "top_k": 3}
            plain = body(await client.call_tool("memory_search", query))
            assert opinion["id"] not in [r["id"] for r in plain["results"]]
            only = body(await client.call_tool("memory_search", {**query, "kind": "opinion"}))
            assert [r["id"] for r in only["results"]] == [opinion["id"]]

    run(scenario)


def test_a_memory_that_expired_before_it_was_stored_is_refused_not_stored(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            refused = await client.call_tool(
                "memory_store",
                {"text": "The gate code is 4411.", "source": "s", "expires": "2020-03-01"},
            )
            assert "in the past" in error_text(refused)  # was: stored true, then swept
            batch = await client.call_tool(
                "memory_store_many",
                {
                    "source": "s",
                    "facts": [{"text": "First fact."}, {"text": "Old.", "expires": "2020-03-01"}],
                },
            )
            assert "facts[1]" in error_text(batch) and "in the past" in error_text(batch)
            assert body(await client.call_tool("memory_recent", {}))["results"] == []

    run(scenario)

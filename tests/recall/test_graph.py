"""The relation graph over a real vault: link, query, validity windows, unlink."""

from __future__ import annotations

import pytest

from affidavit.core.errors import InputError, NotFoundError
from affidavit.recall import EdgeQuery, Link
from affidavit.recall.memory import Memory
from tests.recall import _recall_fixtures as fx
from tests.recall._recall_fixtures import store

keyword_memory = fx.keyword_memory


def test_link_query_by_entity_is_case_insensitive(keyword_memory: Memory) -> None:
    m = keyword_memory
    a = m.link(Link("Alice", "owns", "billing-service"))
    m.link(Link("Bob", "reviews", "alice"))
    m.link(Link("Carol", "owns", "search"))
    assert a["created"] is True
    by_entity = m.relations(EdgeQuery(entity="ALICE"))
    assert {(r["subject"], r["object"]) for r in by_entity["relations"]} == {
        ("Alice", "billing-service"),
        ("Bob", "alice"),
    }
    assert [r["subject"] for r in m.relations(EdgeQuery(predicate="OWNS"))["relations"]] == [
        "Carol",
        "Alice",
    ]
    assert m.relations(EdgeQuery(subject="carol", object="search"))["total"] == 1
    assert m.relations(EdgeQuery(entity="nobody")) == {
        "relations": [],
        "truncated": False,
        "total": 0,
    }


def test_link_is_idempotent_and_cites_its_source(keyword_memory: Memory) -> None:
    m = keyword_memory
    src = store(m, "Alice took over billing in March")
    first = m.link(Link("alice", "owns", "billing", src_id=src))
    again = m.link(Link("Alice", "owns", "Billing", src_id=src))
    assert again["id"] == first["id"] and again["created"] is False
    assert first["src_id"] == src
    with pytest.raises(NotFoundError):
        m.link(Link("alice", "owns", "billing", src_id="no-such-memory"))


def test_validity_window_answers_as_of(keyword_memory: Memory) -> None:
    m = keyword_memory
    m.link(Link("dana", "leads", "platform", valid_from="2025-01-01", valid_to="2025-12-31"))
    m.link(Link("erin", "leads", "platform", valid_from="2026-01-01"))

    def leader(day: str) -> list[str]:
        return [
            r["subject"] for r in m.relations(EdgeQuery(object="platform", as_of=day))["relations"]
        ]

    assert leader("2025-06-01") == ["dana"]
    assert leader("2025-12-31") == ["dana"]  # the last day is inclusive
    assert leader("2026-03-01") == ["erin"]
    assert leader("2024-01-01") == []
    with pytest.raises(InputError, match="before valid_from"):
        m.link(Link("x", "y", "z", valid_from="2026-02-01", valid_to="2026-01-01"))
    unix = m.link(Link("frank", "joined", "team", valid_from=1767225600))
    assert unix["valid_from"].startswith("2026-01-01")


def test_limit_sets_truncated_and_namespace_filters(keyword_memory: Memory) -> None:
    m = keyword_memory
    for i in range(5):
        m.link(Link("hub", "links", f"node{i}"))
    m.link(Link("hub", "links", "elsewhere", namespace="other"))
    page = m.relations(EdgeQuery(entity="hub", limit=3))
    assert len(page["relations"]) == 3 and page["truncated"] and page["total"] == 6
    assert m.relations(EdgeQuery(entity="hub", namespace="other"))["total"] == 1


def test_unlink_by_id_and_only_edges(keyword_memory: Memory) -> None:
    m = keyword_memory
    edge = m.link(Link("a", "b", "c"))
    mem = store(m, "Just a memory, not an edge")
    assert m.unlink(edge["id"]) == {"removed": True, "relation_id": edge["id"], "id": edge["id"]}
    assert m.relations(EdgeQuery(entity="a"))["total"] == 0
    with pytest.raises(NotFoundError, match="not a relation"):
        m.unlink(mem)
    with pytest.raises(NotFoundError):
        m.unlink(edge["id"])


def test_empty_fields_are_refused(keyword_memory: Memory) -> None:
    with pytest.raises(InputError, match="subject"):
        keyword_memory.link(Link(" ", "owns", "x"))

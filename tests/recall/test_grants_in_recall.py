"""Recall applies the caller's grants itself: what each read covers, with no transport between.

Issue 25: the memory server worked out which namespaces a caller may read, the console read
the grant table on its own, the CLI did neither. Now ``Memory`` filters ``search``,
``recent``, ``relations``, ``namespaces`` and ``status`` by the caller's grants, so every
front-end gets the same answer by asking recall.
"""

from __future__ import annotations

import pytest

from affidavit.access import grant
from affidavit.core.errors import PolicyError
from affidavit.recall import Claim, EdgeQuery, Link
from affidavit.recall.memory import Memory
from affidavit.vault import Vault


@pytest.fixture
def shared(vault: Vault) -> Vault:
    """A vault with two memories and a relation in each of 'user', 'team' and 'secret' (a
    word in every memory is no evidence for any of them, so "kettle" is in only half)."""
    owner = Memory(vault, embedder=None)
    for namespace in ("user", "team", "secret"):
        owner.store(Claim(f"The {namespace} kettle is blue.", "s", namespace=namespace))
        owner.store(Claim(f"The {namespace} door code is 4412.", "s", namespace=namespace))
        owner.link(Link(f"{namespace}-kettle", "is", "blue", namespace=namespace))
    grant(vault, "bot", "secret", "none")
    return vault


def test_every_read_covers_only_what_the_caller_may_read(shared: Vault) -> None:
    bot = Memory(shared, embedder=None, caller="bot")
    seen = {"user", "team"}
    assert {m["namespace"] for m in bot.recent(10)} == seen
    assert {r["namespace"] for r in bot.relations(EdgeQuery())["relations"]} == seen
    assert bot.relations(EdgeQuery())["total"] == 2
    assert {h["namespace"] for h in bot.search("kettle")["results"]} == seen
    listed = bot.namespaces()
    assert {row["name"]: row["access"] for row in listed["namespaces"]} == {
        "bot": "rw",
        "team": "ro",
        "user": "ro",
    }
    assert listed["default_namespace"] == "bot" and listed["caller"] == "bot"
    assert bot.status()["memories"] == 4


@pytest.mark.parametrize(
    "read",
    [
        lambda m: m.recent(5, "secret"),
        lambda m: m.relations(EdgeQuery(namespace="secret")),
        lambda m: m.search("kettle", namespaces=["secret"]),
    ],
)
def test_naming_a_hidden_namespace_is_refused(shared: Vault, read) -> None:
    with pytest.raises(PolicyError, match="no access to namespace 'secret'"):
        read(Memory(shared, embedder=None, caller="bot"))


def test_user_reads_everything_and_writes_its_own_namespace_by_default(shared: Vault) -> None:
    user = Memory(shared, embedder=None)
    assert user.status()["memories"] == 6
    assert len(user.namespaces()["namespaces"]) == 3
    stored = user.store(Claim("The office kettle is red.", "s"))
    assert stored["namespace"] == "user" and user.get_memory(stored["id"])["namespace"] == "user"
    assert user.link(Link("office-kettle", "is", "red"))["namespace"] == "user"

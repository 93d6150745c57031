from __future__ import annotations

from affidavit.core.hashchain import GENESIS, first_break, link_hash


def _chain(bodies: list[dict]) -> list[tuple[str, str, dict]]:
    links, prev = [], GENESIS
    for body in bodies:
        h = link_hash(prev, body)
        links.append((prev, h, body))
        prev = h
    return links


def test_intact_chain_verifies() -> None:
    assert first_break(_chain([{"op": "a"}, {"op": "b"}, {"op": "c"}])) is None


def test_edited_entry_is_named() -> None:
    links = _chain([{"op": "a"}, {"op": "b"}, {"op": "c"}])
    prev, h, _ = links[1]
    links[1] = (prev, h, {"op": "B"})
    broken = first_break(links)
    assert broken is not None and broken.index == 1


def test_removed_entry_breaks_the_next_link() -> None:
    links = _chain([{"op": "a"}, {"op": "b"}, {"op": "c"}])
    del links[1]
    broken = first_break(links)
    assert broken is not None and broken.index == 1

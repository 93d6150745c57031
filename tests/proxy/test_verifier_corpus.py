"""The whole lying-backend corpus end to end: official MCP client -> affidavit proxy -> liar."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.proxy.lying_corpus import Workspace, run_corpus


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    ws = Workspace(tmp_path_factory.mktemp("corpus"))
    yield ws
    ws.close()


def test_without_the_proxy_every_lie_is_accepted(workspace: Workspace) -> None:
    """The baseline: the backend reports success for every lie, so the host believes it."""
    outcomes = run_corpus(workspace, through_proxy=False)
    assert not [o.scenario.name for o in outcomes if o.failed]


def test_through_the_proxy_every_lie_is_caught_and_no_control_is_flagged(
    workspace: Workspace,
) -> None:
    outcomes = run_corpus(workspace, through_proxy=True)
    lies = [o for o in outcomes if not o.scenario.honest]
    controls = [o for o in outcomes if o.scenario.honest]
    assert len(lies) >= 20 and {o.scenario.family for o in lies} == {
        "filesystem",
        "git",
        "ci",
        "resources",
        "sqlite",
        "docker",
        "output-schema",
    }
    assert [o.scenario.name for o in lies if not o.caught] == []
    assert all(o.verdict == "contradicted" for o in lies)
    assert [o.scenario.name for o in controls if o.false_alarm] == []
    assert {o.verdict for o in controls} == {"verified"}, [
        (o.scenario.name, o.verdict) for o in controls
    ]

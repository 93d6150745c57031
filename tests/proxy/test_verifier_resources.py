"""The resource verifier against reads from the real dev server, honest and doctored."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.resources import ResourceVerifier
from tests.proxy._verifier_fixtures import call, dev_client, dev_command, git, init_repo, wire

V = ResourceVerifier()
URIS = ("repo://status", "repo://log", "repo://file/README.md", "repo://file/bin.dat")


@pytest.fixture(scope="module")
def reads(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    """A dirty repository with history, and the dev server's honest read of each resource."""
    base = tmp_path_factory.mktemp("res")
    repo = init_repo(base / "repo")
    for i in range(3):
        (repo / f"f{i}.txt").write_text(f"{i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"commit {i}")
    (repo / "bin.dat").write_bytes(bytes(range(256)))
    (repo / "README.md").write_text("# changed\n")
    git(repo, "mv", "f0.txt", "renamed.txt")
    home = base / "home"
    home.mkdir()

    async def scenario() -> dict[str, dict[str, Any]]:
        out = {}
        async with dev_client(repo, home) as client:
            for uri in URIS:
                out[uri] = wire(await client.read_resource(uri))
        return out

    return repo, anyio.run(scenario)


def verdict_of(repo: Path, uri: str, result: dict[str, Any]):
    ctx = call(uri, method="resources/read", backend_command=dev_command(repo))
    assert V.applies(ctx)
    return V.verify(ctx, V.snapshot(ctx), result)


def edit_json(result: dict[str, Any], change) -> dict[str, Any]:
    out = copy.deepcopy(result)
    doc = json.loads(out["contents"][0]["text"])
    change(doc)
    out["contents"][0]["text"] = json.dumps(doc)
    return out


def test_honest_reads_are_verified(reads) -> None:
    repo, got = reads
    for uri in URIS:
        receipt = verdict_of(repo, uri, got[uri])
        assert receipt.verdict is Verdict.VERIFIED, (uri, receipt.evidence)
    assert "blob" in got["repo://file/bin.dat"]["contents"][0]


@pytest.mark.parametrize(
    ("uri", "lie"),
    [
        ("repo://status", lambda d: d.update(clean=True, entries=[])),
        ("repo://status", lambda d: d.update(branch="release")),
        ("repo://status", lambda d: d.update(head="0" * 40)),
        ("repo://status", lambda d: d["entries"].pop()),
        ("repo://log", lambda d: d["commits"][0].update(hash="f" * 40)),
        ("repo://log", lambda d: d["commits"][1].update(subject="rewritten history")),
        ("repo://log", lambda d: d["commits"].pop()),
        ("repo://log", lambda d: d["commits"].reverse()),
        ("repo://log", lambda d: d["commits"].append(dict(d["commits"][0]))),
    ],
)
def test_fabricated_json_reads_are_contradicted(reads, uri, lie) -> None:
    repo, got = reads
    assert verdict_of(repo, uri, edit_json(got[uri], lie)).verdict is Verdict.CONTRADICTED


def test_fabricated_file_reads_are_contradicted(reads) -> None:
    repo, got = reads
    text = copy.deepcopy(got["repo://file/README.md"])
    text["contents"][0]["text"] = "# demo\n"  # the committed content, not what is on disk
    assert verdict_of(repo, "repo://file/README.md", text).verdict is Verdict.CONTRADICTED
    blob = copy.deepcopy(got["repo://file/bin.dat"])
    blob["contents"][0]["blob"] = base64.b64encode(b"other").decode()
    assert verdict_of(repo, "repo://file/bin.dat", blob).verdict is Verdict.CONTRADICTED
    ghost = {"contents": [{"uri": "repo://file/ghost.txt", "text": "boo"}]}
    assert verdict_of(repo, "repo://file/ghost.txt", ghost).verdict is Verdict.CONTRADICTED
    empty = {"contents": []}
    assert verdict_of(repo, "repo://status", empty).verdict is Verdict.CONTRADICTED


def test_paths_leaving_the_repository_are_unchecked(reads) -> None:
    repo, _ = reads
    for uri in ("repo://file/../outside.txt", "repo://file/%2e%2e/x", "repo://file/.git/config"):
        fake = {"contents": [{"uri": uri, "text": "x"}]}
        assert verdict_of(repo, uri, fake).verdict is Verdict.UNCHECKED, uri

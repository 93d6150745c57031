"""Confinement attacks: each is refused with a reason and leaves the repository byte-for-byte
unchanged (tree, links, refs, HEAD, index, objects) and the outside world untouched."""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.servers.dev.conftest import git, snapshot

OPTION_NAMES = ["-D", "--force", "--output=x", "-f", "--orphan=x", "-"]
REASONS = (
    "climbs with '..'",
    "resolves outside the repository",
    "is inside .git",
    "looks like a command-line option",
    "is not a valid",
    "ATTACH, DETACH and VACUUM INTO are not allowed",
    "no pipeline",
)


def outside_state(outside: Path) -> dict[str, str]:
    return {
        p.relative_to(outside).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(outside.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def outside(repo: Path) -> Path:
    """A directory beside the repository, and links from inside the repository to it."""
    path = repo.parent / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    (path / "ci.yml").write_text(
        "pipelines:\n  p:\n    - {name: escape, command: [touch, " + str(path / "ran") + "]}\n"
    )
    (repo / "linkdir").symlink_to(path)
    (repo / "linkfile").symlink_to(path / "secret.txt")
    return path


def tool_attacks(outside: Path) -> list[tuple[str, dict[str, object]]]:
    o = str(outside)
    attacks: list[tuple[str, dict[str, object]]] = []
    for path in (
        "../outside/x.txt",
        "src/../../outside/x.txt",
        f"{o}/x.txt",
        "linkdir/x.txt",
        "linkfile",
        ".git/hooks/pre-commit",
        ".git/config",
        "vendor/lib/.git/hooks/post-checkout",
        "-D",
        "--force",
    ):
        attacks.append(("write_file", {"path": path, "content": "pwned"}))
    for path in (
        "../outside/secret.txt",
        "linkfile",
        "linkdir/secret.txt",
        "/etc/passwd",
        ".git/config",
    ):
        attacks.append(("read_file", {"path": path}))
    for name in OPTION_NAMES:
        attacks.append(("git_branch", {"name": name}))
        attacks.append(("git_branch", {"name": "ok-name", "base": name}))
        attacks.append(("git_checkout", {"name": name}))
        attacks.append(("git_diff", {"target": name}))
    attacks.append(("git_branch", {"name": "bad name"}))
    attacks.append(("git_branch", {"name": "x..y"}))
    attacks.append(("git_branch", {"name": "@{-1}"}))
    attacks.append(("git_checkout", {"name": "@{-1}"}))
    for paths in (
        ["--force"],
        ["-A"],
        ["../outside/secret.txt"],
        ["linkfile"],
        [f"{o}/secret.txt"],
    ):
        attacks.append(("git_commit", {"message": "attack", "paths": paths}))
    for db in ("../outside/x.db", "linkdir/x.db", f"{o}/x.db", "--help"):
        attacks.append(("sqlite_query", {"db": db, "sql": "SELECT 1"}))
        attacks.append(("sqlite_execute", {"db": db, "sql": "CREATE TABLE t(x)"}))
    for sql in (f"ATTACH '{o}/a.db' AS a", f"VACUUM INTO '{o}/copy.db'"):
        attacks.append(("sqlite_query", {"db": "app.db", "sql": sql}))
        attacks.append(("sqlite_execute", {"db": "app.db", "sql": sql}))
    attacks.append(("run_ci_pipeline", {"pipeline": "--force"}))
    attacks.append(("docker_build", {"tag": "x", "context": "../outside"}))
    attacks.append(("docker_build", {"tag": "x", "dockerfile": "linkdir/ci.yml"}))
    return attacks


RESOURCE_ATTACKS = [
    "repo://file/../outside/secret.txt",
    "repo://file/%2e%2e/outside/secret.txt",
    "repo://file/src/%2E%2E/%2E%2E/outside/secret.txt",
    "repo://file//etc/passwd",
    "repo://file/linkfile",
    "repo://file/linkdir/secret.txt",
    "repo://file/.git/config",
    "repo://file/-D",
    "repo://file/",
]


def test_every_attack_is_refused_and_changes_nothing(repo: Path, outside: Path, client_for) -> None:
    import sqlite3

    sqlite3.connect(repo / "app.db").close()
    (repo / ".affidavit-ci.yml").write_text(
        'pipelines:\n  p:\n    - {name: s, command: ["true"]}\n'
    )
    git(repo, "add", ".affidavit-ci.yml")
    git(repo, "commit", "-q", "-m", "CI")

    async def scenario() -> None:
        async with client_for(repo, mode="legacy") as client:
            for name, args in tool_attacks(outside):
                before, before_out = snapshot(repo), outside_state(outside)
                result = await client.call_tool(name, args)
                message = result.content[0].text
                assert result.is_error, (name, args, message)
                assert message.startswith("error: ") and "\n" not in message, message
                assert any(reason in message for reason in REASONS), (name, args, message)
                assert snapshot(repo) == before, (name, args)
                assert outside_state(outside) == before_out, (name, args)
            for uri in RESOURCE_ATTACKS:
                before, before_out = snapshot(repo), outside_state(outside)
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                assert "top secret" not in refused.value.message, uri
                assert snapshot(repo) == before and outside_state(outside) == before_out, uri

            # A CI file swapped for a link out of the repository is never read: the pipeline
            # committed when the server started runs, and the reply says the file changed.
            (repo / ".affidavit-ci.yml").unlink()
            (repo / ".affidavit-ci.yml").symlink_to(outside / "ci.yml")
            before = snapshot(repo)
            result = await client.call_tool("run_ci_pipeline", {"pipeline": "p"})
            assert not result.is_error and result.structured_content["passed"] is True
            assert "changed since the server started" in result.content[0].text
            assert not (outside / "ran").exists() and snapshot(repo) == before

            # Option-like names are refused as options, whichever argument carries them.
            for name in ("-D", "--force", "--output=x"):
                for tool, args in (
                    ("git_branch", {"name": name}),
                    ("git_checkout", {"name": name}),
                    ("git_diff", {"target": name}),
                    ("write_file", {"path": name, "content": ""}),
                ):
                    result = await client.call_tool(tool, args)
                    assert "looks like a command-line option" in result.content[0].text

            # After every attack the server still works normally.
            ok = await client.call_tool("read_file", {"path": "README.md"})
            assert ok.content[0].text == "# demo\n"

    anyio.run(scenario)

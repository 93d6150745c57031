"""The lying-backend corpus: scenarios, a workspace to play them in, and a runner.

Shared by ``tests/proxy/test_verifier_corpus.py`` and ``benchmarks/proxy_claims.py``. Every
scenario resets one real repository to the same base state, prepares what it needs, sets the
lying backend's plan, and makes one call through an official MCP client — either through
``affidavit proxy`` or straight to the backend (the "without proxy" baseline). A lie counts as
caught when the host is told the call failed (``isError`` or a JSON-RPC error) although the
backend reported success; an honest control that the host sees fail is a false alarm.

The host here checks nothing itself: a tool call goes out as a plain ``tools/call`` request,
without the official Python SDK's own output-schema check (most hosts have none), so the
"output-schema" lies show what a host that trusts the shape would accept. The Docker
scenarios build through a loopback fake of the Docker Engine API (``fake_docker.py``; no
daemon runs here), which the workspace serves and empties on every reset.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.proxy import fake_docker
from tests.proxy._verifier_fixtures import (
    LYING_BACKEND,
    direct,
    git,
    init_repo,
    proxied,
    verdict_of,
)

CI_FILE = """\
default: green
pipelines:
  green:
    - name: lint
      command: ["sh", "-c", "test -f README.md"]
      safe_to_rerun: true
    - name: unit
      command: ["sh", "-c", "exit 0"]
      safe_to_rerun: true
  red:
    - name: lint
      command: ["true"]
      safe_to_rerun: true
    - name: unit
      command: ["sh", "-c", "echo 1 test failed; exit 3"]
      safe_to_rerun: true
    - name: deploy
      command: ["true"]
"""


@dataclass(frozen=True)
class Scenario:
    """One call the backend answers, honestly (a control) or with a named lie."""

    name: str
    family: str
    target: str
    arguments: dict[str, Any] = field(default_factory=dict)
    lie: str = "honest"
    setup: Callable[[Path], None] = lambda repo: None
    resource: bool = False

    @property
    def honest(self) -> bool:
        return self.lie == "honest"

    @property
    def plan_key(self) -> str:
        return "repo://file" if self.target.startswith("repo://file/") else self.target


@dataclass(frozen=True)
class Outcome:
    """What the host saw for one scenario."""

    scenario: Scenario
    failed: bool
    verdict: str | None
    detail: str

    @property
    def caught(self) -> bool:
        return not self.scenario.honest and self.failed

    @property
    def false_alarm(self) -> bool:
        return self.scenario.honest and self.failed


def _dirty(repo: Path) -> None:
    (repo / "README.md").write_text("# demo\nchanged\n")
    (repo / "new.txt").write_text("new\n")


def _staged(repo: Path) -> None:
    _dirty(repo)
    git(repo, "add", "-A")


def _module(repo: Path) -> None:
    (repo / "app.py").write_text("x = 1\ny = 2\n")


def _notes(repo: Path) -> None:
    (repo / "notes.txt").write_text("remember\n")


def _db(repo: Path) -> None:
    """``data.db`` (and a twin, ``other-data.db``) with one table holding one row."""
    import sqlite3

    for name in ("data.db", "other-data.db"):
        conn = sqlite3.connect(repo / name)
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        conn.execute("INSERT INTO items (name) VALUES ('first')")
        conn.commit()
        conn.close()


WRITE = {"path": "docs/out.txt", "content": "the real content\n"}
EDIT = {
    "path": "app.py",
    "edits": [{"oldText": "x = 1", "newText": "x = 10"}, {"oldText": "y = 2", "newText": "y = 20"}],
}
MOVE = {"source": "notes.txt", "destination": "moved.txt"}
COMMIT = {"message": "Change the readme\n\nAnd add a file."}
INSERT = {"db": "data.db", "sql": "INSERT INTO items (name) VALUES ('second')"}
BUILD = {"tag": "app:dev"}


def _sqlite_lies(s: type[Scenario]) -> list[Scenario]:
    """The held-back SQLite lies (each on a fresh ``data.db``), and one about its shape."""
    lies = {
        "nothing": "sqlite: insert claimed, nothing written",
        "wrong_count": "sqlite: row count inflated",
        "other_db": "sqlite: written to another database",
        "schema_violation": "schema: row count as text",
    }
    family = {"schema_violation": "output-schema"}
    return [
        s(name, family.get(lie, "sqlite"), "sqlite_execute", INSERT, lie, _db)
        for lie, name in lies.items()
    ]


def scenarios(repo: Path) -> list[Scenario]:
    """The corpus for a workspace at ``repo`` (mcp-server-git shapes need its path)."""
    rp = {"repo_path": str(repo)}
    s = Scenario
    lies = [
        s("write: claims success, writes nothing", "filesystem", "write_file", WRITE, "nothing"),
        s("write: content went to another file", "filesystem", "write_file", WRITE, "other_file"),
        s("write: different bytes on disk", "filesystem", "write_file", WRITE, "wrong_content"),
        s("write: fabricated sha256 receipt", "filesystem", "write_file", WRITE, "bad_receipt"),
        s(
            "edit: diff returned, file untouched",
            "filesystem",
            "edit_file",
            EDIT,
            "not_applied",
            _module,
        ),
        s("edit: only the first edit applied", "filesystem", "edit_file", EDIT, "partial", _module),
        s(
            "mkdir: directory never created",
            "filesystem",
            "create_directory",
            {"path": "a/b"},
            "nothing",
        ),
        s("move: copied, source left behind", "filesystem", "move_file", MOVE, "copy", _notes),
        s("commit: old HEAD hash returned as new", "git", "git_commit", COMMIT, "old_hash", _dirty),
        s("commit: a tree hash returned", "git", "git_commit", COMMIT, "tree_hash", _dirty),
        s("commit: fabricated hash", "git", "git_commit", COMMIT, "fabricated", _dirty),
        s("commit: another message recorded", "git", "git_commit", COMMIT, "other_message", _dirty),
        s(
            "commit: object made, HEAD not moved",
            "git",
            "git_commit",
            COMMIT,
            "head_not_moved",
            _dirty,
        ),
        s(
            "commit: staged changes left out",
            "git",
            "git_commit",
            COMMIT,
            "staged_left_out",
            _dirty,
        ),
        s(
            "commit: another branch's commit as new",
            "git",
            "git_commit",
            COMMIT,
            "other_branch_commit",
            _dirty,
        ),
        s(
            "branch: created at the wrong base",
            "git",
            "git_branch",
            {"name": "feat", "base": "main"},
            "wrong_base",
        ),
        s("branch: never created", "git", "git_branch", {"name": "feat"}, "missing"),
        s(
            "branch: reply names another commit",
            "git",
            "git_branch",
            {"name": "feat"},
            "reports_other_commit",
        ),
        s("checkout: HEAD never moved", "git", "git_checkout", {"name": "side"}, "noop"),
        s(
            "checkout: HEAD rewritten, tree not",
            "git",
            "git_checkout",
            {"name": "side"},
            "head_only",
        ),
        s(
            "add (mcp-server-git): nothing staged",
            "git",
            "git_add",
            {**rp, "files": ["README.md"]},
            "noop",
            _dirty,
        ),
        s("reset (mcp-server-git): still staged", "git", "git_reset", rp, "noop", _staged),
        s(
            "create_branch (mcp-server-git): wrong base",
            "git",
            "git_create_branch",
            {**rp, "branch_name": "feat", "base_branch": "main"},
            "wrong_base",
        ),
        s(
            "commit (mcp-server-git): old hash",
            "git",
            "git_commit",
            {**rp, **COMMIT},
            "old_hash",
            _staged,
        ),
        s(
            "CI: failed step claimed passed",
            "ci",
            "run_ci_pipeline",
            {"pipeline": "red"},
            "failed_step_passed",
        ),
        s(
            "CI: failing step hidden as not safe to re-run",
            "ci",
            "run_ci_pipeline",
            {"pipeline": "red"},
            "hide_unsafe",
        ),
        s(
            "CI: exit 3 reported as passed",
            "ci",
            "run_ci_pipeline",
            {"pipeline": "red"},
            "inconsistent",
        ),
        s(
            "CI: pipeline passed despite a failure",
            "ci",
            "run_ci_pipeline",
            {"pipeline": "red"},
            "overall_passed",
        ),
        s("CI: a step the CI file lacks", "ci", "run_ci_pipeline", {}, "fabricated_step"),
        s(
            "CI: failing step silently dropped",
            "ci",
            "run_ci_pipeline",
            {"pipeline": "red"},
            "skipped_step",
        ),
        s(
            "status: dirty tree reported clean",
            "resources",
            "repo://status",
            lie="clean",
            setup=_dirty,
            resource=True,
        ),
        s("status: wrong branch", "resources", "repo://status", lie="wrong_branch", resource=True),
        s(
            "log: fabricated commit hash",
            "resources",
            "repo://log",
            lie="fabricated",
            resource=True,
        ),
        s("log: rewritten subject", "resources", "repo://log", lie="rewritten", resource=True),
        s(
            "file: fabricated content",
            "resources",
            "repo://file/README.md",
            lie="fabricated",
            resource=True,
        ),
        s(
            "file: content of a file that does not exist",
            "resources",
            "repo://file/ghost.txt",
            lie="missing",
            resource=True,
        ),
        *_sqlite_lies(s),
        s("docker: build claimed, nothing built", "docker", "docker_build", BUILD, "nothing"),
        s("docker: built under another tag", "docker", "docker_build", BUILD, "other_tag"),
        s("docker: reply names another image", "docker", "docker_build", BUILD, "wrong_id"),
        s("schema: no structuredContent", "output-schema", "docker_build", BUILD, "no_structured"),
    ]
    controls = [
        s("write", "filesystem", "write_file", WRITE),
        s("edit", "filesystem", "edit_file", EDIT, setup=_module),
        s("mkdir", "filesystem", "create_directory", {"path": "a/b"}),
        s("move", "filesystem", "move_file", MOVE, setup=_notes),
        s("commit", "git", "git_commit", COMMIT, setup=_dirty),
        s("commit (mcp-server-git)", "git", "git_commit", {**rp, **COMMIT}, setup=_staged),
        s("branch", "git", "git_branch", {"name": "feat", "base": "main"}),
        s("checkout", "git", "git_checkout", {"name": "side"}),
        s("add (mcp-server-git)", "git", "git_add", {**rp, "files": ["README.md"]}, setup=_dirty),
        s("reset (mcp-server-git)", "git", "git_reset", rp, setup=_staged),
        s(
            "create_branch (mcp-server-git)",
            "git",
            "git_create_branch",
            {**rp, "branch_name": "feat", "base_branch": "main"},
        ),
        s("CI green", "ci", "run_ci_pipeline", {}),
        s("CI red, reported failed", "ci", "run_ci_pipeline", {"pipeline": "red"}),
        s("status", "resources", "repo://status", setup=_dirty, resource=True),
        s("log", "resources", "repo://log", resource=True),
        s("file", "resources", "repo://file/README.md", resource=True),
        s("insert", "sqlite", "sqlite_execute", INSERT, setup=_db),
        s("build", "docker", "docker_build", BUILD),
    ]
    return lies + [
        Scenario(
            f"control: {c.name}",
            c.family,
            c.target,
            c.arguments,
            setup=c.setup,
            resource=c.resource,
        )
        for c in controls
    ]


def _short_socket_path() -> Path:
    """A Unix socket path short enough for the 108-byte limit, wherever the tests run."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="afd-docker-", dir="/tmp")) / "docker.sock"


class Workspace:
    """A repository with history and a side branch, reset to the same state per scenario."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.repo = init_repo(base / "repo").resolve()
        (self.repo / ".affidavit-ci.yml").write_text(CI_FILE)
        (self.repo / "docs").mkdir()
        (self.repo / "docs" / "index.md").write_text("docs\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "add CI and docs")
        git(self.repo, "checkout", "-q", "-b", "side")
        (self.repo / "side.txt").write_text("side\n")
        git(self.repo, "add", "side.txt")
        git(self.repo, "commit", "-q", "-m", "side work")
        git(self.repo, "checkout", "-q", "main")
        self.head = git(self.repo, "rev-parse", "HEAD")
        self.side = git(self.repo, "rev-parse", "side")
        self.plan = base / "plan.json"
        self.home = base / "home"
        self.home.mkdir(exist_ok=True)
        self.engine = fake_docker.FakeEngine()
        self._engine = fake_docker.serving(self.engine, _short_socket_path())
        self.docker_host = self._engine.__enter__()

    def close(self) -> None:
        """Stop the fake Docker Engine."""
        self._engine.__exit__(None, None, None)

    def reset(self) -> None:
        """Back to main at the base commit, clean tree, only main and side."""
        git(self.repo, "checkout", "-q", "-f", "main")
        git(self.repo, "reset", "-q", "--hard", self.head)
        git(self.repo, "clean", "-qfdx")
        git(self.repo, "update-ref", "refs/heads/side", self.side)
        for ref in git(self.repo, "for-each-ref", "--format=%(refname)", "refs/heads").split():
            if ref not in ("refs/heads/main", "refs/heads/side"):
                git(self.repo, "update-ref", "-d", ref)
        self.engine.images.clear()
        self.engine.tags.clear()

    def backend_argv(self, exec_log: Path | None = None) -> list[str]:
        """The lying backend on this workspace (and its execution log, if any)."""
        argv = [sys.executable, str(LYING_BACKEND), "--repo-path", str(self.repo)]
        argv += ["--plan", str(self.plan)]
        return argv + (["--exec-log", str(exec_log)] if exec_log else [])

    def params(self, backend: Sequence[str], *proxy_flags: str, through_proxy: bool = True) -> Any:
        """Client launch parameters: through ``affidavit proxy`` or straight to ``backend``."""
        env = {"DOCKER_HOST": self.docker_host}
        if through_proxy:
            return proxied(backend, [self.repo], self.home, *proxy_flags, env=env)
        return direct(backend, self.home, env)


async def _play(client: Client, ws: Workspace, scenario: Scenario) -> Outcome:
    ws.reset()
    scenario.setup(ws.repo)
    ws.plan.write_text(json.dumps({scenario.plan_key: scenario.lie}))
    try:
        if scenario.resource:
            typed: Any = await client.read_resource(scenario.target)
        else:  # a plain request: the SDK's own output-schema check is the host's, not ours
            params = types.CallToolRequestParams(name=scenario.target, arguments=scenario.arguments)
            request = types.CallToolRequest(params=params)
            typed = await client.session.send_request(request, types.CallToolResult)
    except MCPError as exc:
        return Outcome(scenario, True, "contradicted", str(exc)[:300])
    result = typed.model_dump(by_alias=True, exclude_none=True, mode="json")
    texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
    return Outcome(scenario, bool(result.get("isError")), verdict_of(result), " ".join(texts)[:300])


def play(ws: Workspace, params: Any, chosen: Sequence[Scenario]) -> list[Outcome]:
    """Play ``chosen`` in order, in one MCP session launched with ``params``."""

    async def session() -> list[Outcome]:
        async with Client(params, read_timeout_seconds=120) as client:
            await client.list_tools()  # as every host does before it offers the tools
            return [await _play(client, ws, s) for s in chosen]

    return anyio.run(session)


def run_corpus(ws: Workspace, *, through_proxy: bool, only: Sequence[str] = ()) -> list[Outcome]:
    """Every scenario (or those named in ``only``) against the lying backend."""
    chosen = [s for s in scenarios(ws.repo) if not only or s.name in only]
    return play(ws, ws.params(ws.backend_argv(), through_proxy=through_proxy), chosen)


DEV_TOOLS = {
    "write_file",
    "git_commit",
    "git_branch",
    "git_checkout",
    "run_ci_pipeline",
    "sqlite_execute",
}
FS_TOOLS = {"write_file", "edit_file", "create_directory", "move_file"}
GIT_TOOLS = {"git_commit", "git_add", "git_reset", "git_create_branch"}


def real_backends(ws: Workspace) -> list[tuple[str, list[str], Callable[[Scenario], bool]]]:
    """The real servers the honest controls also run against: (label, argv, which controls)."""
    from tests.proxy._verifier_fixtures import filesystem_server_argv, git_server_argv

    def shaped(tools: set[str], repo_path: bool) -> Callable[[Scenario], bool]:
        def fits(s: Scenario) -> bool:
            if s.resource:
                return not repo_path and tools is DEV_TOOLS
            return s.target in tools and ("repo_path" in s.arguments) == repo_path

        return fits

    dev = [sys.executable, "-m", "affidavit", "devserver", "--repo-path", str(ws.repo)]
    return [
        ("dev server", dev, shaped(DEV_TOOLS, repo_path=False)),
        ("mcp-server-git", git_server_argv(ws.repo), shaped(GIT_TOOLS, repo_path=True)),
        ("filesystem server", filesystem_server_argv(ws.repo), shaped(FS_TOOLS, repo_path=False)),
    ]


def run_real_controls(ws: Workspace, *, through_proxy: bool) -> list[Outcome]:
    """The honest controls against the real dev server, mcp-server-git and filesystem server."""
    controls = [s for s in scenarios(ws.repo) if s.honest]
    outcomes: list[Outcome] = []
    for label, argv, fits in real_backends(ws):
        chosen = [
            Scenario(
                f"{s.name} [{label}]", s.family, s.target, s.arguments, s.lie, s.setup, s.resource
            )
            for s in controls
            if fits(s)
        ]
        outcomes += play(ws, ws.params(argv, through_proxy=through_proxy), chosen)
    return outcomes

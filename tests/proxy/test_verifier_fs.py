"""The filesystem verifier against real files, and against the official filesystem server."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import anyio
import pytest
from mcp import Client

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.fs import FilesystemVerifier, apply_edits
from tests.proxy._verifier_fixtures import (
    call,
    dev_command,
    filesystem_server_argv,
    judge,
    node_tools,
    proxied,
    tool_result,
    verdict_of,
    wire,
)

V = FilesystemVerifier()
OK = tool_result("Successfully wrote")


def write(root: Path, path: str, content: str, **kw: object):
    return call("write_file", {"path": path, "content": content}, roots=[root], **kw)


def test_honest_write_is_verified_and_vouches_for_the_bytes(tmp_path: Path) -> None:
    ctx = write(tmp_path, "notes/a.txt", "hello\n")
    (tmp_path / "notes").mkdir()

    def act():
        (tmp_path / "notes" / "a.txt").write_text("hello\n")
        return OK

    receipt = judge(V, ctx, act)
    assert receipt.verdict is Verdict.VERIFIED
    assert receipt.evidence[0].details["sha256"] == hashlib.sha256(b"hello\n").hexdigest()
    assert V.still_holds(ctx, receipt)
    # write x, then y, then x again: the third call must not be answered from the first.
    (tmp_path / "notes" / "a.txt").write_text("other\n")
    assert not V.still_holds(ctx, receipt)


@pytest.mark.parametrize(
    ("lie", "observed"),
    [
        ("nothing", "no file exists"),
        ("other_file", "no file exists"),
        ("wrong_content", "does not hold the content"),
    ],
)
def test_write_lies_are_contradicted(tmp_path: Path, lie: str, observed: str) -> None:
    ctx = write(tmp_path, "a.txt", "the real content")

    def act():
        if lie == "other_file":
            (tmp_path / "b.txt").write_text("the real content")
        elif lie == "wrong_content":
            (tmp_path / "a.txt").write_text("the real cont")
        return OK

    receipt = judge(V, ctx, act)
    assert receipt.verdict is Verdict.CONTRADICTED
    assert observed in receipt.evidence[0].observed


def test_no_root_or_outside_root_is_unchecked(tmp_path: Path) -> None:
    inside = tmp_path / "root"
    inside.mkdir()
    no_root = call("write_file", {"path": str(inside / "a.txt"), "content": "x"})
    outside = write(inside, "../escape.txt", "x")
    for ctx in (no_root, outside):
        receipt = judge(V, ctx, lambda: OK)
        assert receipt.verdict is Verdict.UNCHECKED


def test_a_symlink_leading_out_of_the_root_is_unchecked(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    ctx = write(root, "link/x.txt", "x")
    receipt = judge(V, ctx, lambda: ((outside / "x.txt").write_text("x"), OK)[1])
    assert receipt.verdict is Verdict.UNCHECKED


def test_backend_error_is_unchecked(tmp_path: Path) -> None:
    receipt = judge(V, write(tmp_path, "a.txt", "x"), lambda: tool_result("denied", is_error=True))
    assert receipt.verdict is Verdict.UNCHECKED


def test_dev_server_receipt_must_describe_the_file(tmp_path: Path) -> None:
    cmd = dev_command(tmp_path)
    data = b"content\n"
    good = {"path": "d/f.txt", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (tmp_path / "d").mkdir()

    def act(receipt: dict):
        def run():
            (tmp_path / "d" / "f.txt").write_bytes(data)
            return tool_result("wrote", receipt)

        return run

    ctx = write(tmp_path, "d/f.txt", "content\n", backend_command=cmd)
    assert judge(V, ctx, act(good)).verdict is Verdict.VERIFIED
    for bad in (
        {**good, "sha256": "0" * 64},
        {**good, "bytes": 3},
        {**good, "path": "d/other.txt"},
        {**good, "sha256": "not-hex"},
    ):
        receipt = judge(V, ctx, act(bad))
        assert receipt.verdict is Verdict.CONTRADICTED, bad


def test_apply_edits_follows_the_servers_rules() -> None:
    text = "def f():\n    a = 1\n    return a\n"
    exact = apply_edits(text, [{"oldText": "a = 1", "newText": "a = 2"}])
    assert exact == "def f():\n    a = 2\n    return a\n"
    fuzzy = apply_edits(text, [{"oldText": "a = 1\n  return a", "newText": "b = 1\n  return b"}])
    assert fuzzy == "def f():\n    b = 1\n    return b\n"


def test_edit_lies_are_contradicted(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("x = 1\ny = 2\n")
    edits = [{"oldText": "x = 1", "newText": "x = 10"}, {"oldText": "y = 2", "newText": "y = 20"}]
    ctx = call("edit_file", {"path": "m.py", "edits": edits}, roots=[tmp_path])
    assert judge(V, ctx, lambda: tool_result("```diff```")).verdict is Verdict.CONTRADICTED

    def partial():
        target.write_text("x = 10\ny = 2\n")
        return tool_result("```diff```")

    assert judge(V, ctx, partial).verdict is Verdict.CONTRADICTED
    target.write_text("x = 1\ny = 2\n")

    def honest():
        target.write_text("x = 10\ny = 20\n")
        return tool_result("```diff```")

    assert judge(V, ctx, honest).verdict is Verdict.VERIFIED
    nowhere = [{"oldText": "zzz", "newText": "q"}]
    missing = call("edit_file", {"path": "m.py", "edits": nowhere}, roots=[tmp_path])
    assert judge(V, missing, lambda: tool_result("ok")).verdict is Verdict.CONTRADICTED


def test_directory_and_move_claims(tmp_path: Path) -> None:
    mkdir = call("create_directory", {"path": "a/b"}, roots=[tmp_path])
    assert judge(V, mkdir, lambda: OK).verdict is Verdict.CONTRADICTED
    receipt = judge(V, mkdir, lambda: ((tmp_path / "a" / "b").mkdir(parents=True), OK)[1])
    assert receipt.verdict is Verdict.VERIFIED and V.still_holds(mkdir, receipt)

    (tmp_path / "src.txt").write_text("payload")
    move = call("move_file", {"source": "src.txt", "destination": "dst.txt"}, roots=[tmp_path])

    def copy_only():
        shutil.copy(tmp_path / "src.txt", tmp_path / "dst.txt")
        return OK

    assert judge(V, move, copy_only).verdict is Verdict.CONTRADICTED
    (tmp_path / "dst.txt").unlink()

    def moved_elsewhere():
        (tmp_path / "src.txt").rename(tmp_path / "elsewhere.txt")
        return OK

    assert judge(V, move, moved_elsewhere).verdict is Verdict.CONTRADICTED
    (tmp_path / "elsewhere.txt").rename(tmp_path / "src.txt")

    def honest():
        (tmp_path / "src.txt").rename(tmp_path / "dst.txt")
        return OK

    receipt = judge(V, move, honest)
    assert receipt.verdict is Verdict.VERIFIED and V.still_holds(move, receipt)


@pytest.mark.skipif(
    not (node_tools() / ".bin" / "mcp-server-filesystem").exists(),
    reason="the official filesystem server is not installed",
)
def test_official_filesystem_server_through_the_proxy_is_verified(tmp_path: Path, home) -> None:
    """No false alarm on the real server, including its whitespace-tolerant edit."""
    root = tmp_path / "root"
    root.mkdir()
    calls = [
        ("create_directory", {"path": str(root / "pkg")}),
        ("write_file", {"path": str(root / "pkg" / "m.py"), "content": "def f():\n    a = 1\n"}),
        (
            "edit_file",
            {"path": "pkg/m.py", "edits": [{"oldText": "  a = 1", "newText": "  a = 2\n  b = 3"}]},
        ),
        ("write_file", {"path": "crlf.txt", "content": "one\r\ntwo\r\n"}),
        ("edit_file", {"path": "crlf.txt", "edits": [{"oldText": "two", "newText": "2"}]}),
        ("move_file", {"source": "crlf.txt", "destination": "pkg/moved.txt"}),
        ("write_file", {"path": str(root / "pkg" / "m.py"), "content": "x"}),
    ]

    async def scenario() -> list[str | None]:
        params = proxied(filesystem_server_argv(root), [root], home)
        async with Client(params, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            replies = [wire(await client.call_tool(name, args)) for name, args in calls]
        assert not [r for r in replies if r.get("isError")]
        return [verdict_of(r) for r in replies]

    assert anyio.run(scenario) == ["verified"] * len(calls)
    assert (root / "pkg" / "moved.txt").read_text() == "one\n2\n"


def test_relative_paths_follow_the_filesystem_servers_own_directory_order(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    server = ("node", "/x/node_modules/.bin/mcp-server-filesystem", str(second), str(first))
    ctx = call(
        "write_file",
        {"path": "n.txt", "content": "n"},
        roots=[first, second],
        backend_command=server,
    )
    receipt = judge(V, ctx, lambda: ((second / "n.txt").write_text("n"), OK)[1])
    assert receipt.verdict is Verdict.VERIFIED
    assert receipt.evidence[0].where == str((second / "n.txt").resolve())


def test_only_known_tools_with_known_well_formed_arguments_are_judged(tmp_path: Path) -> None:
    def applies(name: str, args: dict[str, object], method: str = "tools/call") -> bool:
        return V.applies(call(name, args, roots=[tmp_path], method=method))

    assert applies("write_file", {"path": "a", "content": "x"})
    assert applies("move_file", {"source": "a", "destination": "b"})
    assert applies("edit_file", {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
    assert not applies("write_file", {"path": "a", "content": "x", "append": True})
    assert not applies("write_file", {"path": "a", "content": 3})
    assert not applies("edit_file", {"path": "a", "edits": [{"oldText": "x"}]})
    assert not applies("move_file", {"source": "a"})
    assert not applies("delete_file", {"path": "a"})
    assert not applies("write_file", {"path": "a", "content": "x"}, method="resources/read")


def test_concurrent_lies_about_different_files_are_each_contradicted(tmp_path: Path) -> None:
    """Two writes in flight at once in one root used to excuse each other as overlapping."""
    first, second = write(tmp_path, "a.txt", "alpha"), write(tmp_path, "b.txt", "beta")
    before_first, before_second = V.snapshot(first), V.snapshot(second)
    (tmp_path / "a.txt").write_text("not alpha")
    (tmp_path / "b.txt").write_text("not beta")
    assert V.verify(first, before_first, OK).verdict is Verdict.CONTRADICTED
    assert V.verify(second, before_second, OK).verdict is Verdict.CONTRADICTED


def test_concurrent_writes_to_one_file_still_excuse_each_other(tmp_path: Path) -> None:
    """In flight together, the file can hold only one of them: the other's mismatch is not held
    against the backend; a move's destination counts as its file too."""
    first, second = write(tmp_path, "a.txt", "alpha"), write(tmp_path, "a.txt", "beta")
    (tmp_path / "c.txt").write_text("gamma")
    move = call("move_file", {"source": "c.txt", "destination": "a.txt"}, roots=[tmp_path])
    snapshots = [V.snapshot(ctx) for ctx in (first, second)]
    moving = V.snapshot(move)
    (tmp_path / "a.txt").write_text("beta")
    assert V.verify(first, snapshots[0], OK).verdict is Verdict.UNCHECKED
    assert V.verify(second, snapshots[1], OK).verdict is Verdict.VERIFIED
    assert V.verify(move, moving, OK).verdict is Verdict.UNCHECKED

"""Resources, prompts, roots and sampling over both protocol eras (2025 handshake, 2026-07-28)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.servers.dev.conftest import eventually, git

ERAS = ["legacy", "2026-07-28"]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("mode", ERAS)
def test_resources_prompts_and_no_sampling(repo: Path, client_for, mode: str) -> None:
    """A client with no roots and no sampling: --repo-path is the only boundary."""
    (repo / "src" / "app.py").write_text("print('changed')\n")
    (repo / "logo.bin").write_bytes(b"\x89PNG\x00\xff")

    updated: list[str] = []

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async def scenario() -> None:
        async with client_for(repo, mode=mode, message_handler=on_message) as client:
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            assert listed == {"repo://status", "repo://log"}
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["repo://file/{path}"]

            status = json.loads((await client.read_resource("repo://status")).contents[0].text)
            assert status["head"] == git(repo, "rev-parse", "HEAD").strip()
            assert {"index": " ", "worktree": "M", "path": "src/app.py"} in status["entries"]

            log = json.loads((await client.read_resource("repo://log")).contents[0].text)
            assert [c["subject"] for c in log["commits"]] == ["initial commit"]

            text = (await client.read_resource("repo://file/src/app.py")).contents[0]
            assert text.text == "print('changed')\n"
            spaced = repo / "a dir" / "b.txt"
            spaced.parent.mkdir()
            spaced.write_text("spaces\n")
            quoted = (await client.read_resource("repo://file/a%20dir/b.txt")).contents[0]
            assert quoted.text == "spaces\n"
            blob = (await client.read_resource("repo://file/logo.bin")).contents[0]
            assert base64.b64decode(blob.blob) == b"\x89PNG\x00\xff"

            with pytest.raises(MCPError, match=r"no file 'nope\.txt'"):
                await client.read_resource("repo://file/nope.txt")
            with pytest.raises(MCPError, match="unknown resource"):
                await client.read_resource("repo://other")

            names = {p.name for p in (await client.list_prompts()).prompts}
            assert names == {"review_diff", "commit_message"}
            review = await client.get_prompt("review_diff", {"focus": "error handling"})
            body = review.messages[0].content.text
            assert "+print('changed')" in body and "error handling" in body
            message = await client.get_prompt("commit_message", {"hint": "greeting"})
            assert "imperative" in message.messages[0].content.text
            assert "+print('changed')" in message.messages[0].content.text
            with pytest.raises(MCPError, match="unknown prompt"):
                await client.get_prompt("nope", {})
            with pytest.raises(MCPError, match="no argument 'bogus'"):
                await client.get_prompt("review_diff", {"bogus": "x"})
            with pytest.raises(MCPError, match="looks like a command-line option"):
                await client.get_prompt("review_diff", {"target": "--output=x"})

            if mode == "legacy":  # 2026-07-28 moves subscriptions to subscriptions/listen
                await client.subscribe_resource("repo://status")
                with pytest.raises(MCPError, match="climbs with"):
                    await client.subscribe_resource("repo://file/../x")
                await client.call_tool("git_status", {})  # a read announces nothing
                await client.call_tool("write_file", {"path": "new.txt", "content": "n"})
                await eventually(lambda: bool(updated))
                assert updated == ["repo://status"]
                await client.unsubscribe_resource("repo://status")

            files = await client.complete(
                types.ResourceTemplateReference(uri="repo://file/{path}"),
                {"name": "path", "value": "src/"},
            )
            assert files.completion.values == ["src/app.py"]
            git(repo, "branch", "release-1")
            targets = await client.complete(
                types.PromptReference(name="review_diff"), {"name": "target", "value": "rel"}
            )
            assert targets.completion.values == ["release-1"]
            other = await client.complete(
                types.PromptReference(name="commit_message"), {"name": "hint", "value": ""}
            )
            assert other.completion.values == []

            drafted = await client.call_tool("draft_commit_message", {})
            assert drafted.is_error
            assert "does not support sampling" in drafted.content[0].text
            assert "no model was asked" in drafted.content[0].text

    anyio.run(scenario)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("mode", ERAS)
def test_roots_and_sampling_with_a_capable_client(repo: Path, client_for, mode: str) -> None:
    asked: list[str] = []
    declined: list[bool] = []
    roots = [types.Root(uri="file:///nowhere/else")]

    async def list_roots(_ctx) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=roots)

    async def sample(_ctx, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append("sampling")
        if declined:
            return types.ErrorData(code=-1, message="the user declined")
        prompt = params.messages[0].content.text
        assert "+second line" in prompt and "for the demo" in prompt
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Extend the README\n\nFor the demo."),
            model="test-model",
        )

    async def scenario() -> None:
        async with client_for(
            repo, mode=mode, list_roots_callback=list_roots, sampling_callback=sample
        ) as client:
            refused = await client.call_tool("git_status", {})
            assert refused.is_error and "outside the host's roots" in refused.content[0].text
            with pytest.raises(MCPError, match="outside the host's roots"):
                await client.read_resource("repo://status")
            with pytest.raises(MCPError, match="outside the host's roots"):
                await client.get_prompt("commit_message", {})
            assert asked == ["roots"]  # asked once, then remembered

            roots[:] = [types.Root(uri=repo.parent.as_uri())]
            if mode == "legacy":
                await client.send_roots_list_changed()
                await _until_allowed(client)
            else:  # a 2026-07-28 server keeps the roots it was given; a new client starts afresh
                return
            (repo / "README.md").write_text("# demo\nsecond line\n")
            drafted = await client.call_tool("draft_commit_message", {"hint": "for the demo"})
            assert not drafted.is_error, drafted.content[0].text
            assert drafted.structured_content == {
                "message": "Extend the README\n\nFor the demo.",
                "model": "test-model",
            }
            assert asked[-1] == "sampling"
            assert git(repo, "status", "--porcelain").strip() == "M README.md"  # not committed

            declined.append(True)
            refused = await client.call_tool("draft_commit_message", {})
            assert (
                refused.is_error
                and "did not answer the sampling request" in refused.content[0].text
            )

    anyio.run(scenario)


async def _until_allowed(client) -> None:
    """The list_changed notification is asynchronous; wait until the server re-asked."""

    async def allowed() -> bool:
        return not (await client.call_tool("git_status", {})).is_error

    await eventually(allowed)


def test_modern_roots_inside_allow_sampling_and_resources(repo: Path, client_for) -> None:
    """The 2026-07-28 path: roots and sampling both travel as input_required rounds."""

    async def list_roots(_ctx) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=repo.as_uri(), name="repo")])

    async def sample(_ctx, _params) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Tweak"), model="m"
        )

    async def scenario() -> None:
        async with client_for(
            repo, mode="2026-07-28", list_roots_callback=list_roots, sampling_callback=sample
        ) as client:
            (repo / "README.md").write_text("# demo\ntweak\n")
            drafted = await client.call_tool("draft_commit_message", {})
            assert drafted.structured_content == {"message": "Tweak", "model": "m"}
            status = json.loads((await client.read_resource("repo://status")).contents[0].text)
            assert status["clean"] is False

    anyio.run(scenario)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("mode", ERAS)
def test_a_host_listing_no_roots_leaves_repo_path_as_the_boundary(
    repo: Path, client_for, mode: str
) -> None:
    """Declaring roots and listing none sets no boundary (as the official filesystem server)."""

    async def no_roots(_ctx) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[])

    async def scenario() -> None:
        async with client_for(repo, mode=mode, list_roots_callback=no_roots) as client:
            status = await client.call_tool("git_status", {})
            assert not status.is_error, status.content[0].text
            escaped = await client.call_tool("read_file", {"path": "../outside.txt"})
            assert escaped.is_error  # --repo-path still confines every path

    anyio.run(scenario)

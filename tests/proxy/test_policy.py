"""Policy: allow / deny / ask, with paths normalised; denied calls never reach the backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.core.errors import InputError
from affidavit.proxy.policy import load_policy
from tests.proxy.conftest import sample_twice, text_of, tool_calls
from tests.support import run_cli

SECRETS = """
default: allow
rules:
  - tool: "*"
    arguments: {path: "secrets/*"}
    action: deny
    reason: secrets are off limits
  - tool: echo
    arguments: {mode: "ask"}
    action: require-approval
sampling:
  max_per_minute: 1
"""


def write_policy(tmp_path: Path, text: str = SECRETS) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "value",
    ["secrets/x", "./secrets/x", "a/../secrets/x", "secrets//x", "./a/./../secrets/x"],
)
def test_path_spellings_are_normalised_before_matching(tmp_path, value):
    policy = load_policy(write_policy(tmp_path))
    assert policy.decide("write_file", {"path": value}).action == "deny"


def test_absolute_paths_inside_a_root_match_relative_patterns(tmp_path):
    policy = load_policy(write_policy(tmp_path))
    root = tmp_path / "repo"
    (root / "secrets").mkdir(parents=True)
    assert (
        policy.decide("write_file", {"path": str(root / "secrets" / "k")}, [root]).action == "deny"
    )
    assert (
        policy.decide("write_file", {"path": str(root / "public" / "k")}, [root]).action == "allow"
    )
    assert policy.decide("write_file", {"path": "secretsx/y"}).action == "allow"
    assert policy.decide("write_file", {"other": "secrets/x"}).action == "allow"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [", "is not valid YAML at line 1"),
        ("rules:\n  - tool: x\n    action: maybe\n", "rule 1: `action` must be one of"),
        ("colour: red\n", "unknown key(s) colour"),
        ("sampling: {max_per_minute: -1}\n", "`sampling.max_per_minute` must be a whole number"),
    ],
)
def test_malformed_policy_is_one_clear_error(tmp_path, text, message):
    with pytest.raises(InputError) as caught:
        load_policy(write_policy(tmp_path, text))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_bad_policy_file_stops_the_cli_with_one_line(home, tmp_path):
    result = run_cli(
        ["proxy", "--policy", str(write_policy(tmp_path, "rules: [")), "--", "true"], home
    )
    assert result.returncode == 2
    assert (
        result.stderr.startswith("affidavit: error: policy file") and result.stderr.count("\n") == 1
    )


def test_denied_call_never_reaches_the_backend(raw_proxy, backend_log, tmp_path):
    proxy = raw_proxy("--policy", str(write_policy(tmp_path)))
    proxy.initialize()
    reply = proxy.call(1, "write_file", {"path": "a/../secrets/key", "content": "x"})
    assert reply["result"]["isError"] is True
    assert "policy denied" in text_of(reply) and "secrets are off limits" in text_of(reply)
    allowed = proxy.call(2, "echo", {"path": "public/x"})
    assert allowed["result"]["isError"] is False
    assert tool_calls(backend_log, "write_file") == 0 and tool_calls(backend_log, "echo") == 1


@pytest.mark.parametrize(
    ("action", "approve", "runs"), [("accept", True, 1), ("accept", False, 0), ("decline", None, 0)]
)
def test_approval_asks_the_host_with_the_full_arguments(
    raw_proxy, backend_log, tmp_path, action, approve, runs
):
    proxy = raw_proxy("--policy", str(write_policy(tmp_path)))
    proxy.initialize({"elicitation": {}})
    proxy.begin_call(7, "echo", {"mode": "ask", "payload": "full-argument-text"})
    ask = proxy.recv()
    assert ask["method"] == "elicitation/create"
    assert "full-argument-text" in ask["params"]["message"] and "`echo`" in ask["params"]["message"]
    answer = (
        {"action": action}
        if approve is None
        else {"action": action, "content": {"approve": approve}}
    )
    proxy.send({"jsonrpc": "2.0", "id": ask["id"], "result": answer})
    reply = proxy.recv()
    assert reply["id"] == 7 and reply["result"]["isError"] is (runs == 0)
    assert tool_calls(backend_log, "echo") == runs


def test_approval_is_denied_clearly_when_the_host_cannot_ask(raw_proxy, backend_log, tmp_path):
    proxy = raw_proxy("--policy", str(write_policy(tmp_path)))
    proxy.initialize({})
    reply = proxy.call(8, "echo", {"mode": "ask"})
    assert reply["result"]["isError"] is True and "host cannot ask" in text_of(reply)
    assert tool_calls(backend_log, "echo") == 0


def test_sampling_over_the_rate_limit_is_refused_before_the_host(raw_proxy, tmp_path):
    second = sample_twice(raw_proxy("--policy", str(write_policy(tmp_path))))
    assert "sampling refused" in second and "1 per minute" in second


def test_proxy_replay_reports_calls_a_new_policy_would_change(raw_proxy, tmp_path, home):
    log = tmp_path / "audit.jsonl"
    proxy = raw_proxy()
    proxy.initialize()
    proxy.call(1, "echo", {"path": "secrets/a"})
    proxy.call(2, "echo", {"path": "docs/b"})
    proxy.close()
    result = run_cli(
        ["proxy", "replay", str(log), "--policy", str(write_policy(tmp_path)), "--json"], home
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["calls"] == 2
    assert [(c["call"], c["was"], c["would_be"], c["rule"]) for c in report["changed"]] == [
        (1, "allow", "deny", 1)
    ]
    text = run_cli(["proxy", "replay", str(log), "--policy", str(write_policy(tmp_path))], home)
    assert "2 recorded calls; 1 would be decided differently" in text.stdout


@pytest.mark.parametrize("approve", [True, False])
@pytest.mark.anyio
async def test_official_client_approves_a_stateless_call_through_input_required(
    home, tmp_path, backend_log, approve
):
    """2026-07-28: no server-to-client request mid-call, so the proxy answers input_required."""
    import mcp_types as types

    from tests.proxy.conftest import RAW_BACKEND, proxy_env
    from tests.support import mcp_client

    shown: list[str] = []

    async def on_elicit(_context, params):
        shown.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": approve})

    args = ["proxy", "--audit-log", str(tmp_path / "a.jsonl"),
            "--policy", str(write_policy(tmp_path)), "--", *RAW_BACKEND]  # fmt: skip
    env = proxy_env(home, {"RAW_BACKEND_LOG": str(backend_log)})
    async with mcp_client(
        args, home, env=env, mode="2026-07-28", elicitation_callback=on_elicit
    ) as client:
        result = await client.call_tool("echo", {"mode": "ask", "note": "shown in full"})
    assert len(shown) == 1 and "shown in full" in shown[0]
    assert result.is_error is (not approve)
    assert tool_calls(backend_log, "echo") == (1 if approve else 0)
    if approve:  # the backend never sees the proxy's own question and answer
        assert b"affidavit-approval" not in backend_log.read_bytes()


def symlinked_secrets(root: Path) -> Path:
    """A workspace with ``secrets/key.txt`` and an in-tree alias ``alias -> secrets``."""
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("the secret\n")
    (root / "public").mkdir()
    (root / "alias").symlink_to("secrets")
    return root


@pytest.mark.parametrize("value", ["alias/key.txt", "alias/new.txt", "./alias/../alias/key.txt"])
def test_a_relative_path_through_an_in_tree_symlink_meets_the_deny(tmp_path, value):
    root = symlinked_secrets(tmp_path / "repo")
    policy = load_policy(write_policy(tmp_path))
    assert policy.decide("read_file", {"path": value}, [root]).action == "deny"
    assert policy.decide("write_file", {"path": str(root / value)}, [root]).action == "deny"


@pytest.mark.parametrize(
    "value", ["public/../secrets/key.txt", "public/../alias/key.txt", "public//../secrets/k"]
)
def test_an_allow_rule_holds_only_where_the_path_really_leads(tmp_path, value):
    """``public/*`` matched the words ``public/../secrets/key.txt``, not where they lead."""
    root = symlinked_secrets(tmp_path / "repo")
    (root / "public" / "door").symlink_to("../secrets")
    text = (
        'default: deny\nrules:\n  - tool: "*"\n    arguments: {path: "public/*"}\n'
        "    action: allow\n"
    )
    policy = load_policy(write_policy(tmp_path, text))
    assert policy.decide("read_file", {"path": value}, [root]).action == "deny"
    assert policy.decide("read_file", {"path": "public/door/key.txt"}, [root]).action == "deny"
    assert policy.decide("read_file", {"path": ["public/a", value]}, [root]).action == "deny"
    assert policy.decide("read_file", {"path": "public/a.txt"}, [root]).action == "allow"
    assert policy.decide("read_file", {"path": str(root / "public/a")}, [root]).action == "allow"


def test_file_reads_and_writes_through_a_symlink_never_reach_the_dev_server(raw_proxy, tmp_path):
    """End to end, the real dev server: tools and ``repo://file/`` resources alike."""
    import sys

    from tests.proxy._verifier_fixtures import init_repo

    repo = symlinked_secrets(init_repo(tmp_path / "repo"))
    dev = [sys.executable, "-m", "affidavit", "devserver", "--repo-path", str(repo)]
    proxy = raw_proxy("--policy", str(write_policy(tmp_path)), "--root", str(repo), backend=dev)
    proxy.initialize()
    for index, (name, arguments) in enumerate(
        [
            ("read_file", {"path": "alias/key.txt"}),
            ("write_file", {"path": "alias/planted.txt", "content": "x"}),
        ]
    ):
        reply = proxy.call(index, name, arguments)
        assert "policy denied" in text_of(reply), reply
    for index, uri in enumerate(
        ["repo://file/alias/key.txt", "repo://file/secrets/key.txt", "repo://file/alias%2Fkey.txt"]
    ):
        reply = proxy.request(10 + index, "resources/read", {"uri": uri})
        assert reply["error"]["code"] == -32004 and "policy denied" in reply["error"]["message"]
        assert "the secret" not in json.dumps(reply)
    assert not (repo / "secrets" / "planted.txt").exists()
    fine = proxy.request(20, "resources/read", {"uri": "repo://file/README.md"})
    assert fine["result"]["contents"][0]["text"] == "# demo\n"


def test_dot_dot_after_a_symlink_is_followed_the_way_the_system_follows_it(tmp_path):
    """``door/../x`` with ``door -> secrets/inner`` is ``secrets/x`` on disk, not ``x``."""
    root = symlinked_secrets(tmp_path / "repo")
    (root / "secrets" / "inner").mkdir()
    (root / "door").symlink_to("secrets/inner")
    policy = load_policy(write_policy(tmp_path))
    assert policy.decide("read_file", {"path": "door/../key.txt"}, [root]).action == "deny"


def test_a_bad_policy_points_at_help_the_user_has_not_at_a_repository_file(home, tmp_path):
    """A pip-installed user has no docs/proxy.md: the error points at `affidavit proxy --help`,
    and that help shows the file's format."""
    policy = str(write_policy(tmp_path, "rules: 3"))
    bad = run_cli(["proxy", "--policy", policy, "--", "true"], home)
    assert bad.returncode == 2 and "docs/" not in bad.stderr
    assert "`affidavit proxy --help`" in bad.stderr
    shown = run_cli(["proxy", "--help"], home).stdout
    for word in ("default:", "rules:", "require-approval", "resources/read"):
        assert word in shown
    wrong = run_cli(["proxy", "--verifier", "json:dumps", "--", "true"], home)
    assert "docs/" not in wrong.stderr and "affidavit.proxy.verifiers.base.Verifier" in wrong.stderr

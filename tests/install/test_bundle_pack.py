"""``affidavit bundle --pack DIR``: one signed pack as a Claude Desktop bundle, built by the real
command from a pack the real ``pack build`` and ``pack sign`` (ssh-keygen) made, validated by
the official ``mcpb validate``, and its server started the way the host starts it (settings
substituted, ``python -S``: nothing but what the bundle carries)."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

from tests.install.test_bundle import MANIFEST_SHAPE, _host_command, assert_mcpb_validates
from tests.packs.conftest import make_key
from tests.support import REPO_ROOT, run_cli

SAMPLE = REPO_ROOT / "src" / "affidavit" / "packs" / "sample"


@pytest.fixture(scope="module")
def signed(tmp_path_factory) -> tuple[Path, str, Path]:
    """A signed pack (sequence 3), the signer's fingerprint, and the fake HOME used."""
    home = tmp_path_factory.mktemp("home")
    work = tmp_path_factory.mktemp("work")
    key = make_key(work / "keys")
    built = run_cli(
        ["pack", "build", "--messages", str(SAMPLE / "messages.jsonl"), "--records",
         str(SAMPLE / "records.jsonl"), "--out", str(work / "draft"), "--title", "Team facts"],
        home,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    sign = ["pack", "sign", "--pack", str(work / "draft"), "--key", str(key.private)]
    sign += ["--expires", "90d", "--out", str(work / "team"), "--sequence", "3"]
    done = run_cli(sign, home)
    assert done.returncode == 0, done.stderr
    return work / "team", key.fingerprint, home


@pytest.fixture(scope="module")
def unpacked(signed, tmp_path_factory) -> Path:
    pack, _, home = signed
    out = tmp_path_factory.mktemp("out") / "team.mcpb"
    done = run_cli(["bundle", "--pack", str(pack), "--out", str(out)], home, timeout=900)
    assert done.returncode == 0, done.stderr
    folder = tmp_path_factory.mktemp("installed")
    with zipfile.ZipFile(out) as archive:
        archive.extractall(folder)
        names = archive.namelist()
    tops = {n.split("/")[2] for n in names if n.startswith("server/lib/")}
    assert {"affidavit", "mcp", "nacl"} <= tops
    assert not tops & {"onnxruntime", "tokenizers", "usearch", "sympy"}
    assert not any(n.endswith("model.onnx") for n in names)
    return folder


@pytest.fixture(scope="module")
def manifest(unpacked) -> dict:
    return json.loads((unpacked / "manifest.json").read_text())


def test_the_settings_form_holds_the_trust_flags_pinned_to_the_signer(manifest, signed, unpacked):
    pack, fingerprint, _ = signed
    jsonschema.validate(manifest, MANIFEST_SHAPE)
    form = manifest["user_config"]
    assert form["fingerprint"] == {**form["fingerprint"], "type": "string", "default": fingerprint}
    assert form["min_sequence"]["type"] == "number" and form["min_sequence"]["default"] == 3
    assert form["strict"]["type"] == "boolean" and form["strict"]["default"] is False
    assert not any(option.get("sensitive") for option in form.values())
    carried = sorted(p.name for p in (unpacked / "pack").iterdir())
    assert carried == sorted(p.name for p in pack.iterdir())
    for name in carried:
        assert (unpacked / "pack" / name).read_bytes() == (pack / name).read_bytes()


def test_the_official_mcpb_tool_accepts_the_pack_manifest(unpacked):
    assert_mcpb_validates(unpacked / "manifest.json")


def _serve(command: list[str], home: Path) -> tuple[list[str], dict]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def run() -> tuple[list[str], dict]:
        async with Client(params) as client:  # type: ignore[arg-type]
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            found = await client.call_tool("verified_memory_search", {"query": "deploy"})
            return tools, dict(found.structured_content or {})

    return anyio.run(run)


def _settings(fingerprint: str, sequence: str = "3", strict: str = "false") -> dict[str, str]:
    return {"fingerprint": fingerprint, "min_sequence": sequence, "strict": strict}


def test_the_server_serves_the_pack_from_the_bundle_alone(manifest, unpacked, signed, tmp_path):
    _, fingerprint, _ = signed
    command = _host_command(manifest, unpacked, _settings(fingerprint, strict="true"))
    tools, found = _serve(command, tmp_path)
    assert tools == ["verified_memory_get", "verified_memory_search"]
    signature = found["verification"]["signature"]
    assert signature["fingerprint"] == fingerprint and signature["pinned"] is True
    assert not list(unpacked.rglob("__pycache__")), "the read-only server wrote nothing"


def test_emptied_settings_serve_it_unpinned(manifest, unpacked, signed, tmp_path):
    command = _host_command(manifest, unpacked, _settings("", sequence=""))
    _, found = _serve(command, tmp_path)
    assert found["verification"]["signature"]["pinned"] is False


@pytest.mark.parametrize(
    ("pin", "sequence", "reason"),
    [("SHA256:" + "A" * 43, "3", "not a pinned signer"), (None, "4", "sequence")],
    ids=["another-signer", "older-than-the-minimum"],
)
def test_settings_the_pack_does_not_meet_refuse_it(
    manifest, unpacked, signed, tmp_path, pin, sequence, reason
):
    _, fingerprint, _ = signed
    command = _host_command(manifest, unpacked, _settings(pin or fingerprint, sequence))
    done = subprocess.run(command, input="", capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stdout == ""
    assert reason in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_an_unsigned_pack_is_refused_and_nothing_written(signed, tmp_path):
    pack, _, home = signed
    unsigned = tmp_path / "unsigned"
    unsigned.mkdir()
    for name in ("records.jsonl", "MEMORY.md", "README.md", "SHA256SUMS"):
        (unsigned / name).write_bytes((pack / name).read_bytes())
    (unsigned / "SHA256SUMS").write_text(
        "".join(
            line + "\n"
            for line in (pack / "SHA256SUMS").read_text().splitlines()
            if "PACK.json" not in line
        )
    )
    out = tmp_path / "x.mcpb"
    done = run_cli(["bundle", "--pack", str(unsigned), "--out", str(out)], home)
    assert done.returncode == 2 and "not signed" in done.stderr, done.stderr
    assert not out.exists()


def test_trust_flags_without_a_pack_are_a_usage_error(home):
    done = run_cli(["bundle", "--", "--strict"], home)
    assert done.returncode == 2 and "--pack" in done.stderr

"""The evidence section of ``affidavit demo``: build, sign, verify, serve, then tamper.

Everything is real: the builder on the embedded fictional sample, a throwaway Ed25519 key from
``ssh-keygen``, ``pack sign`` through ``ssh-keygen -Y sign``, the pack server as a child process
queried by the official MCP client over stdio, and the verifier refusing tampered copies.
Each step checks its own outcome and raises if what it shows does not hold.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from rich.markup import escape

from affidavit.cli.output import stdout
from affidavit.core.errors import AffidavitError, ExternalError, IntegrityError

TITLE = "Larkspur Lane tool library"


def _step(text: str) -> None:
    stdout.print(f"[bold cyan]>[/] {text}")


def _make_key(directory: Path) -> Path:
    """A throwaway, passphrase-less Ed25519 key, made by the real ssh-keygen."""
    key = directory / "demo-signer"
    done = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "affidavit demo", "-f", str(key)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ExternalError(f"ssh-keygen failed: {done.stderr.strip()}", "is OpenSSH installed?")
    return key


def _build(workdir: Path) -> Path:
    from affidavit.packs import build_pack

    sample = resources.files("affidavit.packs") / "sample"
    with (
        resources.as_file(sample / "messages.jsonl") as messages,
        resources.as_file(sample / "records.jsonl") as records,
    ):
        built = build_pack(messages, records, workdir / "pack", TITLE, "Invented demo data.")
    _step(f"built a pack of {built.record_count} records, every quote found verbatim")
    return built.path


def _sign(pack: Path, workdir: Path) -> tuple[Path, str]:
    from affidavit.packs import sign_pack

    keys = workdir / "keys"
    keys.mkdir()
    key = _make_key(keys)
    expires = datetime.now(UTC) + timedelta(days=90)
    signed = sign_pack(pack, key, expires, workdir / "signed", sequence=1)
    _step(f"signed it with a throwaway key: {signed.fingerprint} (sequence 1, expires in 90 days)")
    return signed.out, signed.fingerprint


def _verify(pack: Path, pin: str) -> None:
    from affidavit.packs import TrustOptions, verify_pack

    trust = TrustOptions(trusted_fingerprints=(pin,), min_sequence=1, strict=True)
    verification = verify_pack(pack, trust).verification()
    signature, freshness = verification["signature"], verification["freshness"]
    _step("verified it pinned to that key, under --strict and --min-sequence 1:")
    stdout.print(
        f"  signature: {signature['status']}, signer {signature['signer']}, "
        f"pinned={signature['pinned']}"
    )
    stdout.print(
        f"  freshness: {freshness['status']} until {freshness['expires_utc']}, "
        f"sequence {freshness['sequence']}, authenticated={freshness['authenticated']}"
    )


async def _query(pack: Path, pin: str) -> list[tuple[str, Any]]:
    from mcp import Client, StdioServerParameters

    args = ["-m", "affidavit", "pack", "serve", f"--pack={pack}"]
    args += [f"--trusted-fingerprint={pin}", "--min-sequence=1", "--strict"]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    calls: list[tuple[str, Any]] = []
    async with Client(params) as client:
        tools = await client.list_tools()
        calls.append(("tools", [tool.name for tool in tools.tools]))
        found = await client.call_tool("verified_memory_search", {"query": "ladders returned"})
        calls.append(("search", found))
        got = await client.call_tool("verified_memory_get", {"id": "M-library-3"})
        calls.append(("get", got))
        (pack / "README.md").touch()  # someone edits the pack while it is being served
        calls.append(("changed", await client.call_tool("verified_memory_get", {"id": "M-fees-1"})))
    return calls


def _body(result: Any) -> dict[str, Any]:
    if result.is_error:
        raise IntegrityError(f"demo: a tool call failed: {result.content[0].text}")
    return json.loads(result.content[0].text)


def _serve(pack: Path, pin: str) -> None:
    import anyio

    _step("served it over stdio and queried it with the official MCP client:")
    calls = dict(anyio.run(_query, pack, pin))
    stdout.print(f"  tools: {', '.join(calls['tools'])}")
    found = _body(calls["search"])
    top = found["matches"][0]
    why = "; ".join(f"{r['term']} -> {'/'.join(r['matched'])}" for r in top["why"])
    stdout.print(
        f"  search 'ladders returned': {found['matched']} match, {top['record_id']} ({why})"
    )
    citation = top["evidence"][0]
    stdout.print(f"    \u201c{escape(citation['quote'])}\u201d (message {citation['message_id']})")
    record = _body(calls["get"])["record"]
    stdout.print(f"  get M-library-3: {escape(record['statement'])}")
    stdout.print(f"  every result carries the notice: [italic]{found['notice'][:60]}...[/]")
    changed = calls["changed"]
    if not changed.is_error:
        raise IntegrityError("demo: the server kept serving a pack that changed on disk")
    stdout.print(f"  after a file was touched: [red]{escape(changed.content[0].text)}[/]")


def _tampered(signed: Path, workdir: Path, pin: str) -> None:
    from affidavit.packs import TrustOptions, verify_pack
    from affidavit.packs import format as fmt

    _step("tampered copies are refused, each with its reason:")
    trust = TrustOptions(trusted_fingerprints=(pin,), strict=True)
    edited = workdir / "tampered"
    shutil.copytree(signed, edited)
    records = edited / fmt.RECORDS
    records.write_bytes(records.read_bytes().replace(b"9016", b"1234"))
    resealed = workdir / "resealed"
    shutil.copytree(edited, resealed)
    sums = {
        name: hashlib.sha256((resealed / name).read_bytes()).hexdigest()
        for name in fmt.SEALED_FILES
        if (resealed / name).exists()
    }
    (resealed / fmt.SUMS).write_bytes(fmt.render_manifest(sums))
    for label, pack in (("key code edited", edited), ("edited and resealed", resealed)):
        try:
            verify_pack(pack, trust)
        except AffidavitError as exc:
            stdout.print(f"  {label}: [red]{escape(str(exc))}[/]")
        else:
            raise IntegrityError(f"demo: a tampered pack ({label}) was accepted")


def run(workdir: Path) -> None:
    """Build, sign, verify and serve the sample pack; show tampering refused."""
    pack = _build(workdir)
    signed, pin = _sign(pack, workdir)
    _verify(signed, pin)
    _serve(signed, pin)
    _tampered(signed, workdir, pin)

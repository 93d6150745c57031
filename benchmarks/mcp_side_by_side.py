"""affidavit side by side with its peers over MCP (issue 19): the same work, the same client.

    python benchmarks/mcp_side_by_side.py [--quick] [--memories N] [--workdir DIR] [--fresh]
                                          [--only memory|import|proxy] [--json FILE]

Each tool is driven through its own MCP server over stdio by the official ``mcp`` SDK client
(``mcp.Client``, initialize handshake), calls alternating between the tools, and every row
reports medians (and p95 where asked) with the number of samples, the ratio to the peer and
the machine's load average. The peers are installed by this script from the package index
into their own virtual environments under ``benchmarks/out/peers/`` (Compartment pinned to
``compartment==4.13.0``, verimcp to ``verimcp==0.3.0``); a peer that cannot be installed is
skipped and the table says so.

Memory rows (``affidavit serve`` against ``compartment serve``, a vault of N synthetic short
facts, the same facts for both, generated here):

- server start to tools/list: spawn, initialize, ``tools/list`` answered (fresh process);
- first memory_search after start: from that ``tools/list`` answer to the first search's;
- start to first search answered: spawn to that first search's answer (the two above);
- memory_store p50 and memory_search p50/p95 with N memories, one long-lived server each;
- server RSS after the searches (``VmRSS`` of the server process);
- bulk import of the N facts: wall seconds of the fill below (CPU seconds in the notes),
  from the run that filled the vaults (``--fresh`` or ``--only import`` refills them).

The vaults are filled through each tool's own bulk path: ``affidavit init`` + ``affidavit
import`` (export-format JSON lines) + ``affidavit unlock``; for Compartment an empty vault made
by its own ``Vault.create`` (what ``compartment init`` does, without the ~6,700 starter facts
``init`` always seeds), then ``compartment import`` + ``compartment unlock``. Compartment runs
with its embedding daemon off (``COMPARTMENT_EMBED_DAEMON=0``: the model lives in the server,
as affidavit's does). Filled vaults are kept in the work directory and reused (``--fresh``
refills them); affidavit is driven only through its CLI and MCP, never imported.

Proxy row: added latency of a trivial ``echo`` tool that no verifier judges: the same raw
JSON-RPC backend alone, behind ``affidavit proxy`` and behind ``verimcp`` (each with its
default settings: affidavit writes its audit log, verimcp none unless asked).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
import venv
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from _mcp_host import affidavit_env, checked, client, minimal_env, run  # benchmarks/ is on sys.path
from _procs import children, service_pid

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "out"
PEERS = {"compartment": "compartment==4.13.0", "verimcp": "verimcp==0.3.0"}
PASSPHRASE = "side by side benchmark passphrase, not a secret"  # noqa: S105 - throwaway vaults
CALL_TIMEOUT = 300.0
SEARCH_QUERIES = [
    "who reviewed the {thing}",
    "what did {first} {last} do in {place}",
    "when was the {thing} {verb}",
    "{first} and the {thing}",
]
ECHO_BACKEND = r"""
import json, sys
TOOL = {"name": "echo", "description": "Echo the arguments back.",
        "inputSchema": {"type": "object"}}
for raw in sys.stdin:
    m = json.loads(raw)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "echo", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": [TOOL]}
    elif m["method"] == "tools/call":
        r = {"content": [{"type": "text", "text": json.dumps(m["params"].get("arguments"))}],
             "isError": False}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
"""


# ----------------------------------------------------------------------------- the corpus

FIRST = [
    "Ada",
    "Ben",
    "Chloe",
    "Dev",
    "Elif",
    "Femi",
    "Gus",
    "Hana",
    "Ivo",
    "Jun",
    "Kai",
    "Lena",
    "Milo",
    "Nia",
    "Omar",
    "Pia",
    "Quinn",
    "Rosa",
]
LAST = [
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Novak",
    "Haddad",
    "Silva",
    "Kowalski",
    "Mensah",
    "Duarte",
    "Ivanova",
]
VERB = [
    "reviewed",
    "migrated",
    "deprecated",
    "benchmarked",
    "documented",
    "rewrote",
    "audited",
    "paused",
    "approved",
    "scheduled",
    "rolled back",
    "handed over",
]
THING = [
    "the billing service",
    "the mobile app",
    "the data warehouse",
    "the staging cluster",
    "the design system",
    "the release train",
    "the VPN gateway",
    "the onboarding guide",
    "the search index",
    "the CI runners",
    "the status page",
    "the payroll export",
    "the backup rotation",
    "the analytics pipeline",
    "the support inbox",
]
PLACE = [
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Denver",
    "Tallinn",
    "Recife",
    "Leeds",
    "Hanoi",
    "Quebec",
    "Perth",
    "Bergen",
    "Lyon",
]


def facts(count: int, seed: int) -> list[str]:
    """``count`` distinct short fictional facts (several slots vary, so no two are near
    copies that a duplicate check would fold together)."""
    rng = random.Random(seed)
    made: dict[str, None] = {}  # insertion-ordered: the same facts, in the same order, every run
    while len(made) < count:
        day = rng.randrange(1, 29)
        month = rng.randrange(1, 13)
        fact = (
            f"{rng.choice(FIRST)} {rng.choice(LAST)} {rng.choice(VERB)} {rng.choice(THING)} "
            f"in {rng.choice(PLACE)} on 2025-{month:02d}-{day:02d} "
            f"(ticket OPS-{rng.randrange(10**5)})."
        )
        made[fact] = None
    return list(made)


def queries(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice(SEARCH_QUERIES).format(
            thing=rng.choice(THING).removeprefix("the "),
            first=rng.choice(FIRST),
            last=rng.choice(LAST),
            place=rng.choice(PLACE),
            verb=rng.choice(VERB),
        )
        for _ in range(count)
    ]


# ----------------------------------------------------------------------------- measuring


@dataclass
class Samples:
    """Milliseconds measured for one tool on one row."""

    values: list[float] = field(default_factory=list)
    error: str = ""

    def add(self, seconds: float) -> None:
        self.values.append(seconds * 1000)

    def pct(self, q: float) -> float:
        ordered = sorted(self.values)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    @property
    def p50(self) -> float:
        return statistics.median(self.values)


@dataclass
class Row:
    """One line of the table: a metric, affidavit's and the peer's samples, the goal."""

    metric: str
    peer: str
    goal: str
    ours: Samples = field(default_factory=Samples)
    theirs: Samples = field(default_factory=Samples)
    unit: str = "ms"
    show_p95: bool = False
    detail: str = ""


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def timed(samples: Samples, step: Awaitable[Any]) -> Any:
    started = time.perf_counter()
    result = await asyncio.wait_for(step, CALL_TIMEOUT)
    samples.add(time.perf_counter() - started)
    return result


# ----------------------------------------------------------------------------- the tools


def peer_venv(name: str, spec: str) -> Path | None:
    """The peer's virtual environment (made and installed from the index when missing), or
    ``None`` when it cannot be installed."""
    home = OUT / "peers" / name
    python = home / "bin" / "python"
    wanted = spec.split("==")[1]
    if python.exists():
        shown = subprocess.run(
            [str(python), "-m", "pip", "show", name], capture_output=True, text=True, check=False
        )
        if f"Version: {wanted}" in shown.stdout:
            return home
    print(f"installing {spec} into {home} ...", file=sys.stderr, flush=True)
    shutil.rmtree(home, ignore_errors=True)
    venv.create(home, with_pip=True)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", spec], capture_output=True, text=True
    )
    if install.returncode != 0:
        print(f"could not install {spec}: {install.stderr[-400:]}", file=sys.stderr)
        return None
    return home


@dataclass
class MemoryTool:
    """One memory server: how to fill its vault, unlock it and start it."""

    name: str
    home: Path
    command: list[str]
    env: dict[str, str]
    fill: Callable[[list[str]], str]
    unlock: list[str]
    unlock_env: dict[str, str]
    unlock_stdin: str | None = None

    def server(self) -> StdioServerParameters:
        return StdioServerParameters(command=self.command[0], args=self.command[1:], env=self.env)

    def prepare(self, texts: list[str], fresh: bool) -> tuple[str, Filled]:
        """The vault filled with ``texts`` (kept from an earlier run when it matches), and a
        session open so the server starts without a passphrase; what its import reported,
        and how long the fill took (then or in the run that filled it)."""
        marker = self.home / "filled"
        stamp = f"{len(texts)} facts, " + hashlib.sha256("\n".join(texts).encode()).hexdigest()
        kept = marker.read_text().split("\n") if marker.exists() else [""]
        if fresh or kept[0] != stamp or len(kept) < 3:
            shutil.rmtree(self.home)  # a session left from an earlier vault would be tried first
            (self.home / "private").mkdir(parents=True, mode=0o700)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            at_start = load()
            started = time.perf_counter()
            report = self.fill(texts)
            took = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            filled = Filled(took, cpu, f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC", at_start, load())
            print(f"{self.name}: filled {len(texts)} facts in {took:.0f} s", file=sys.stderr)
            marker.write_text(f"{stamp}\n{report}\n{json.dumps(filled.__dict__)}")
            kept = [stamp, report, json.dumps(filled.__dict__)]
        run(self.unlock, self.unlock_env, self.unlock_stdin)
        return kept[1], Filled(**json.loads(kept[2]))


@dataclass
class Filled:
    """One fill of a vault through the tool's bulk import: wall and CPU seconds (the tool's
    processes: user + system), when, and the load average before and after."""

    seconds: float
    cpu: float
    when: str
    load_before: str
    load_after: str


def import_row(tools: list[MemoryTool], fills: list[Filled], count: int) -> Row:
    """Bulk import of the facts, side by side: each tool's last fill (wall seconds)."""
    row = Row(f"bulk import of {count:,} short facts", "Compartment", "<= 20 s", unit="s")
    notes = []
    for tool, filled in zip(tools, fills, strict=True):
        (row.ours if tool.name == "affidavit" else row.theirs).values.append(filled.seconds)
        notes.append(
            f"{tool.name} {filled.seconds:.1f} s wall, {filled.cpu:.1f} s CPU, {filled.when}, "
            f"load {filled.load_before} -> {filled.load_after}"
        )
    row.detail = "bulk import: " + "; ".join(notes)
    return row


def tool_home(work: Path, name: str) -> Path:
    """The tool's directory, with a private (0700) one inside for its session."""
    home = work / name
    (home / "private").mkdir(parents=True, exist_ok=True, mode=0o700)
    return home


def affidavit_tool(work: Path) -> MemoryTool:
    home = tool_home(work, "affidavit")
    env = affidavit_env(home)
    cli = [sys.executable, "-m", "affidavit"]
    secret_env = {**env, "AFFIDAVIT_PASSPHRASE": PASSPHRASE}

    def fill(texts: list[str]) -> str:
        run([*cli, "init", "--json"], secret_env)
        lines = home / "import.jsonl"
        with lines.open("w") as out:
            for number, text in enumerate(texts, 1):
                record = {
                    "id": f"{number:020x}",
                    "kind": "memory",
                    "namespace": "user",
                    "saved_at": "2025-06-01T12:00:00.000Z",
                    "data": {"text": text, "source": "benchmark", "importance": 0.5,
                             "kind": "fact", "tags": []},
                }  # fmt: skip
                out.write(json.dumps(record) + "\n")
        report = json.loads(run([*cli, "import", str(lines), "--json"], secret_env))
        return f"imported {report['imported']} of {report['rows']}"

    return MemoryTool(
        name="affidavit",
        home=home,
        command=[*cli, "serve", "--caller", "user"],
        env=env,
        fill=fill,
        unlock=[*cli, "unlock", "--json"],
        unlock_env=secret_env,
    )


def compartment_tool(work: Path, venv_home: Path) -> MemoryTool:
    home = tool_home(work, "compartment")
    vault = home / "memory.vault"
    env = minimal_env(
        home,
        {"COMPARTMENT_SESSION_DIR": str(home / "private"), "COMPARTMENT_EMBED_DAEMON": "0"},
    )
    cli = [str(venv_home / "bin" / "compartment"), "--vault", str(vault)]
    secret_env = {**env, "COMPARTMENT_PASSPHRASE": PASSPHRASE}

    def fill(texts: list[str]) -> str:
        create = (  # what `compartment init` does, minus the starter facts it always seeds
            "import sys\nfrom compartment.vault import Vault\n"
            "Vault.create(sys.argv[1], sys.stdin.read().strip()).save()\n"
        )
        run([str(venv_home / "bin" / "python"), "-c", create, str(vault)], env, PASSPHRASE)
        lines = home / "import.jsonl"
        with lines.open("w") as out:
            for text in texts:
                out.write(json.dumps({"text": text, "source": "benchmark"}) + "\n")
        return run([*cli, "import", str(lines)], secret_env).strip()

    return MemoryTool(
        name="compartment",
        home=home,
        command=[*cli, "serve"],
        env=env,
        fill=fill,
        unlock=[*cli, "unlock", "--passphrase-stdin"],
        unlock_env=env,
        unlock_stdin=PASSPHRASE,
    )


async def start_rows(tools: list[MemoryTool], starts: int, query: str) -> tuple[Row, Row, Row]:
    listed = Row("server start to tools/list, vault of N", "Compartment", "<= 150 ms")
    first = Row("first memory_search after tools/list", "Compartment", "<= 100 ms")
    answered = Row("start to first search answered, vault of N", "Compartment", "<= 250 ms")
    for _ in range(starts):
        for index, tool in enumerate(tools):
            which = "ours" if index == 0 else "theirs"
            began = time.perf_counter()
            async with client(tool.server()) as session:
                await asyncio.wait_for(session.list_tools(), CALL_TIMEOUT)
                getattr(listed, which).add(time.perf_counter() - began)
                checked(
                    await timed(getattr(first, which), session.call_tool("memory_search",
                                                                         {"query": query})),
                    "memory_search",
                )  # fmt: skip
                getattr(answered, which).add(time.perf_counter() - began)
    return listed, first, answered


async def steady_rows(
    tools: list[MemoryTool], asked: list[str], stored: list[str], warmup: int
) -> tuple[Row, Row, Row]:
    store = Row("memory_store p50, vault of N", "Compartment", "<= 8 ms")
    search = Row(
        "memory_search p50 / p95, vault of N", "Compartment", "<= 6 / 10 ms", show_p95=True
    )
    rss = Row("server RSS after searching, vault of N", "Compartment", "<= 200 MiB", unit="MiB")
    sessions = []
    pids = []
    statuses: dict[str, int] = {}
    try:
        for tool in tools:
            before = children()
            session = client(tool.server())
            await session.__aenter__()
            sessions.append(session)
            new = children() - before
            pids.append(max(new) if new else 0)
        for session in sessions:
            await session.list_tools()
            for query in asked[:warmup]:
                await session.call_tool("memory_search", {"query": query})
        for query in asked[warmup:]:
            for index, session in enumerate(sessions):
                result = await timed(
                    search.ours if index == 0 else search.theirs,
                    session.call_tool("memory_search", {"query": query}),
                )
                checked(result, "memory_search")
        for index, pid in enumerate(pids):
            if pid:
                (rss.ours if index == 0 else rss.theirs).values.append(rss_mib(pid))
        service = service_pid(tools[0].home / "private")
        if service is not None and rss.ours.values:  # counted in: it holds our model
            alone = rss.ours.values[0]
            rss.ours.values[0] += rss_mib(service)
            rss.detail = (
                f"affidavit RSS = server {alone:.0f} MiB + its shared model service "
                f"{rss.ours.values[0] - alone:.0f} MiB (one per user, ADR 0112)"
            )
        for text in stored:
            for index, session in enumerate(sessions):
                result = await timed(
                    store.ours if index == 0 else store.theirs,
                    session.call_tool("memory_store", {"text": text, "source": "benchmark"}),
                )
                checked(result, "memory_store")
                if index == 0:
                    status = (result.structured_content or {}).get("status", "?")
                    statuses[status] = statuses.get(status, 0) + 1
    finally:
        for session in reversed(sessions):
            await session.__aexit__(None, None, None)
    store.detail = "affidavit store outcomes: " + ", ".join(
        f"{count} {status}" for status, count in sorted(statuses.items())
    )
    return store, search, rss


async def proxy_row(work: Path, verimcp: Path | None, calls: int) -> Row:
    row = Row("proxy added latency p50, trivial tool, no verifier", "verimcp", "<= 0.10 ms")
    backend = work / "echo_backend.py"
    backend.write_text(ECHO_BACKEND)
    env = minimal_env(work, {"AFFIDAVIT_HOME": str(work / "proxy-home")})
    echo = [sys.executable, str(backend)]
    setups = {
        "direct": echo,
        "affidavit": [sys.executable, "-m", "affidavit", "proxy",
                      "--audit-log", str(work / "proxy-audit.jsonl"), "--", *echo],
    }  # fmt: skip
    if verimcp is not None:
        setups["verimcp"] = [str(verimcp / "bin" / "verimcp"), "--", *echo]
    samples = {name: Samples() for name in setups}
    sessions = {}
    try:
        for name, argv in setups.items():
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
            sessions[name] = client(params)
            await sessions[name].__aenter__()
            await sessions[name].list_tools()
        for i in range(calls + 50):
            for name, session in sessions.items():
                began = time.perf_counter()
                checked(await session.call_tool("echo", {"i": i}), "echo")
                if i >= 50:  # the first calls warm up
                    samples[name].add(time.perf_counter() - began)
    finally:
        for session in reversed(list(sessions.values())):
            await session.__aexit__(None, None, None)
    direct = samples["direct"].p50
    row.ours.values = [v - direct for v in samples["affidavit"].values]
    if "verimcp" in samples:
        row.theirs.values = [v - direct for v in samples["verimcp"].values]
    row.detail = "; ".join(
        f"{name} p50 {s.p50:.3f} / p95 {s.pct(0.95):.3f} ms (n={len(s.values)})"
        for name, s in samples.items()
    )
    return row


# ----------------------------------------------------------------------------- reporting


def cell(samples: Samples, row: Row) -> str:
    if samples.error:
        return samples.error
    if not samples.values:
        return "-"
    unit = row.unit
    if row.show_p95:
        text = f"{samples.p50:.1f} / {samples.pct(0.95):.1f} {unit}"
    elif unit == "MiB":
        text = f"{samples.p50:.0f} {unit}"
    elif unit == "s":
        text = f"{samples.p50:.1f} {unit}"
    elif abs(samples.p50) < 1:
        text = f"{samples.p50:.3f} {unit}"
    else:
        text = f"{samples.p50:.1f} {unit}"
    return f"{text} (n={len(samples.values)})"


def ratio(row: Row) -> str:
    if not row.ours.values or not row.theirs.values or row.theirs.p50 == 0:
        return "-"
    return f"{row.ours.p50 / row.theirs.p50:.2f}x"


def table(rows: list[Row], peers_note: str) -> str:
    lines = [
        "| metric | affidavit | peer | affidavit / peer | goal |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        peer = f"{row.peer} {cell(row.theirs, row)}"
        lines.append(
            f"| {row.metric} | {cell(row.ours, row)} | {peer} | {ratio(row)} | {row.goal} |"
        )
    lines.append("")
    lines.append(peers_note)
    return "\n".join(lines)


async def measure(args: argparse.Namespace) -> None:
    work = (
        args.workdir or OUT / ("side-by-side-quick" if args.quick else "side-by-side")
    ).resolve()
    work.mkdir(parents=True, exist_ok=True)
    note = [
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()} {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; load average at start {load()}"
    ]
    installed = {name: peer_venv(name, spec) for name, spec in PEERS.items()}
    for name, home in installed.items():
        if home is None:
            note.append(f"{PEERS[name]} could not be installed: its rows are skipped")
    rows: list[Row] = []
    if args.only == "import":
        tools = [affidavit_tool(work)]
        if installed["compartment"] is not None:
            tools.append(compartment_tool(work, installed["compartment"]))
        fills = [tool.prepare(facts(args.memories, seed=19), True)[1] for tool in tools]
        rows.append(import_row(tools, fills, args.memories))
        note.append(rows[-1].detail)
    if args.only in (None, "memory"):
        tools = [affidavit_tool(work)]
        if installed["compartment"] is not None:
            tools.append(compartment_tool(work, installed["compartment"]))
        texts = facts(args.memories, seed=19)
        prepared = [tool.prepare(texts, args.fresh) for tool in tools]
        imports = [
            f"{tool.name} {report}" for tool, (report, _) in zip(tools, prepared, strict=True)
        ]
        filled = import_row(tools, [fill for _, fill in prepared], args.memories)
        asked = queries(args.searches + args.warmup, seed=7)
        # New facts every run (the vaults are kept between runs): a fact stored by an earlier
        # run would measure the duplicate path, not a store.
        stored = facts(args.stores, seed=time.time_ns())
        rows += await start_rows(tools, args.starts, asked[0])
        steady = await steady_rows(tools, asked, stored, args.warmup)
        rows += [*steady, filled]
        note += [steady[0].detail, steady[2].detail, filled.detail]
        for row in rows:
            row.metric = row.metric.replace("vault of N", f"{args.memories:,} facts")
        note.append(
            f"memory rows: {args.memories:,} facts imported through each tool's bulk path; "
            f"{args.starts} fresh starts each, {args.searches} searches and {args.stores} "
            "stores each, alternating; Compartment with COMPARTMENT_EMBED_DAEMON=0; "
            + "; ".join(imports)
        )
    if args.only in (None, "proxy"):
        row = await proxy_row(work, installed["verimcp"], args.calls)
        rows.append(row)
        note.append(f"proxy row, round trips through the SDK client: {row.detail}")
    note.append(f"load average at end {load()}")
    report = table(rows, "\n".join(f"- {line}" for line in note))
    print(report)
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {"metric": r.metric, "affidavit": r.ours.values, "peer": r.peer,
                     "peer_values": r.theirs.values, "goal": r.goal}
                    for r in rows
                ],
                indent=1,
            )
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--memories", type=int)
    parser.add_argument("--workdir", type=Path, help="where vaults are filled and kept")
    parser.add_argument("--fresh", action="store_true", help="refill the vaults")
    parser.add_argument("--only", choices=("memory", "import", "proxy"))
    parser.add_argument("--json", type=Path, help="also write every sample here")
    args = parser.parse_args()
    sizes = (
        {"memories": 300, "starts": 2, "searches": 20, "stores": 10, "calls": 200, "warmup": 3}
        if args.quick
        else {"memories": 10_000, "starts": 5, "searches": 200, "stores": 50, "calls": 2000,
              "warmup": 10}
    )  # fmt: skip
    for name, value in sizes.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    asyncio.run(measure(args))


if __name__ == "__main__":
    main()

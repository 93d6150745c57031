"""The proxy console: the calls in the proxy's audit log, live, with their verdicts.

The log is read only through :class:`affidavit.proxy.audit.LogFollower` (which verifies every
link as it reads) and replayed only through :func:`affidavit.proxy.backtest.backtest`, the code
behind ``affidavit proxy replay``. The page polls for new entries; a call shows up as soon as
the proxy has written its entry, which it does right after answering the call.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from affidavit.console.context import Console, Section, notice
from affidavit.console.forms import local_path, read_form, text
from affidavit.console.html import Markup, join, tag

SLUG = "proxy"
VERDICTS = ("verified", "contradicted", "unchecked", "denied", "waiting", "error")
KEPT_ROWS = 5000
SHOWN_ROWS = 500
POLL_MS = 250
_DENIED_OUTCOMES = frozenset(("denied", "refused"))


@dataclass(frozen=True)
class CallRow:
    """One call (or read, or refused request) of the log, as the table shows it."""

    index: int
    ts: str
    server: str
    tool: str
    verdict: str
    outcome: str
    policy: str
    receipt: str
    evidence: tuple[tuple[str, str], ...]
    total_ms: Any
    key: tuple[str, str, str]

    def matches(self, server: str, tool: str, verdict: str) -> bool:
        """Whether the row passes the filters (an empty filter passes everything)."""
        return (
            (not server or self.server == server)
            and (not tool or self.tool == tool)
            and (not verdict or self.verdict == verdict)
        )


def verdict_of(entry: Mapping[str, Any]) -> str:
    """What the table calls an entry: a verifier's verdict, denied, waiting or error."""
    outcome = entry.get("outcome")
    policy = entry.get("policy") or {}
    if entry.get("kind") in ("refused", "sampling") or outcome in _DENIED_OUTCOMES:
        return (
            "denied"
            if entry.get("kind") != "sampling" or policy.get("action") == "deny"
            else "error"
        )
    if outcome == "approval-asked":
        return "waiting"
    verdict = entry.get("verdict")
    return verdict if verdict in ("verified", "contradicted", "unchecked") else "error"


def row_of(index: int, entry: Mapping[str, Any]) -> CallRow:
    """The table row for the ``index``-th entry of the log (1-based)."""
    kind = str(entry.get("kind", ""))
    if kind == "read":
        tool = str(entry.get("uri", ""))
    elif kind == "sampling":
        tool = "sampling/createMessage"
    elif kind == "refused":
        tool = f"(a line from the {entry.get('from', '?')} was refused)"
    else:
        tool = str(entry.get("tool", ""))
    policy = entry.get("policy") or {}
    reason = policy.get("reason") or entry.get("reason") or ""
    action = str(policy.get("action", ""))
    evidence = tuple(
        (str(item.get("observed", "")), str(item.get("where", "")))
        for item in entry.get("evidence") or []
        if isinstance(item, Mapping)
    )
    receipt = f"{entry['verifier']}: {entry.get('claim', '')}" if entry.get("verifier") else ""
    return CallRow(
        index=index,
        ts=str(entry.get("ts", "")),
        server=str(entry.get("backend") or ""),
        tool=tool,
        verdict=verdict_of(entry),
        outcome=str(entry.get("outcome") or kind),
        policy=" · ".join(part for part in (action, str(reason)) if part and part != "no policy"),
        receipt=receipt,
        evidence=evidence,
        total_ms=(entry.get("timings_ms") or {}).get("total"),
        key=(str(entry.get("session", "")), tool, str(entry.get("arguments_sha256", ""))),
    )


class CallFeed:
    """The log as the page shows it: rows, tool-pin changes and approvals still waiting."""

    def __init__(self, path: Path) -> None:
        from affidavit.proxy.audit import LogFollower

        self.path = path
        self.follower = LogFollower(path)
        self.rows: deque[CallRow] = deque(maxlen=KEPT_ROWS)
        self.pins: deque[Mapping[str, Any]] = deque(maxlen=200)
        self.waiting: dict[tuple[str, str, str], CallRow] = {}
        self.count = 0
        self.lock = threading.Lock()

    def refresh(self) -> None:
        """Read what the proxies appended since the last refresh."""
        with self.lock:
            update = self.follower.poll()
            if update.restarted:
                self.rows.clear()
                self.pins.clear()
                self.waiting.clear()
                self.count = 0
            for entry in update.entries:
                self.count += 1
                if entry.get("kind") == "pin-changed":
                    self.pins.append(entry)
                    continue
                row = row_of(self.count, entry)
                self.rows.append(row)
                self.waiting.pop(row.key, None)
                if row.verdict == "waiting":
                    self.waiting[row.key] = row

    def after(self, index: int, server: str, tool: str, verdict: str) -> list[CallRow]:
        """Rows after log entry ``index`` that pass the filters, oldest first."""
        with self.lock:
            rows = [r for r in self.rows if r.index > index and r.matches(server, tool, verdict)]
        return rows[-SHOWN_ROWS:]

    def choices(self) -> tuple[list[str], list[str]]:
        """Every server and tool seen, for the filters."""
        with self.lock:
            return sorted({r.server for r in self.rows if r.server}), sorted(
                {r.tool for r in self.rows}
            )


def _when(ts: str) -> Markup:
    return tag("td", ts[11:19] or ts, title=ts, class_="when")


def render_row(row: CallRow) -> Markup:
    """One row of the calls table."""
    evidence = (
        tag(
            "ul",
            [
                tag("li", observed, tag("span", f" — {where}", class_="muted"))
                for observed, where in row.evidence
            ],
            class_="evidence",
        )
        if row.evidence
        else None
    )
    total = f"{row.total_ms:.0f} ms" if isinstance(row.total_ms, int | float) else ""
    return tag(
        "tr",
        _when(row.ts),
        tag("td", row.server or "—"),
        tag("td", row.tool, class_="tool"),
        tag(
            "td",
            tag("span", row.verdict.upper(), class_=f"verdict {row.verdict}"),
            tag("div", row.outcome, class_="muted small"),
        ),
        tag("td", tag("div", row.receipt, class_="small") if row.receipt else None, evidence),
        tag("td", row.policy, class_="small"),
        tag("td", total, class_="small muted"),
        data_index=row.index,
        data_verdict=row.verdict,
    )


def _chain(feed: CallFeed) -> Markup:
    report = feed.follower.report
    if not feed.path.exists():
        return tag(
            "div",
            tag("span", class_="dot"),
            f"No audit log at {feed.path} yet; waiting for the proxy's first call.",
            class_="chain",
        )
    if report.ok:
        head = report.head[:16]
        return tag(
            "div",
            tag("span", class_="dot ok"),
            tag("span", f"Chain intact: {report.entries} entries, head {head}…", data_chain="ok"),
            class_="chain",
        )
    assert report.first_break is not None
    return tag(
        "div",
        tag("span", class_="dot bad"),
        tag(
            "strong",
            f"Chain broken at entry {report.first_break.index + 1}: {report.first_break.reason}. "
            "The entries from there on cannot be trusted; run `affidavit audit verify --log FILE`.",
            data_chain="broken",
        ),
        class_="chain",
    )


def _pins(feed: CallFeed) -> Markup:
    if not feed.pins:
        return tag("p", "No tool changed its definition.", class_="muted small")
    items = [
        tag(
            "li",
            tag("span", entry.get("tool"), class_="mono"),
            f" changed at {entry.get('ts')}: pinned {str(entry.get('pinned', ''))[:12]}… now {str(entry.get('seen', ''))[:12]}…",
        )
        for entry in reversed(feed.pins)
    ]
    return join(
        tag("ul", items, class_="evidence"),
        tag("p", "Review, then run `affidavit proxy trust-tools`.", class_="muted small"),
    )


def _approvals(feed: CallFeed) -> Markup:
    if not feed.waiting:
        return tag("p", "No call is waiting for approval.", class_="muted small")
    return tag(
        "ul",
        [
            tag(
                "li",
                tag("span", row.tool, class_="mono"),
                f" ({row.server or 'unknown server'}) since {row.ts}",
            )
            for row in feed.waiting.values()
        ],
        class_="evidence",
    )


def _filters(feed: CallFeed, server: str, tool: str, verdict: str) -> Markup:
    servers, tools = feed.choices()

    def select(label: str, name: str, values: list[str], chosen: str) -> Markup:
        options = [tag("option", "all", value="")] + [
            tag(
                "option",
                value.upper() if name == "verdict" else value,
                value=value,
                selected=value == chosen,
            )
            for value in values
        ]
        return tag("label", label, tag("select", options, name=name, data_filter=name))

    return tag(
        "form",
        select("Server", "server", servers, server),
        select("Tool", "tool", tools, tool),
        select("Verdict", "verdict", list(VERDICTS), verdict),
        tag("button", "Filter", type="submit"),
        method="get",
        action=f"/{SLUG}/",
        class_="toolbar",
        id="filters",
    )


def _replay_card(result: Markup | None, policy: str = "") -> Markup:
    return tag(
        "section",
        tag("h2", "Replay against a new policy"),
        tag(
            "p",
            "Decide every recorded call again with another policy file (as `affidavit proxy replay` does) "
            "and see which decisions would change.",
            class_="muted small",
        ),
        tag(
            "form",
            tag(
                "label",
                "Policy file on this machine",
                tag(
                    "input",
                    type="text",
                    name="policy",
                    value=policy or None,
                    placeholder="/path/to/policy.yaml",
                ),
            ),
            tag("button", "Replay", type="submit", class_="primary"),
            method="post",
            action=f"/{SLUG}/replay",
            class_="row",
            id="replay-form",
        ),
        result,
        class_="card",
        id="replay",
    )


def _replay_result(policy: Path, log: Path) -> Markup:
    from affidavit.proxy.audit import read_entries
    from affidavit.proxy.backtest import backtest
    from affidavit.proxy.policy import load_policy

    report = backtest(read_entries(log), load_policy(policy))
    summary = notice(
        "info",
        f"{report.calls} recorded calls; {len(report.changed)} would be decided differently.",
    )
    if not report.changed:
        return summary
    rows = [
        tag(
            "tr",
            tag("td", f"#{row.call}"),
            tag("td", row.ts or "", class_="when"),
            tag("td", row.tool or "", class_="tool"),
            tag("td", row.was),
            tag("td", tag("strong", row.would_be)),
            tag("td", f"rule {row.rule}" if row.rule else "the default"),
        )
        for row in report.changed
    ]
    head = tag("tr", *(tag("th", h) for h in ("call", "time", "tool", "was", "would be", "by")))
    return join(summary, tag("table", tag("thead", head), tag("tbody", rows), id="replay-changes"))


def section(console: Console) -> Section:
    """The proxy console."""
    feed = CallFeed(console.settings.audit_log)

    def filters_of(request: Request) -> tuple[str, str, str]:
        params = request.query_params
        return params.get("server", ""), params.get("tool", ""), params.get("verdict", "")

    async def index(request: Request) -> HTMLResponse:
        return await show(request)

    async def show(
        request: Request, replay: Markup | None = None, policy: str = "", status: int = 200
    ) -> HTMLResponse:
        await run_in_threadpool(feed.refresh)
        server, tool, verdict = filters_of(request)
        rows = feed.after(0, server, tool, verdict)
        head = tag(
            "tr",
            *(
                tag("th", h)
                for h in (
                    "time",
                    "server",
                    "tool",
                    "verdict",
                    "receipt and evidence",
                    "policy",
                    "took",
                )
            ),
        )
        table = tag(
            "table",
            tag("thead", head),
            tag("tbody", [render_row(row) for row in reversed(rows)], id="calls"),
            id="calls-table",
            data_feed=f"/{SLUG}/feed",
            data_last=feed.count,
            data_poll=POLL_MS,
        )
        main = [
            tag("h1", "Proxy calls"),
            tag(
                "p",
                "Every call the verifying proxy handled, as its audit log records it; new calls appear as they happen.",
                class_="lead",
            ),
            tag(
                "div",
                tag(
                    "section",
                    tag("h3", "Audit chain"),
                    tag("div", _chain(feed), id="chain"),
                    tag("p", str(feed.path), class_="muted small mono"),
                    class_="card",
                ),
                tag(
                    "section",
                    tag("h3", "Approvals waiting"),
                    tag("div", _approvals(feed), id="approvals"),
                    class_="card",
                ),
                tag(
                    "section",
                    tag("h3", "Tool pin changes"),
                    tag("div", _pins(feed), id="pins"),
                    class_="card",
                ),
                class_="panels",
            ),
            tag(
                "section",
                tag(
                    "div",
                    _filters(feed, server, tool, verdict),
                    tag("span", tag("span", class_="dot live"), " live", class_="muted small"),
                    class_="row",
                ),
                table,
                class_="card",
            ),
            _replay_card(replay, policy),
        ]
        return console.page("Proxy calls", main, active=SLUG, scripts=["proxy.js"], status=status)

    async def updates(request: Request) -> JSONResponse:
        await run_in_threadpool(feed.refresh)
        try:
            after = int(request.query_params.get("after", "0"))
        except ValueError:
            after = 0
        if after > feed.count:  # the log was replaced: the page starts over
            return JSONResponse({"reload": True})
        server, tool, verdict = filters_of(request)
        rows = feed.after(after, server, tool, verdict)
        servers, tools = feed.choices()
        return JSONResponse(
            {
                "last": feed.count,
                "rows": [str(render_row(row)) for row in rows],
                "chain": str(_chain(feed)),
                "approvals": str(_approvals(feed)),
                "pins": str(_pins(feed)),
                "servers": servers,
                "tools": tools,
            }
        )

    async def replay(request: Request) -> HTMLResponse:
        from affidavit.core.errors import AffidavitError

        policy = ""
        try:
            form = await read_form(request, max_files=0)
            policy = text(form, "policy")
            if not policy:
                raise AffidavitError("name a policy file", "write its path on this machine")
            path = local_path("the policy file", policy)
            result = await run_in_threadpool(_replay_result, path, feed.path)
        except AffidavitError as exc:
            return await show(request, notice("error", str(exc)), policy, status=400)
        return await show(request, result, policy)

    return Section(
        slug=SLUG,
        title="Proxy calls",
        summary="Watch the verifying proxy live: verdicts, evidence, approvals, pin changes, policy replay.",
        routes=[
            Route("/", index),
            Route("/feed", updates),
            Route("/replay", replay, methods=["POST"]),
        ],
    )

"""The proxy console: the calls in the proxy's audit log, live, with their verdicts.

The log is read only through :class:`affidavit.proxy.audit.LogFollower` (which verifies every
link as it reads) and replayed only through :func:`affidavit.proxy.backtest.backtest`, the code
behind ``affidavit proxy replay``. The page polls for new entries; a call shows up as soon as
the proxy has written its entry, which it does right after answering the call.
"""

from __future__ import annotations

from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from affidavit.console.context import Console, Section, notice
from affidavit.console.forms import local_path, read_form, text
from affidavit.console.html import Markup, join, rooted, tag
from affidavit.console.proxy_feed import VERDICTS, CallFeed, CallRow
from affidavit.console.widgets import card, field, post_form, select, table
from affidavit.core.errors import AffidavitError, UsageError

SLUG = "proxy"
POLL_MS = 250
"""How often the page asks for new entries: well inside the one second a verdict may take."""
COLUMNS = ("time", "server", "tool", "verdict", "receipt and evidence", "policy", "took")
INTRO = tag(
    "p",
    "Every call the verifying proxy handled, as its audit log records it; new calls appear as "
    "they happen.",
    class_="lead",
)


def render_row(row: CallRow) -> Markup:
    """One row of the calls table."""
    evidence = [
        tag("li", observed, tag("span", f" — {where}", class_="muted"))
        for observed, where in row.evidence
    ]
    took = f"{row.total_ms:.0f} ms" if isinstance(row.total_ms, int | float) else ""
    verdict = tag("span", row.verdict.upper(), class_=f"verdict {row.verdict}")
    return tag(
        "tr",
        tag("td", row.ts[11:19] or row.ts, title=row.ts, class_="when"),
        tag("td", row.server or "—", class_="server"),
        tag("td", row.tool, class_="tool"),
        tag("td", verdict, tag("div", row.outcome, class_="muted small")),
        tag(
            "td",
            tag("div", row.receipt, class_="small") if row.receipt else None,
            tag("ul", evidence, class_="evidence") if evidence else None,
        ),
        tag("td", row.policy, class_="small"),
        tag("td", took, class_="small muted"),
        data_index=row.index,
        data_verdict=row.verdict,
    )


def chain_status(feed: CallFeed) -> Markup:
    """Whether the audit chain read so far is intact, and where it broke if not."""
    report = feed.follower.report
    if not feed.path.exists():
        waiting = f"No audit log at {feed.path} yet; waiting for the proxy's first call."
        return tag("div", tag("span", class_="dot"), waiting, class_="chain")
    if report.ok:
        intact = f"Chain intact: {report.entries} entries, head {report.head[:16]}…"
        return tag(
            "div",
            tag("span", class_="dot ok"),
            tag("span", intact, data_chain="ok"),
            class_="chain",
        )
    assert report.first_break is not None
    broken = (
        f"Chain broken at entry {report.first_break.index + 1}: {report.first_break.reason}. "
        "The entries from there on cannot be trusted; run `affidavit audit verify --log FILE`."
    )
    return tag(
        "div",
        tag("span", class_="dot bad"),
        tag("strong", broken, data_chain="broken"),
        class_="chain",
    )


def pin_changes(feed: CallFeed) -> Markup:
    """Tools whose definitions changed since they were pinned."""
    if not feed.pins:
        return tag("p", "No tool changed its definition.", class_="muted small")
    items = [
        tag(
            "li",
            tag("span", entry.get("tool"), class_="mono"),
            f" changed at {entry.get('ts')}: pinned {str(entry.get('pinned', ''))[:12]}…, "
            f"now {str(entry.get('seen', ''))[:12]}…",
        )
        for entry in reversed(feed.pins)
    ]
    review = tag("p", "Review, then run `affidavit proxy trust-tools`.", class_="muted small")
    return join(tag("ul", items, class_="evidence"), review)


def approvals_waiting(feed: CallFeed) -> Markup:
    """Calls the proxy asked a human about and that have not come back yet."""
    if not feed.waiting:
        return tag("p", "No call is waiting for approval.", class_="muted small")
    items = [
        tag("li", tag("span", row.tool, class_="mono"), f" ({row.server or '?'}) since {row.ts}")
        for row in feed.waiting.values()
    ]
    return tag("ul", items, class_="evidence")


def filters(feed: CallFeed, server: str, tool: str, verdict: str) -> Markup:
    """The server / tool / verdict filters (a GET form: the address holds the filter)."""
    servers, tools = feed.choices()
    everything = [("", "all")]
    return tag(
        "form",
        select("Server", "server", everything + [(s, s) for s in servers], server),
        select("Tool", "tool", everything + [(t, t) for t in tools], tool),
        select("Verdict", "verdict", everything + [(v, v.upper()) for v in VERDICTS], verdict),
        tag("button", "Filter", type="submit"),
        method="get",
        action=f"/{SLUG}/",
        class_="toolbar",
        id="filters",
    )


def replay_card(result: Markup | None, policy: str = "") -> Markup:
    """The policy back-test: a policy file in, the decisions that would change out."""
    return card(
        tag("h2", "Replay against a new policy"),
        tag(
            "p",
            "Decide every recorded call again with another policy file (as `affidavit proxy "
            "replay` does) and see which decisions would change.",
            class_="muted small",
        ),
        post_form(
            f"/{SLUG}/replay",
            "Replay",
            field("Policy file on this machine", "policy", "/path/to/policy.yaml", policy or None),
            class_="row",
            id="replay-form",
        ),
        result,
        id="replay",
    )


def replay_result(policy: Path, log: Path) -> Markup:
    """What ``proxy replay LOG --policy POLICY`` reports, as a table."""
    from affidavit.proxy import backtest, load_policy, read_entries

    report = backtest(read_entries(log), load_policy(policy))
    changes = len(report.changed)
    summary = notice(
        "info", f"{report.calls} recorded calls; {changes} would be decided differently."
    )
    if not report.changed:
        return summary
    rows = [
        (
            f"#{row.call}",
            row.ts or "",
            row.tool or "",
            row.was,
            tag("strong", row.would_be),
            f"rule {row.rule}" if row.rule else "the default",
        )
        for row in report.changed
    ]
    columns = ("call", "time", "tool", "was", "would be", "by")
    return join(summary, table(columns, rows, id="replay-changes"))


def section(console: Console) -> Section:
    """The proxy console."""
    feed = CallFeed(console.settings.audit_log)

    def filters_of(request: Request) -> tuple[str, str, str]:
        params = request.query_params
        return params.get("server", ""), params.get("tool", ""), params.get("verdict", "")

    async def show(
        request: Request, replay: Markup | None = None, policy: str = "", status: int = 200
    ) -> HTMLResponse:
        await run_in_threadpool(feed.refresh)
        server, tool, verdict = filters_of(request)
        rows = feed.after(0, server, tool, verdict)
        calls = tag(
            "table",
            tag("thead", tag("tr", [tag("th", column) for column in COLUMNS])),
            tag("tbody", [render_row(row) for row in reversed(rows)], id="calls"),
            id="calls-table",
            data_feed=rooted(f"/{SLUG}/feed"),
            data_last=feed.count,
            data_poll=POLL_MS,
        )
        live = tag("span", tag("span", class_="dot live"), " live", class_="muted small")
        panels = tag(
            "div",
            card(
                tag("h3", "Audit chain"),
                tag("div", chain_status(feed), id="chain"),
                tag("p", str(feed.path), class_="muted small mono"),
            ),
            card(
                tag("h3", "Approvals waiting"), tag("div", approvals_waiting(feed), id="approvals")
            ),
            card(tag("h3", "Tool pin changes"), tag("div", pin_changes(feed), id="pins")),
            class_="panels",
        )
        main = [
            tag("h1", "Proxy calls"),
            INTRO,
            panels,
            card(tag("div", filters(feed, server, tool, verdict), live, class_="row"), calls),
            replay_card(replay, policy),
        ]
        return console.page("Proxy calls", main, active=SLUG, scripts=["proxy.js"], status=status)

    async def index(request: Request) -> HTMLResponse:
        return await show(request)

    async def updates(request: Request) -> JSONResponse:
        await run_in_threadpool(feed.refresh)
        try:
            after = int(request.query_params.get("after", "0"))
        except ValueError:
            after = 0
        if after > feed.count:  # the log was replaced: the page starts over
            return JSONResponse({"reload": True})
        rows = feed.after(after, *filters_of(request))
        servers, tools = feed.choices()
        return JSONResponse(
            {
                "last": feed.count,
                "rows": [str(render_row(row)) for row in rows],
                "chain": str(chain_status(feed)),
                "approvals": str(approvals_waiting(feed)),
                "pins": str(pin_changes(feed)),
                "servers": servers,
                "tools": tools,
            }
        )

    async def replay(request: Request) -> HTMLResponse:
        policy = ""
        try:
            form = await read_form(request, max_files=0)
            policy = text(form, "policy")
            if not policy:
                raise UsageError("name a policy file", "write its path on this machine")
            path = local_path("the policy file", policy)
            result = await run_in_threadpool(replay_result, path, feed.path)
        except AffidavitError as exc:
            return await show(request, notice("error", str(exc)), policy, status=400)
        return await show(request, result, policy)

    return Section(
        slug=SLUG,
        title="Proxy calls",
        summary="Watch the proxy live: verdicts, evidence, approvals, pin changes, policy replay.",
        routes=[
            Route("/", index),
            Route("/feed", updates),
            Route("/replay", replay, methods=["POST"]),
        ],
    )

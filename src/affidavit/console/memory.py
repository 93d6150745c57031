"""The memory section: search the vault, read a memory's history, walk the relation graph, see
the vault's shape and its audit chain, correct or forget from the page, import an export.

Every answer comes from recall's public API (:class:`affidavit.recall.Memory`), the code
behind ``affidavit search``, ``get``, ``forget``, ``store --supersedes`` and ``relations``: the
page ranks as the command does because it makes the same call. A change (forget, shred,
correct) is a POST that the guard checks like every other (cookie, Origin); the first POST
only shows what would happen, and the change is made by the second, from that confirmation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from affidavit.console.context import Console, Section, notice
from affidavit.console.forms import local_path, read_form, text
from affidavit.console.html import Child, Markup, rooted, tag
from affidavit.console.memory_charts import bar_chart, growth, growth_chart, tag_counts
from affidavit.console.memory_evidence import evidence_card
from affidavit.console.memory_jobs import Jobs
from affidavit.console.memory_pages import (
    SLUG,
    facts,
    history_card,
    memory_block,
    relations_table,
    results,
    search_form,
    tabs,
    unlock_card,
)
from affidavit.console.memory_panels import (
    actions_card,
    audit_card,
    import_card,
    lock_card,
    namespaces_card,
)
from affidavit.console.memory_review import review_link, review_routes
from affidavit.console.memory_vault import VaultHolder
from affidavit.console.widgets import card, confirm_form
from affidavit.core.errors import AffidavitError, LockedError, NotFoundError, UsageError
from affidavit.recall import Claim, EdgeQuery, MemoryKind, views

if TYPE_CHECKING:
    from affidavit.recall import Memory, MemoryView

SCRIPTS = ["memory.js"]
AUDIT_SHOWN = 15
GRAPH_LIMIT = 200
ACTIONS = {
    "forget": ("Forget", "It leaves recall; its sealed record stays until it is shredded."),
    "shred": ("Shred", "Its key and ciphertext are destroyed: it cannot be recovered."),
    "correct": ("Correct", "The correction is stored as a new memory that supersedes this one."),
}
FILTERS = ("q", "namespace", "kind", "tag", "since", "until")


def search_args(values: dict[str, str]) -> dict[str, Any]:
    """``Memory.search`` keyword arguments from the form's filters (empty ones left out)."""
    args: dict[str, Any] = {}
    if values.get("namespace"):
        args["namespaces"] = [values["namespace"]]
    if values.get("tag"):
        args["tags"] = [values["tag"]]
    if values.get("kind"):
        args["kind"] = values["kind"]
    if values.get("since"):
        args["saved_since"] = values["since"]
    if values.get("until"):
        args["saved_until"] = values["until"]
    return args


def values_of(request: Request) -> dict[str, str]:
    """The search form's filters from the query string, stripped (missing ones empty)."""
    return {name: request.query_params.get(name, "").strip() for name in FILTERS}


def namespaces(memory: Memory) -> list[str]:
    """The namespaces the console's caller may read (the search form's choices)."""
    return [row["name"] for row in memory.namespaces()["namespaces"]]


def correct(memory: Memory, view: MemoryView, fields: dict[str, str]) -> str:
    """Store the correction of ``view`` (same namespace, tags, kind and importance) as the
    memory that supersedes it; its id."""
    outcome = memory.store(
        Claim(
            fields["text"],
            fields["source"] or f"correction of {view['id']} in the console",
            namespace=view["namespace"],
            tags=tuple(view["tags"]),
            kind=MemoryKind.of(view["kind"]),
            importance=view["importance"],
            supersedes=(view["id"],),
        )
    )
    return str(outcome["id"])


class MemoryPages:
    """The memory section's handlers over its small state: the console's frame, the vault the
    console unlocked (``holder``) and the imports under way (``jobs``). Each route is one
    method; a handler that needs the vault hands its work to :meth:`guarded`."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.holder = VaultHolder()
        self.jobs = Jobs()

    def page(self, title: str, active: str, *body: Child, status: int = 200) -> HTMLResponse:
        main = [tag("h1", "Memory") if active != "m" else None, tabs(active), *body]
        return self.console.page(title, main, active=SLUG, scripts=SCRIPTS, status=status)

    async def locked(
        self, active: str, error: Markup | None = None, status: int = 200
    ) -> HTMLResponse:
        try:
            known: Any = await run_in_threadpool(self.holder.locked_status)
        except NotFoundError:
            known = None
        return self.page("Memory (locked)", active, unlock_card(known, error), status=status)

    async def guarded(self, active: str, work: Callable[[Memory], Response]) -> Response:
        """Run ``work(memory)`` in the pool; a locked vault shows the unlock card instead."""
        try:
            memory = await run_in_threadpool(self.holder.memory)
        except (LockedError, NotFoundError):
            return await self.locked(active)
        try:
            result: Response = await run_in_threadpool(work, memory)
        except LockedError:
            self.holder.drop()
            return await self.locked(active)
        except AffidavitError as exc:
            return self.page("Memory", active, notice("error", str(exc)), status=400)
        return result

    # -- search ------------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        values = values_of(request)

        def work(memory: Memory) -> Response:
            form = search_form(values, namespaces(memory))
            if values["q"]:
                found: Child = results(
                    memory.search(values["q"], **search_args(values)), values["q"]
                )
            else:
                recent = memory.recent(limit=10)
                found = tag(
                    "div",
                    tag("h2", "Newest memories"),
                    tag(
                        "ul",
                        [tag("li", memory_block(view), class_="hit") for view in recent],
                        class_="hits",
                    )
                    if recent
                    else tag("p", "The vault holds no memory yet.", class_="muted"),
                    id="results",
                    data_query="",
                )
            return self.page("Memory", "", card(form), card(found, id="results-card"))

        return await self.guarded("", work)

    async def fragment(self, request: Request) -> Response:
        """Just the results, for the page's script (the same search as the full page), in one
        trip to the thread pool: this is the round trip the page waits for."""
        values = values_of(request)
        if not values["q"]:
            return HTMLResponse(str(notice("info", "Type a question.")), 400)

        def work() -> HTMLResponse:
            try:
                memory = self.holder.memory()
            except (LockedError, NotFoundError):
                return HTMLResponse(str(notice("warn", "The vault is locked; reload.")), 409)
            started = time.perf_counter()
            try:
                found = memory.search(values["q"], **search_args(values))
            except AffidavitError as exc:
                return HTMLResponse(str(notice("error", str(exc))), 400)
            took = (time.perf_counter() - started) * 1000
            # how long recall's search took, apart from the page's own work (the benchmark)
            timing = {"Server-Timing": f"recall;dur={took:.1f}"}
            return HTMLResponse(str(results(found, values["q"])), headers=timing)

        return await run_in_threadpool(work)

    async def unlock(self, request: Request) -> Response:
        form = await read_form(request, max_files=0)
        passphrase = form.get("passphrase")
        try:
            await run_in_threadpool(
                self.holder.unlock, passphrase if isinstance(passphrase, str) else ""
            )
        except AffidavitError as exc:
            return await self.locked("", notice("error", str(exc)), 400)
        return RedirectResponse(f"/{SLUG}/", status_code=303)

    async def lock(self, request: Request) -> Response:
        await read_form(request, max_files=0)
        await run_in_threadpool(lambda: self.holder.drop(by_user=True))
        return RedirectResponse(f"/{SLUG}/", status_code=303)

    # -- one memory --------------------------------------------------------------------------

    def memory_page(self, memory: Memory, memory_id: str, rechecked: bool = False) -> Response:
        """A memory's page: the memory, its evidence, history, relations and changes."""
        history = memory.history(memory_id)
        view = history["memory"]
        edges = [
            r
            for r in memory.relations(EdgeQuery(limit=GRAPH_LIMIT))["relations"]
            if r.get("src_id") == memory_id
        ]
        return self.page(
            view["text"][:60],
            "m",
            card(memory_block(view, heading=True), id="memory"),
            evidence_card(view, memory.evidence_findings(memory_id), rechecked),
            history_card(history),
            card(
                tag("h2", "Relations it is the source of"),
                relations_table(edges, "No relation names this memory as its source."),
                id="relations",
            ),
            actions_card(view),
        )

    async def show(self, request: Request) -> Response:
        memory_id = request.path_params["memory_id"]
        return await self.guarded("m", lambda memory: self.memory_page(memory, memory_id))

    async def recheck(self, request: Request) -> Response:
        """Judge the memory's evidence again, ignoring what was kept (a POST: it re-reads logs
        and re-verifies packs), and show the page with the result."""
        memory_id = request.path_params["memory_id"]
        await read_form(request, max_files=0)

        def work(memory: Memory) -> Response:
            memory.recheck_evidence(memory_id)
            return self.memory_page(memory, memory_id, rechecked=True)

        return await self.guarded("m", work)

    async def act(self, request: Request) -> Response:
        memory_id = request.path_params["memory_id"]
        action = request.path_params["action"]
        if action not in ACTIONS:
            return Response("not found", status_code=404, media_type="text/plain")
        form = await read_form(request, max_files=0)
        fields = {"text": text(form, "text"), "source": text(form, "source")}

        def work(memory: Memory) -> Response:
            view = memory.get_memory(memory_id)
            if action == "correct" and not fields["text"]:
                raise UsageError("write the corrected memory", "it replaces the old text")
            if text(form, "confirm") != "yes":
                return self.confirmation(view, action, fields)
            if action == "correct":
                return RedirectResponse(
                    f"/{SLUG}/m/{correct(memory, view, fields)}", status_code=303
                )
            memory.forget(memory_id, shred=action == "shred")
            done = "shredded" if action == "shred" else "forgotten"
            return self.page(
                "Memory",
                "m",
                notice("ok", f"Memory {memory_id} was {done}."),
                card(
                    tag("p", view["text"], class_="muted"),
                    tag("a", "Back to search", href=f"/{SLUG}/"),
                ),
            )

        return await self.guarded("m", work)

    def confirmation(self, view: MemoryView, action: str, fields: dict[str, str]) -> Response:
        label, consequence = ACTIONS[action]
        proposed = (
            tag("blockquote", fields["text"], class_="proposed") if action == "correct" else None
        )
        form = confirm_form(
            f"/{SLUG}/m/{view['id']}/{action}",
            label,
            f"/{SLUG}/m/{view['id']}",
            fields,
            danger=action != "correct",
        )
        return self.page(
            f"{label}?",
            "m",
            card(
                tag("h2", f"{label} this memory?"),
                tag("blockquote", view["text"]),
                facts(view),
                tag("p", "Replace it with:", class_="muted") if proposed else None,
                proposed,
                notice("warn", consequence),
                form,
                id="confirm",
            ),
        )

    # -- graph, overview ---------------------------------------------------------------------

    async def graph(self, request: Request) -> Response:
        entity = request.query_params.get("entity", "").strip()

        def work(memory: Memory) -> Response:
            found = memory.relations(EdgeQuery(entity=entity or None, limit=GRAPH_LIMIT))
            title = f"Relations of {entity}" if entity else "All relations"
            more = f" (the newest {GRAPH_LIMIT} of {found['total']})" if found["truncated"] else ""
            return self.page(
                "Relations",
                "graph",
                card(
                    tag("h2", title, more),
                    tag(
                        "p",
                        "Entities are circles, predicates the arrows' labels with their validity "
                        "window. Click an entity to centre the graph on it, an arrow to open the "
                        "memory it came from.",
                        class_="muted small",
                    ),
                    tag(
                        "div",
                        id="graph",
                        data_src=rooted(f"/{SLUG}/graph.json"),
                        data_memory=rooted(f"/{SLUG}/m/"),
                        data_entity=entity,
                        class_="graph",
                    ),
                    tag("a", "Show every relation", href=f"/{SLUG}/graph") if entity else None,
                ),
                card(
                    relations_table(found["relations"], "No relations yet (`affidavit link`)."),
                    id="relations",
                ),
            )

        return await self.guarded("graph", work)

    async def graph_data(self, request: Request) -> Response:
        entity = request.query_params.get("entity", "").strip() or None
        try:
            memory = await run_in_threadpool(self.holder.memory)
            found = await run_in_threadpool(
                lambda: memory.relations(EdgeQuery(entity=entity, limit=GRAPH_LIMIT))
            )
        except AffidavitError as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        return JSONResponse({"entity": entity, **views.relations_json(found)})

    async def overview(self, request: Request) -> Response:
        def work(memory: Memory) -> Response:
            from affidavit.intake import candidates

            listing = memory.namespaces()
            readable = {row["name"] for row in listing["namespaces"]}
            views = [it for it in memory.vault.items("memory") if it.namespace in readable]
            report = memory.vault.verify_audit()
            latest = memory.vault.audit_log(limit=AUDIT_SHOWN)
            return self.page(
                "Memory overview",
                "overview",
                review_link(len(candidates(memory))),
                tag(
                    "div",
                    card(
                        tag("h2", "Tags"),
                        bar_chart(
                            tag_counts(it.data.get("tags", []) for it in views),
                            label="memories per tag",
                            chart_id="tags-chart",
                        ),
                    ),
                    card(
                        tag("h2", "Growth"),
                        growth_chart(growth(it.saved_at for it in views), chart_id="growth-chart"),
                    ),
                    class_="panels",
                ),
                tag(
                    "div",
                    namespaces_card(listing, memory.access.grants().table),
                    audit_card(report, latest),
                    class_="panels",
                ),
                lock_card(),
            )

        return await self.guarded("overview", work)

    # -- import ------------------------------------------------------------------------------

    async def import_page(self, request: Request) -> Response:
        return await self.guarded(
            "import", lambda memory: self.page("Import", "import", import_card())
        )

    async def import_start(self, request: Request) -> Response:
        form = await read_form(request, max_files=0)
        source = text(form, "path")

        def work(memory: Memory) -> Response:
            if not source:
                raise UsageError("name the export file", "write its path on this machine")
            job = self.jobs.start(memory, local_path("the export file", source))
            return RedirectResponse(f"/{SLUG}/import/{job.id}", status_code=303)

        return await self.guarded("import", work)

    async def import_show(self, request: Request) -> Response:
        job = self.jobs.get(request.path_params["job"])
        if job is None:
            return self.page("Import", "import", notice("error", "No such import."), status=404)
        return self.page("Import", "import", import_card(job.state()))

    async def import_state(self, request: Request) -> Response:
        job = self.jobs.get(request.path_params["job"])
        if job is None:
            return JSONResponse({"error": "no such import"}, status_code=404)
        return JSONResponse(job.state().as_json())


def section(console: Console) -> Section:
    """The memory section: its routes, each a method of one :class:`MemoryPages`."""
    pages = MemoryPages(console)
    return Section(
        slug=SLUG,
        title="Memory",
        summary="Search the vault with why each memory matched; history, relations, charts, "
        "grants and the audit chain; correct, forget or import from the page; review what "
        "capture took.",
        routes=[
            Route("/", pages.index),
            Route("/results", pages.fragment),
            Route("/unlock", pages.unlock, methods=["POST"]),
            Route("/lock", pages.lock, methods=["POST"]),
            Route("/m/{memory_id}", pages.show),
            Route("/m/{memory_id}/recheck", pages.recheck, methods=["POST"]),
            Route("/m/{memory_id}/{action}", pages.act, methods=["POST"]),
            Route("/graph", pages.graph),
            Route("/graph.json", pages.graph_data),
            Route("/overview", pages.overview),
            Route("/import", pages.import_page),
            Route("/import", pages.import_start, methods=["POST"]),
            Route("/import/{job}", pages.import_show),
            Route("/import/{job}/state", pages.import_state),
            *review_routes(pages.page, pages.guarded),
        ],
    )

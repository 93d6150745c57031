// Memory: search without leaving the page, the relation graph as SVG, import progress.
// Everything shown comes from the console as escaped HTML or JSON drawn with textContent.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";

  function fragment(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }

  // -- search: the form is a plain GET form; with script, only the results are replaced ----
  const form = document.getElementById("search-form");
  if (form) {
    let asked = 0;
    form.addEventListener("submit", async function (event) {
      const query = new URLSearchParams(new FormData(form));
      for (const [key, value] of Array.from(query.entries())) if (!value) query.delete(key);
      if (!query.get("q")) return; // no question: let the page show the newest memories
      event.preventDefault();
      const mine = ++asked;
      const response = await fetch(`${form.dataset.results}?${query}`, { credentials: "same-origin" });
      const html = await response.text();
      if (mine !== asked) return; // a newer search is on its way
      const old = document.getElementById("results");
      old.replaceWith(fragment(html));
      window.history.replaceState(null, "", `${form.action}?${query}`);
    });
    for (const select of form.querySelectorAll("select")) {
      select.addEventListener("change", () => form.requestSubmit());
    }
  }

  // -- the relation graph -----------------------------------------------------------------
  const graph = document.getElementById("graph");
  if (graph) drawGraph(graph);

  function el(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function window_(edge) {
    if (!edge.valid_from && !edge.valid_to) return "";
    return ` [${edge.valid_from || "…"} → ${edge.valid_to || "now"}]`;
  }

  function layout(names, edges, width, height) {
    // Fruchterman-Reingold: every pair pushes, edges pull, steps cool down; deterministic
    // (starts on a circle), a fixed number of steps.
    const at = new Map();
    names.forEach((name, i) => {
      const angle = (2 * Math.PI * i) / names.length;
      at.set(name, { x: width / 2 + (width / 3) * Math.cos(angle), y: height / 2 + (height / 3) * Math.sin(angle) });
    });
    const k = 0.9 * Math.sqrt((width * height) / Math.max(names.length, 1));
    const steps = 300;
    for (let step = 0; step < steps; step++) {
      const heat = (width / 8) * (1 - step / steps);
      const move = new Map(names.map((n) => [n, { x: 0, y: 0 }]));
      for (let i = 0; i < names.length; i++) {
        for (let j = i + 1; j < names.length; j++) {
          const a = at.get(names[i]), b = at.get(names[j]);
          const dx = a.x - b.x || 0.1, dy = a.y - b.y || 0.1;
          const d = Math.max(Math.sqrt(dx * dx + dy * dy), 1);
          const f = (k * k) / d / d;
          move.get(names[i]).x += dx * f; move.get(names[i]).y += dy * f;
          move.get(names[j]).x -= dx * f; move.get(names[j]).y -= dy * f;
        }
      }
      for (const e of edges) {
        if (e.subject === e.object) continue;
        const a = at.get(e.subject), b = at.get(e.object);
        const dx = a.x - b.x, dy = a.y - b.y;
        const d = Math.max(Math.sqrt(dx * dx + dy * dy), 1);
        const f = d / k;
        move.get(e.subject).x -= dx * f; move.get(e.subject).y -= dy * f;
        move.get(e.object).x += dx * f; move.get(e.object).y += dy * f;
      }
      for (const name of names) {
        const p = at.get(name), v = move.get(name);
        const length = Math.max(Math.sqrt(v.x * v.x + v.y * v.y), 0.01);
        const step_ = Math.min(length, heat);
        p.x = Math.min(width - 90, Math.max(90, p.x + (v.x / length) * step_));
        p.y = Math.min(height - 40, Math.max(30, p.y + (v.y / length) * step_));
      }
    }
    return at;
  }

  async function drawGraph(box) {
    const query = new URLSearchParams();
    if (box.dataset.entity) query.set("entity", box.dataset.entity);
    const response = await fetch(`${box.dataset.src}?${query}`, { credentials: "same-origin" });
    const data = await response.json();
    if (data.error || !data.relations.length) {
      box.append(Object.assign(document.createElement("p"), {
        className: "muted small",
        textContent: data.error || "No relations to draw.",
      }));
      box.dataset.drawn = "0";
      return;
    }
    const names = Array.from(new Set(data.relations.flatMap((e) => [e.subject, e.object])));
    const width = Math.max(box.clientWidth || 900, 600);
    const height = Math.min(700, 260 + names.length * 22);
    const at = layout(names, data.relations, width, height);
    const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "relation graph" });
    const defs = el("defs");
    const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 22, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
    defs.append(marker);
    svg.append(defs);
    for (const edge of data.relations) {  // memory_relations' JSON (recall/views.relations_json)
      const a = at.get(edge.subject), b = at.get(edge.object);
      const group = el("g", { class: edge.src_id ? "edge linked" : "edge", "data-predicate": edge.predicate });
      group.append(el("title", {}, `${edge.subject} ${edge.predicate} ${edge.object}${window_(edge)}`));
      group.append(el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "marker-end": "url(#arrow)" }));
      group.append(el("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 6, class: "predicate" }, edge.predicate + window_(edge)));
      if (edge.src_id) group.addEventListener("click", () => { window.location.href = box.dataset.memory + encodeURIComponent(edge.src_id); });
      svg.append(group);
    }
    for (const name of names) {
      const p = at.get(name);
      const group = el("g", { class: name === data.entity ? "node focus" : "node", "data-entity": name, tabindex: 0 });
      group.append(el("title", {}, `${name}: click to centre the graph on it`));
      group.append(el("circle", { cx: p.x, cy: p.y, r: 14 }));
      group.append(el("text", { x: p.x, y: p.y + 30, class: "entity" }, name));
      const open = () => { window.location.href = `${window.location.pathname}?entity=${encodeURIComponent(name)}`; };
      group.addEventListener("click", open);
      group.addEventListener("keydown", (event) => { if (event.key === "Enter") open(); });
      svg.append(group);
    }
    box.replaceChildren(svg);
    box.dataset.drawn = String(names.length);
  }

  // -- import progress ---------------------------------------------------------------------
  const job = document.getElementById("import");
  if (job && job.dataset.state && !job.dataset.finished) {
    const bar = document.getElementById("import-bar");
    const timer = setInterval(async function () {
      const response = await fetch(job.dataset.state, { credentials: "same-origin" });
      if (!response.ok) return;
      const state = await response.json();
      bar.max = Math.max(state.total, 1);
      bar.value = state.done;
      document.getElementById("import-phase").textContent = state.phase;
      const share = state.total ? Math.round((100 * state.done) / state.total) : 0;
      document.getElementById("import-count").textContent = `${state.done} / ${state.total} (${share}%)`;
      if (state.finished) {
        clearInterval(timer);
        const outcome = document.createElement("div");
        outcome.className = state.error ? "notice error" : "notice ok";
        outcome.textContent = state.error || state.result;
        document.getElementById("import-outcome").replaceChildren(outcome);
        job.dataset.finished = "1";
      }
    }, 200);
  }
})();

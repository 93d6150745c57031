// Proxy calls: poll the console for new audit entries and put them at the top of the table.
// The rows arrive as HTML the server rendered (and escaped); filters live in the address.
"use strict";

(function () {
  const table = document.getElementById("calls-table");
  if (!table) return;
  const body = document.getElementById("calls");
  const filters = document.getElementById("filters");
  const params = new URLSearchParams(window.location.search);
  let last = Number(table.dataset.last);
  const every = Number(table.dataset.poll) || 250;
  let busy = false;
  const KEPT = 1000; // rows kept in a page left open for long

  function fragment(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }

  function addChoices(name, values) {
    const select = filters.elements[name];
    const known = new Set(Array.from(select.options).map((o) => o.value));
    for (const value of values) {
      if (known.has(value)) continue;
      const option = document.createElement("option");
      option.value = value;
      option.textContent = value;
      select.append(option);
    }
  }

  async function poll() {
    if (busy) return;
    busy = true;
    try {
      const query = new URLSearchParams(params);
      query.set("after", String(last));
      const response = await fetch(`${table.dataset.feed}?${query}`, { credentials: "same-origin" });
      if (!response.ok) return;
      const update = await response.json();
      if (update.reload) {
        window.location.reload();
        return;
      }
      for (const html of update.rows) {
        const row = fragment(html).firstElementChild;
        row.classList.add("fresh");
        body.prepend(row);
      }
      while (body.rows.length > KEPT) body.deleteRow(-1);
      last = update.last;
      for (const id of ["chain", "approvals", "pins"]) {
        document.getElementById(id).replaceChildren(fragment(update[id]));
      }
      addChoices("server", update.servers);
      addChoices("tool", update.tools);
    } finally {
      busy = false;
    }
  }

  for (const select of filters.querySelectorAll("select")) {
    select.addEventListener("change", function () {
      filters.requestSubmit();
    });
  }
  setInterval(poll, every);
})();

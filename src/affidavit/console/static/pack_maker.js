// Pack maker: pick quotes from the messages, check the record live, add it to the pack.
// Every verdict comes from the server (the pack builder's own code); this file only collects
// what the user picked and shows what the server said.
"use strict";

(function () {
  const form = document.getElementById("record-form");
  if (!form) return;
  const quotesBox = document.getElementById("quotes");
  const result = document.getElementById("check-result");
  const addButton = document.getElementById("add-record");
  const quotes = []; // {message_id, quote, picked, start}
  let timer = null;
  let serial = 0;

  function codePoints(text) {
    return Array.from(text).length;
  }

  function role(messageId) {
    const node = document.querySelector(`.text[data-message-id="${messageId}"]`);
    return node ? node.dataset.role : null;
  }

  function addQuote(messageId, quote, start) {
    if (!quote.trim()) return;
    if (quotes.length === 0) {
      const r = role(messageId);
      if (r) form.elements.role.value = r;
    }
    quotes.push({ message_id: messageId, quote: quote, picked: quote, start: start });
    renderQuotes();
    scheduleCheck(0);
  }

  function renderQuotes() {
    quotesBox.replaceChildren();
    if (quotes.length === 0) {
      const p = document.createElement("p");
      p.className = "muted small";
      p.textContent = "No quotes yet: click a sentence.";
      quotesBox.append(p);
    }
    quotes.forEach(function (q, index) {
      const box = document.createElement("div");
      box.className = "quote";
      const meta = document.createElement("div");
      meta.className = "meta";
      const where = document.createElement("span");
      where.textContent = `message #${q.message_id}`;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "small";
      remove.textContent = "Remove";
      remove.addEventListener("click", function () {
        quotes.splice(index, 1);
        renderQuotes();
        scheduleCheck(0);
      });
      meta.append(where, remove);
      const area = document.createElement("textarea");
      area.name = `quote-${index}`;
      area.value = q.quote;
      area.addEventListener("input", function () {
        q.quote = area.value;
        scheduleCheck(250);
      });
      box.append(meta, area);
      quotesBox.append(box);
    });
  }

  function candidate() {
    const record = {};
    for (const name of ["record_id", "role", "topic", "category", "statement", "speaker"]) {
      const value = form.elements[name].value.trim();
      if (value) record[name] = value;
    }
    record.quotes = quotes.map(function (q) {
      const cite = { message_id: q.message_id, quote: q.quote };
      // the offset of the picked words holds only while the words are the ones picked
      if (q.quote === q.picked && q.start !== null) cite.start = q.start;
      return cite;
    });
    return record;
  }

  async function post(url) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ record: candidate() }),
      credentials: "same-origin",
    });
    if (!response.ok) throw new Error(`the console answered ${response.status}`);
    return response.json();
  }

  function show(kind, children) {
    result.className = `check-result notice ${kind}`;
    result.replaceChildren(...children);
  }

  function describe(record) {
    const spans = record.evidence.map(function (e) {
      return `#${e.message_id} [${e.start}, ${e.end})`;
    });
    const head = document.createElement("strong");
    head.textContent = "Verbatim";
    return [head, ` — every quote found: ${spans.join(", ")}; statement: “${record.statement}”`];
  }

  async function check() {
    const mine = ++serial;
    try {
      const answer = await post(form.dataset.check);
      if (mine !== serial) return;
      if (answer.ok) {
        show("ok", describe(answer.record));
        addButton.disabled = false;
      } else {
        const head = document.createElement("strong");
        head.textContent = "Refused";
        show("error", [head, " — " + answer.error]);
        addButton.disabled = true;
      }
    } catch (error) {
      show("error", [String(error)]);
      addButton.disabled = true;
    }
  }

  function scheduleCheck(delay) {
    clearTimeout(timer);
    addButton.disabled = true;
    timer = setTimeout(check, delay);
  }

  for (const name of ["record_id", "role", "topic", "category", "statement", "speaker"]) {
    form.elements[name].addEventListener("input", function () {
      scheduleCheck(250);
    });
  }

  // A sentence click quotes the sentence; a selection inside one message quotes the words.
  document.querySelectorAll(".message .text").forEach(function (text) {
    text.addEventListener("mouseup", function (event) {
      const messageId = Number(text.dataset.messageId);
      const selection = window.getSelection();
      if (selection && !selection.isCollapsed) {
        const range = selection.getRangeAt(0);
        if (!text.contains(range.startContainer) || !text.contains(range.endContainer)) return;
        const before = document.createRange();
        before.setStart(text, 0);
        before.setEnd(range.startContainer, range.startOffset);
        addQuote(messageId, range.toString(), codePoints(before.toString()));
        selection.removeAllRanges();
        return;
      }
      const sentence = event.target.closest(".sentence");
      if (sentence) {
        sentence.classList.add("picked");
        addQuote(messageId, sentence.textContent, Number(sentence.dataset.start));
      }
    });
  });

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    addButton.disabled = true;
    try {
      const answer = await post(form.dataset.add);
      if (!answer.ok) {
        const head = document.createElement("strong");
        head.textContent = "Refused";
        show("error", [head, " — " + answer.error]);
        return;
      }
      const records = document.getElementById("records");
      const parsed = new DOMParser().parseFromString(answer.records_html, "text/html");
      records.replaceChildren(...parsed.body.childNodes);
      quotes.length = 0;
      renderQuotes();
      for (const name of ["topic", "category", "statement", "speaker"]) form.elements[name].value = "";
      form.elements.record_id.value = answer.next_id;
      document.querySelectorAll(".sentence.picked").forEach(function (s) {
        s.classList.remove("picked");
      });
      const head = document.createElement("strong");
      head.textContent = "Added";
      show("ok", [head, ` — ${answer.record.record_id} is in the pack.`]);
    } catch (error) {
      show("error", [String(error)]);
    }
  });

  form.dataset.ready = "1"; // every handler is attached: tests (and users' clicks) may start
})();

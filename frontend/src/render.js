/**
 * DOM rendering of a run and of the history list, against the element ids of
 * the exercise page contract (#status, #verdict, #events, #diagnostics,
 * #compile-info, #output, #history). Text only: nothing from the server is
 * inserted as HTML.
 */

import {
  compiledSentence,
  diagnosticText,
  eventSentence,
  formatBytes,
  goalText,
  verdictLabel,
  verdictTone,
  VERDICTS,
} from "./format.js";

function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    node.setAttribute(k, String(v));
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

const VERDICT_CLASSES = VERDICTS.map((v) => `verdict-${v}`).concat(["verdict-good", "verdict-bad", "verdict-neutral"]);

export class ResultsView {
  constructor(root = document) {
    const get = (id) => root.getElementById(id);
    this.status = get("status");
    this.verdict = get("verdict");
    this.events = get("events");
    this.diagnostics = get("diagnostics");
    this.compileInfo = get("compile-info");
    this.output = get("output");
    this.history = get("history");
    this.verdictMessage = get("verdict-message");
    this.kept = get("kept-drafts");
    this.goals = get("goals");
  }

  /** The verdict's checklist: one <li class="met|missed|unmeasured"> per goal of the `done` event. */
  showGoals(goals) {
    if (!this.goals) return;
    this.goals.replaceChildren();
    for (const goal of Array.isArray(goals) ? goals : []) {
      const state = goal.met === true ? "met" : goal.met === false ? "missed" : "unmeasured";
      this.goals.appendChild(el("li", { class: state, "data-goal": goal.metric }, goalText(goal)));
    }
  }

  /** Empties everything a run fills, before a new run or a history item is shown. */
  reset() {
    this.events.replaceChildren();
    this.diagnostics.replaceChildren();
    this.compileInfo.replaceChildren();
    for (const attr of [...this.compileInfo.attributes]) {
      if (attr.name.startsWith("data-")) this.compileInfo.removeAttribute(attr.name);
    }
    this.output.textContent = "";
    this.showGoals([]);
    this.clearVerdict();
  }

  setStatus(text, kind = "info") {
    this.status.textContent = text;
    this.status.classList.remove("error", "info", "busy", "done");
    if (kind) this.status.classList.add(kind);
    this.status.dataset.kind = kind || "";
  }

  clearVerdict() {
    this.verdict.textContent = "";
    if (this.verdictMessage) this.verdictMessage.textContent = "";
    this.verdict.removeAttribute("data-verdict");
    this.verdict.removeAttribute("title");
    this.verdict.classList.remove("verdict", ...VERDICT_CLASSES);
  }

  showVerdict(verdict, message) {
    this.clearVerdict();
    this.verdict.textContent = verdictLabel(verdict);
    this.verdict.dataset.verdict = verdict;
    this.verdict.classList.add("verdict", `verdict-${verdict}`, `verdict-${verdictTone(verdict)}`);
    if (message) this.verdict.title = message;
    if (this.verdictMessage) this.verdictMessage.textContent = message ? sentenceCase(message) : "";
  }

  /** Scrolls the verdict into view (on a phone it sits below the editor). */
  revealVerdict() {
    const box = this.verdict.closest("h2") || this.verdict;
    if (typeof box.scrollIntoView === "function") box.scrollIntoView({ block: "start", behavior: "auto" });
  }

  /** Inserts one <li> per event, keeping the list ordered by seq. */
  addEvents(events) {
    for (const ev of events) {
      const li = el("li", { "data-type": ev.type, "data-seq": Number.isInteger(ev.seq) ? ev.seq : undefined }, eventSentence(ev));
      if (typeof ev.at === "number") li.title = new Date(ev.at * 1000).toLocaleTimeString();
      if (ev.type === "check") li.dataset.passed = ev.passed ? "true" : "false";
      if (ev.type === "done" && ev.verdict) li.dataset.verdict = ev.verdict;
      this.events.insertBefore(li, this.nextAfter(ev.seq));
    }
  }

  nextAfter(seq) {
    if (!Number.isInteger(seq)) return null;
    for (const li of this.events.children) {
      const other = Number(li.dataset.seq);
      if (li.dataset.seq !== undefined && other > seq) return li;
    }
    return null;
  }

  /** Registers, shared memory and spills, with the PTX excerpt folded away. */
  showCompileInfo(info) {
    const box = this.compileInfo;
    box.replaceChildren();
    const attrs = {
      registers: info.registers,
      "shared-bytes": info.shared_bytes,
      "spill-bytes": info.spill_bytes,
      "local-bytes": info.local_bytes,
    };
    for (const [k, v] of Object.entries(attrs)) {
      if (typeof v === "number") box.setAttribute(`data-${k}`, String(v));
    }
    const dl = el("dl", { class: "compile-facts" });
    const fact = (label, value) => {
      dl.append(el("dt", {}, label), el("dd", {}, value));
    };
    if (typeof info.registers === "number") fact("Registers/thread", String(info.registers));
    if (typeof info.shared_bytes === "number") fact("Shared memory", formatBytes(info.shared_bytes));
    if (typeof info.spill_bytes === "number") fact("Spills", formatBytes(info.spill_bytes));
    if (typeof info.local_bytes === "number") fact("Local memory", formatBytes(info.local_bytes));
    if (typeof info.max_threads_per_block === "number") fact("Max threads/block", String(info.max_threads_per_block));
    const tool = [info.tool, info.arch].filter(Boolean).join(" ");
    if (tool) fact("Tool", tool);
    box.append(el("p", { class: "compile-summary" }, compiledSentence(info)));
    if (dl.children.length) box.append(dl);
    if (Array.isArray(info.notes) && info.notes.length) {
      const notes = el("ul", { class: "compile-notes" });
      for (const note of info.notes) notes.append(el("li", {}, String(note)));
      box.append(notes);
    }
    const listings = [
      ["sass_excerpt", "sass", "SASS (machine code) with your source lines"],
      ["ptx_excerpt", "ptx", "PTX excerpt"],
    ];
    for (const [field, cls, title] of listings) {
      if (!info[field]) continue;
      const details = el("details", { class: cls });
      details.append(el("summary", {}, title), el("pre", {}, String(info[field])));
      box.append(details);
    }
  }

  /** <li data-line="7">line 7:5: message</li> per diagnostic. */
  showDiagnostics(diagnostics) {
    this.diagnostics.replaceChildren(
      ...diagnostics.map((d) =>
        el(
          "li",
          {
            "data-line": d.line || undefined,
            "data-column": d.column || undefined,
            "data-severity": d.severity || "error",
          },
          diagnosticText(d),
        ),
      ),
    );
  }

  setOutput(text) {
    this.output.textContent = text;
  }

  appendOutput(text) {
    const current = this.output.textContent;
    this.output.textContent = current && !current.endsWith("\n") ? `${current}\n${text}` : current + text;
  }

  /** <li data-id="<the run's public id>" data-verdict="accepted"> per submission, newest first as the server sends them. */
  showHistory(submissions, currentId) {
    this.history.replaceChildren(
      ...submissions.map((s) => {
        const verdict = s.verdict || s.status || "";
        const li = el("li", {
          "data-id": s.id,
          "data-verdict": s.verdict || undefined,
          "data-status": s.status || undefined,
          class: String(s.id) === String(currentId) ? "current" : undefined,
        });
        const button = el("button", { type: "button", class: "history-item" });
        button.append(
          el("span", { class: "history-id" }, `#${s.number ?? s.id}`),
          el("span", { class: "history-language" }, s.language || ""),
          el("span", { class: `history-verdict verdict-${verdictTone(s.verdict)}` }, verdictLabel(verdict)),
          timeElement(s.created_at),
        );
        li.append(button);
        return li;
      }),
    );
  }

  /** <li data-kept="0"> per draft kept aside (before a restore or a reset), newest first. */
  showKept(kept) {
    if (!this.kept) return;
    this.kept.replaceChildren(
      ...kept.map((k, i) => {
        const li = el("li", { "data-kept": i });
        const button = el("button", { type: "button", class: "history-item" });
        button.append(
          el("span", { class: "history-id" }, "draft"),
          el("span", { class: "history-language" }, k.language || ""),
          el("span", { class: "history-verdict" }, k.note || "kept"),
          timeElement(k.at),
        );
        li.append(button);
        return li;
      }),
    );
  }

  markCurrent(id) {
    for (const li of this.history.children) {
      li.classList.toggle("current", li.dataset.id === String(id));
    }
  }
}

function sentenceCase(text) {
  const t = String(text);
  return t ? t[0].toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".") : t;
}

function timeElement(iso) {
  const node = el("time", { class: "history-time", datetime: iso || undefined });
  const date = iso ? new Date(iso) : null;
  node.textContent = date && !Number.isNaN(date.getTime()) ? date.toLocaleString() : iso || "";
  return node;
}

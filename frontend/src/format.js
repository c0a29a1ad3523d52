/**
 * Pure formatting of run events and results into short human sentences.
 *
 * No DOM here, so `node --test` covers it. Every number shown comes from the
 * event itself; a field the event does not carry is left out, never guessed.
 */

export const VERDICTS = [
  "accepted",
  "wrong_answer",
  "compile_error",
  "runtime_error",
  "timeout",
  "rejected",
  "not_run",
  "error",
];

const BAD_VERDICTS = new Set([
  "wrong_answer",
  "compile_error",
  "runtime_error",
  "timeout",
  "rejected",
  "error",
]);

/** The one label each verdict is shown with, everywhere on the page (badge, status, history, events). */
export const VERDICT_LABELS = {
  accepted: "Accepted",
  wrong_answer: "Wrong answer",
  compile_error: "Compile error",
  runtime_error: "Runtime error",
  timeout: "Time limit exceeded",
  rejected: "Rejected",
  not_run: "Compiled, not run",
  error: "Worker error",
};

/** The label of a verdict value; an unknown value reads as itself, underscores as spaces. */
export function verdictLabel(verdict) {
  if (!verdict) return "";
  return VERDICT_LABELS[verdict] || String(verdict).replace(/_/g, " ");
}

/** "good" (green), "bad" (red) or "neutral" (grey) for a verdict value. */
export function verdictTone(verdict) {
  if (verdict === "accepted") return "good";
  if (BAD_VERDICTS.has(verdict)) return "bad";
  return "neutral";
}

/**
 * A number as people read it: integers as they are, others to 6 significant
 * digits. Non-finite values arrive as strings ("NaN", "Infinity") after the
 * lenient JSON parse, or as null when the sender mapped them to null.
 */
export function formatNumber(value) {
  if (value === null || value === undefined) return "non-finite";
  if (typeof value === "string") return value;
  if (typeof value !== "number") return String(value);
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (Number.isInteger(value)) return String(value);
  return String(parseFloat(value.toPrecision(6)));
}

/** Bytes in B below 1 KiB, then KiB / MiB with one decimal. */
export function formatBytes(bytes) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes)) return "? B";
  if (Math.abs(bytes) < 1024) return `${bytes} B`;
  if (Math.abs(bytes) < 1024 * 1024) return `${trimZero(bytes / 1024)} KiB`;
  return `${trimZero(bytes / (1024 * 1024))} MiB`;
}

function trimZero(x) {
  return String(parseFloat(x.toFixed(1)));
}

/** A duration given in milliseconds, in the unit that reads best. */
export function formatMilliseconds(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return formatNumber(ms);
  if (ms >= 1000) return `${formatNumber(ms / 1000)} s`;
  if (ms >= 1) return `${formatNumber(ms)} ms`;
  if (ms >= 1e-3) return `${formatNumber(ms * 1e3)} µs`;
  return `${formatNumber(ms * 1e6)} ns`;
}

function plural(count, word, many = `${word}s`) {
  return `${count} ${count === 1 ? word : many}`;
}

/** "n=1000" or "m=64, n=128" from a sizes mapping; "" when there is none. */
export function formatSizes(sizes) {
  if (!sizes || typeof sizes !== "object") return "";
  return Object.entries(sizes)
    .map(([k, v]) => `${k}=${formatNumber(v)}`)
    .join(", ");
}

function formatIndex(index) {
  return Array.isArray(index) ? `(${index.join(", ")})` : String(index);
}

const META_FIELDS = new Set(["type", "seq", "at"]);

/** The scalar fields of an object as "k=v" pairs: the fallback for events we have no sentence for. */
export function scalarFields(obj, skip = []) {
  if (!obj || typeof obj !== "object") return "";
  const omit = new Set([...META_FIELDS, ...skip]);
  const parts = [];
  for (const [k, v] of Object.entries(obj)) {
    if (omit.has(k)) continue;
    if (typeof v === "number") parts.push(`${k}=${formatNumber(v)}`);
    else if (typeof v === "string" && v.length <= 80) parts.push(`${k}=${v}`);
    else if (typeof v === "boolean") parts.push(`${k}=${v}`);
  }
  return parts.join(", ");
}

function withDetail(head, detail) {
  return detail ? `${head}: ${detail}` : head;
}

/** "compiled: 10 registers/thread, 0 B shared, 0 B spilled (ptxas sm_90)". */
export function compiledSentence(info) {
  const parts = [];
  if (typeof info.registers === "number") parts.push(`${info.registers} registers/thread`);
  if (typeof info.shared_bytes === "number") parts.push(`${formatBytes(info.shared_bytes)} shared`);
  if (typeof info.spill_bytes === "number") parts.push(`${formatBytes(info.spill_bytes)} spilled`);
  if (typeof info.local_bytes === "number" && info.local_bytes > 0) {
    parts.push(`${formatBytes(info.local_bytes)} local`);
  }
  const tool = [info.tool, info.arch].filter(Boolean).join(" ");
  let text = parts.length ? `compiled: ${parts.join(", ")}` : "compiled";
  if (tool) text += ` (${tool})`;
  return text;
}

/** "check n=1000: passed" or "check n=1000: 1 mismatch, first at index 999: expected 1.23, got NaN". */
export function checkSentence(ev) {
  const sizes = formatSizes(ev.sizes);
  const head = sizes ? `check ${sizes}` : "check";
  if (ev.passed) return `${head}: passed`;
  const mismatches = Array.isArray(ev.mismatches) ? ev.mismatches : [];
  const count = typeof ev.mismatch_count === "number" ? ev.mismatch_count : mismatches.length;
  const parts = [];
  if (count > 0) {
    let text = plural(count, "mismatch", "mismatches");
    const first = mismatches[0];
    if (first) {
      text +=
        `, first at index ${formatIndex(first.index)}: ` +
        `expected ${formatNumber(first.expected)}, got ${formatNumber(first.got)}`;
      if (first.note) text += ` (${first.note})`;
    }
    parts.push(text);
  } else {
    parts.push(ev.message ? `failed, ${ev.message}` : "failed");
  }
  if (typeof ev.max_abs_error === "number") parts.push(`max abs error ${formatNumber(ev.max_abs_error)}`);
  return `${head}: ${parts.join("; ")}`;
}

function compileErrorSentence(ev) {
  const diags = Array.isArray(ev.diagnostics) ? ev.diagnostics : [];
  if (!diags.length) return withDetail("compile error", ev.message);
  const first = diags[0];
  const where = first.line ? ` at ${diagnosticLocation(first)}` : "";
  const more = diags.length > 1 ? ` (+${diags.length - 1} more)` : "";
  return `compile error${where}: ${first.message}${more}`;
}

/** "line 7:5" / "line 7" for a diagnostic. */
export function diagnosticLocation(d) {
  if (!d.line) return "";
  return d.column ? `line ${d.line}:${d.column}` : `line ${d.line}`;
}

/** "line 7:5: message", or the message alone when the compiler named no line. */
export function diagnosticText(d) {
  const where = diagnosticLocation(d);
  return where ? `${where}: ${d.message}` : String(d.message);
}

function startedSentence(ev) {
  const parts = [];
  if (ev.backend) parts.push(`${ev.backend} backend`);
  if (ev.device) parts.push(`on ${ev.device}`);
  let text = parts.length ? `started: ${parts.join(" ")}` : "started";
  const worker = ev.worker || ev.slice;
  if (worker && typeof worker === "string") text += ` (${worker})`;
  const sandbox = typeof ev.sandbox === "string" ? ev.sandbox : scalarFields(ev.sandbox);
  if (sandbox) text += `; sandbox ${sandbox}`;
  return text;
}

function occupancySentence(ev) {
  // The calculator explains itself in a plain sentence; prefer it.
  if (typeof ev.reason === "string" && ev.reason) return `occupancy (${ev.source || "calculator"}): ${ev.reason}`;
  const occ = ev.occupancy ?? ev.achieved ?? ev.theoretical;
  const parts = [];
  if (typeof occ === "number") {
    const pct = occ <= 1 ? occ * 100 : occ;
    parts.push(`${formatNumber(Math.round(pct * 10) / 10)}%`);
  }
  if (typeof ev.active_warps === "number" && typeof ev.max_warps === "number") {
    parts.push(`${ev.active_warps}/${ev.max_warps} warps per SM`);
  }
  if (typeof ev.blocks_per_sm === "number") parts.push(`${ev.blocks_per_sm} blocks/SM`);
  const limiter = ev.limiter ?? ev.limited_by;
  if (limiter) parts.push(`limited by ${limiter}`);
  if (!parts.length) return withDetail("occupancy", scalarFields(ev));
  return `occupancy: ${parts.join(", ")}`;
}

function timingSentence(ev) {
  const summary = ev.summary && typeof ev.summary === "object" ? ev.summary : ev;
  const median = ev.median_ms ?? summary.median_ms ?? summary.median;
  const sizes = formatSizes(ev.sizes);
  const head = sizes ? `timing ${sizes}` : "timing";
  if (typeof median !== "number") return withDetail(head, scalarFields(ev, ["sizes"]));
  let text = `${head}: median ${formatMilliseconds(median)}`;
  const rel = summary.rel_ci_half_width;
  if (typeof rel === "number" && Number.isFinite(rel)) text += ` ± ${formatNumber(Math.round(rel * 1000) / 10)}%`;
  const n = summary.n ?? ev.repeats;
  if (typeof n === "number") text += ` over ${plural(n, "run")}`;
  return text;
}

function memorySentence(ev) {
  const lines = Array.isArray(ev.lines) ? ev.lines.map((l) => l.message).filter(Boolean) : [];
  const head = typeof ev.summary === "string" && ev.summary ? ev.summary : "memory accesses traced";
  return [`memory (simulator): ${head}`, ...lines].join(" · ");
}

function profileSentence(ev) {
  if (ev.available === false) return withDetail("Nsight Compute: not profiled", ev.reason);
  const head = typeof ev.source === "string" && ev.source ? ev.source : "Nsight Compute";
  const lines = Array.isArray(ev.explanations) ? ev.explanations.filter((l) => typeof l === "string" && l) : [];
  return [head, ...lines].join(" · ");
}

function metricsSentence(ev) {
  const sizes = formatSizes(ev.sizes);
  const head = sizes ? `metrics ${sizes}` : "metrics";
  if (typeof ev.verdict === "string" && ev.verdict) return `${head}: ${ev.verdict}`;
  const parts = [];
  const gbs = ev.bandwidth_gbs ?? ev.bandwidth_GBps ?? ev.gbps;
  if (typeof gbs === "number") parts.push(`${formatNumber(gbs)} GB/s`);
  const gflops = ev.gflops ?? ev.gflop_s;
  if (typeof gflops === "number") parts.push(`${formatNumber(gflops)} GFLOP/s`);
  const pct = ev.percent_of_bandwidth ?? ev.bandwidth_pct ?? ev.pct_of_peak_bandwidth;
  if (typeof pct === "number") parts.push(`${formatNumber(pct)}% of measured bandwidth`);
  if (!parts.length) return withDetail(head, scalarFields(ev, ["sizes"]));
  return `${head}: ${parts.join(", ")}`;
}

/** The title a figure event (or a result's figure entry) is filed under. */
export function figureTitle(entry, fallback = "Figure") {
  if (!entry || typeof entry !== "object") return fallback;
  if (typeof entry.title === "string" && entry.title) return entry.title;
  const layout = (entry.figure && entry.figure.layout) || entry.layout;
  const title = layout && layout.title;
  if (typeof title === "string" && title) return title;
  if (title && typeof title.text === "string" && title.text) return title.text;
  return fallback;
}

/** The text a log event carries. */
export function logText(ev) {
  const text = ev.message ?? ev.text ?? ev.line ?? ev.output ?? "";
  return String(text);
}

/** One short sentence for any event; unknown types fall back to their scalar fields. */
export function eventSentence(ev) {
  switch (ev.type) {
    case "queued": {
      const detail = [ev.queue || ev.pool, typeof ev.position === "number" ? `position ${ev.position}` : ""]
        .filter(Boolean)
        .join(", ");
      const queued = detail ? `queued (${detail})` : "queued";
      return ev.message ? `${queued}: ${ev.message}` : queued;
    }
    case "started":
      return startedSentence(ev);
    case "compiled":
      return compiledSentence(ev);
    case "compile_error":
      return compileErrorSentence(ev);
    case "occupancy":
      return occupancySentence(ev);
    case "check":
      return checkSentence(ev);
    case "timing":
      return timingSentence(ev);
    case "metrics":
      return metricsSentence(ev);
    case "memory":
      return memorySentence(ev);
    case "profile":
      return profileSentence(ev);
    case "figure":
      return `figure: ${figureTitle(ev)}`;
    case "log": {
      const text = logText(ev).trim();
      return withDetail("log", text.length > 200 ? `${text.slice(0, 200)}…` : text);
    }
    case "done": {
      const head = ev.verdict ? `done: ${verdictLabel(ev.verdict)}` : "done";
      return ev.message ? `${head} (${ev.message})` : head;
    }
    case "error":
      return withDetail("error", ev.message);
    default:
      return withDetail(String(ev.type || "event"), scalarFields(ev));
  }
}

/** One goal of the verdict's checklist (gpu_worker.exercise.goals.GoalResult) as a line: its reason, then its hint. */
export function goalText(goal) {
  if (!goal) return "";
  const reason = goal.reason || goal.name || "";
  return goal.met === false && goal.hint ? `${reason}. ${goal.hint}` : reason;
}

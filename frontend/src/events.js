/**
 * Pure helpers for the event stream: a seq-keyed store that drops repeats, and
 * a JSON parser that survives Python's NaN / Infinity literals.
 *
 * The server sends the stored state first on every (re)connection, so the same
 * event can arrive more than once; the store is what makes that harmless.
 */

/** The key an event is deduplicated by: its seq when it has one. */
export function eventKey(ev) {
  if (ev && Number.isInteger(ev.seq)) return `seq:${ev.seq}`;
  return `json:${JSON.stringify(ev)}`;
}

/** Events seen so far for one submission, each once, readable in seq order. */
export class EventStore {
  constructor() {
    this.byKey = new Map();
  }

  /** Adds the events not seen yet and returns just those, in seq order. */
  add(events) {
    const fresh = [];
    for (const ev of events || []) {
      if (!ev || typeof ev !== "object") continue;
      const key = eventKey(ev);
      if (this.byKey.has(key)) continue;
      this.byKey.set(key, ev);
      fresh.push(ev);
    }
    return sortBySeq(fresh);
  }

  has(ev) {
    return this.byKey.has(eventKey(ev));
  }

  /** Every stored event, in seq order (events without a seq last, in arrival order). */
  all() {
    return sortBySeq([...this.byKey.values()]);
  }

  /** The highest seq seen, or null before the first numbered event. */
  lastSeq() {
    let last = null;
    for (const ev of this.byKey.values()) {
      if (Number.isInteger(ev.seq) && (last === null || ev.seq > last)) last = ev.seq;
    }
    return last;
  }

  get size() {
    return this.byKey.size;
  }
}

/** A stable sort by seq; events without an integer seq keep their order after the numbered ones. */
export function sortBySeq(events) {
  return events
    .map((ev, i) => ({ ev, i }))
    .sort((a, b) => {
      const sa = Number.isInteger(a.ev.seq) ? a.ev.seq : Infinity;
      const sb = Number.isInteger(b.ev.seq) ? b.ev.seq : Infinity;
      return sa === sb ? a.i - b.i : sa - sb;
    })
    .map((x) => x.ev);
}

/**
 * JSON.parse, falling back to rewriting the bare NaN, Infinity and -Infinity
 * tokens that Python's json module writes into strings ("NaN", "Infinity",
 * "-Infinity") so a mismatch that got NaN still reaches the page.
 */
export function parseJsonLenient(text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    const fixed = quoteNonFinite(text);
    if (fixed === text) throw err;
    return JSON.parse(fixed);
  }
}

function quoteNonFinite(text) {
  let out = "";
  let i = 0;
  let inString = false;
  while (i < text.length) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === "\\") {
        out += text[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (c === '"') inString = false;
      i += 1;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
      i += 1;
      continue;
    }
    const token = ["-Infinity", "Infinity", "NaN"].find((t) => text.startsWith(t, i));
    if (token) {
      out += `"${token}"`;
      i += token.length;
      continue;
    }
    out += c;
    i += 1;
  }
  return out;
}

/** Submission statuses after which nothing more will stream. */
export const FINISHED_STATUSES = new Set(["done", "finished", "failed", "error", "cancelled"]);

/** Whether a submission document (snapshot or detail) describes a finished run. */
export function isFinished(submission) {
  if (!submission) return false;
  if (FINISHED_STATUSES.has(submission.status)) return true;
  return Boolean(submission.result && submission.result.verdict);
}

/** The verdict of a finished submission document. */
export function finalVerdict(submission) {
  return (submission.result && submission.result.verdict) || submission.verdict || "error";
}

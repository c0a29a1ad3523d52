/**
 * Compiler diagnostics to editor positions: 1-based line and column, clamped
 * to the document so a line past the end (or column past the line) still
 * lands somewhere visible. Works on any CodeMirror `Text` (no DOM needed).
 */

const SEVERITIES = new Set(["error", "warning", "info", "hint"]);

/**
 * The simulator's per-line memory report (a `memory` event) as editor diagnostics:
 * uncoalesced loads and bank conflicts as warnings, clean lines as info, each with its plain sentence.
 */
export function memoryDiagnostics(ev) {
  const lines = ev && Array.isArray(ev.lines) ? ev.lines : [];
  return lines
    .filter((l) => l && Number.isFinite(Number(l.line)) && typeof l.message === "string" && l.message)
    .map((l) => ({
      line: Number(l.line),
      column: l.column || undefined,
      severity: l.severity === "warning" ? "warning" : "info",
      message: l.message,
      source: "simulator",
    }));
}

/** {from, to, lineFrom, lineNumber} for a diagnostic, or null when it names no line. */
export function diagnosticRange(doc, d) {
  if (!d || !Number.isFinite(Number(d.line)) || Number(d.line) < 1) return null;
  const lineNumber = Math.min(Math.max(1, Math.trunc(Number(d.line))), doc.lines);
  const line = doc.line(lineNumber);
  const col = Number(d.column);
  if (!Number.isFinite(col) || col < 1) {
    return { from: line.from, to: line.to, lineFrom: line.from, lineNumber };
  }
  const from = line.from + Math.min(Math.trunc(col) - 1, line.length);
  const to = from < line.to ? line.to : from;
  return { from, to, lineFrom: line.from, lineNumber };
}

/** CodeMirror lint diagnostics for the diagnostics that name a line. */
export function toLintDiagnostics(doc, diagnostics) {
  const out = [];
  for (const d of diagnostics || []) {
    const range = diagnosticRange(doc, d);
    if (!range) continue;
    out.push({
      from: range.from,
      to: range.to,
      severity: SEVERITIES.has(d.severity) ? d.severity : "error",
      message: String(d.message ?? ""),
      source: d.source || undefined,
    });
  }
  return out;
}

const RANK = { error: 3, warning: 2, info: 1, hint: 0 };

/** The sorted, distinct start positions of the lines that carry an error or warning. */
export function errorLineStarts(doc, diagnostics) {
  return lineSeverities(doc, (diagnostics || []).filter((d) => d && d.severity !== "info" && d.severity !== "hint"))
    .map((l) => l.from);
}

/** [{from, severity}] per marked line, sorted, each line with its worst severity. */
export function lineSeverities(doc, diagnostics) {
  const worst = new Map();
  for (const d of diagnostics || []) {
    const range = diagnosticRange(doc, d);
    if (!range) continue;
    const severity = SEVERITIES.has(d.severity) ? d.severity : "error";
    const had = worst.get(range.lineFrom);
    if (!had || RANK[severity] > RANK[had]) worst.set(range.lineFrom, severity);
  }
  return [...worst.entries()].sort((a, b) => a[0] - b[0]).map(([from, severity]) => ({ from, severity }));
}

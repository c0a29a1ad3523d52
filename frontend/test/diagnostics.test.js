import assert from "node:assert/strict";
import { test } from "node:test";

import { Text } from "@codemirror/state";

import { diagnosticRange, errorLineStarts, lineSeverities, memoryDiagnostics, toLintDiagnostics } from "../src/diagnostics.js";

const doc = Text.of(["int main()", "{", "    int i = 0", "}"]);

test("it places a diagnostic at its 1-based line and column, to the end of the line", () => {
  const r = diagnosticRange(doc, { line: 3, column: 5, message: "x" });
  assert.equal(doc.sliceString(r.from, r.to), "int i = 0");
  assert.equal(r.lineNumber, 3);
});

test("it clamps a line past the end and a column past the line", () => {
  const r = diagnosticRange(doc, { line: 99, column: 80, message: "x" });
  assert.equal(r.lineNumber, 4);
  assert.equal(r.from, doc.line(4).to);
});

test("it covers the whole line when there is no column, and skips diagnostics without a line", () => {
  const r = diagnosticRange(doc, { line: 1, message: "x" });
  assert.equal(doc.sliceString(r.from, r.to), "int main()");
  assert.equal(diagnosticRange(doc, { line: null, message: "x" }), null);
});

test("it makes lint diagnostics and one error line per distinct line", () => {
  const diags = [
    { line: 3, column: 5, severity: "error", message: "a" },
    { line: 3, column: 9, severity: "warning", message: "b" },
    { line: 2, severity: "fatal", message: "c" },
  ];
  const lint = toLintDiagnostics(doc, diags);
  assert.deepEqual(lint.map((d) => d.severity), ["error", "warning", "error"]);
  assert.deepEqual(errorLineStarts(doc, diags), [doc.line(2).from, doc.line(3).from]);
});

test("the simulator's memory lines become warnings and infos with their sentences", () => {  const ev = {
    type: "memory",
    lines: [
      { line: 2, severity: "warning", message: "line 2: each warp's load touches 32 sectors" },
      { line: 3, severity: "ok", message: "line 3: the store is coalesced" },
      { line: "x", message: "no line" },
    ],
  };
  const diags = memoryDiagnostics(ev);
  assert.deepEqual(
    diags.map((d) => [d.line, d.severity]),
    [
      [2, "warning"],
      [3, "info"],
    ],
  );
  const abc = Text.of(["a", "b", "c"]);
  const marked = lineSeverities(abc, [...diags, { line: 2, severity: "error", message: "IndexError" }]);
  assert.deepEqual(marked, [
    { from: abc.line(2).from, severity: "error" },
    { from: abc.line(3).from, severity: "info" },
  ]);
});

import assert from "node:assert/strict";
import { test } from "node:test";

import { eventSentence, formatBytes, formatNumber, verdictTone } from "../src/format.js";

test("it describes a compiled event with registers, shared memory, spills and the tool", () => {
  const ev = { type: "compiled", seq: 3, registers: 10, shared_bytes: 0, spill_bytes: 0, local_bytes: 0, tool: "ptxas", arch: "sm_90" };
  assert.equal(eventSentence(ev), "compiled: 10 registers/thread, 0 B shared, 0 B spilled (ptxas sm_90)");
});

test("it says a passing check passed, with its sizes", () => {
  assert.equal(eventSentence({ type: "check", passed: true, sizes: { n: 1000 } }), "check n=1000: passed");
});

test("it names the first mismatch of a failing check", () => {
  const ev = {
    type: "check",
    passed: false,
    sizes: { n: 1000 },
    mismatches: [{ index: 999, expected: 1.23, got: "NaN" }],
    mismatch_count: 1,
  };
  assert.equal(eventSentence(ev), "check n=1000: 1 mismatch, first at index 999: expected 1.23, got NaN");
});

test("it counts mismatches in the plural and reports the max abs error", () => {
  const ev = {
    type: "check",
    passed: false,
    sizes: { n: 8 },
    mismatches: [{ index: [1, 2], expected: 0.5, got: 0.25 }],
    mismatch_count: 3,
    max_abs_error: 0.25,
  };
  assert.equal(eventSentence(ev), "check n=8: 3 mismatches, first at index (1, 2): expected 0.5, got 0.25; max abs error 0.25");
});

test("it points at the first diagnostic of a compile error", () => {
  const ev = {
    type: "compile_error",
    diagnostics: [
      { line: 7, column: 5, severity: "error", message: "expected ';'" },
      { line: 9, column: 1, severity: "error", message: "undeclared" },
    ],
  };
  assert.equal(eventSentence(ev), "compile error at line 7:5: expected ';' (+1 more)");
});

test("it describes started, done and error events", () => {
  assert.equal(eventSentence({ type: "started", backend: "sim", device: "CPU simulator" }), "started: sim backend on CPU simulator");
  assert.equal(eventSentence({ type: "done", verdict: "accepted" }), "done: Accepted");
  assert.equal(eventSentence({ type: "done", verdict: "timeout", message: "ran past 30 s" }), "done: Time limit exceeded (ran past 30 s)");
  assert.equal(eventSentence({ type: "error", message: "worker lost" }), "error: worker lost");
});

test("it formats a timing summary in milliseconds with its spread and run count", () => {
  const ev = { type: "timing", sizes: { n: 1000003 }, summary: { median: 0.0123, n: 50, rel_ci_half_width: 0.021 } };
  assert.equal(eventSentence(ev), "timing n=1000003: median 12.3 µs ± 2.1% over 50 runs");
});

test("it falls back to the scalar fields of events it has no sentence for", () => {
  assert.equal(eventSentence({ type: "metrics", seq: 9, at: 1, foo: 2, label: "x" }), "metrics: foo=2, label=x");
  assert.equal(eventSentence({ type: "novel", seq: 1, thing: true }), "novel: thing=true");
});

test("it formats numbers, bytes and verdict tones", () => {
  assert.equal(formatNumber(1.23456789), "1.23457");
  assert.equal(formatNumber(42), "42");
  assert.equal(formatNumber(NaN), "NaN");
  assert.equal(formatNumber(null), "non-finite");
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(49152), "48 KiB");
  assert.equal(verdictTone("accepted"), "good");
  assert.equal(verdictTone("wrong_answer"), "bad");
  assert.equal(verdictTone("not_run"), "neutral");
});

test("it says why a check failed when it was not element by element, and notes a never-written element", () => {
  assert.equal(
    eventSentence({ type: "check", passed: false, output: "c", sizes: { n: 4 }, message: "wrong shape (3,)" }),
    "check n=4: failed, wrong shape (3,)",
  );
  const ev = { type: "check", passed: false, output: "c", sizes: { n: 4 }, mismatch_count: 1, mismatches: [{ index: 3, expected: 2, got: -1, note: "never written" }] };
  assert.equal(eventSentence(ev), "check n=4: 1 mismatch, first at index 3: expected 2, got -1 (never written)");
});

test("it uses the calculator's own sentence for occupancy", () => {
  const ev = { type: "occupancy", source: "calculator", reason: "8 blocks fit: 100% occupancy, limited by warps." };
  assert.equal(eventSentence(ev), "occupancy (calculator): 8 blocks fit: 100% occupancy, limited by warps.");
});

test("it lists the simulator's memory diagnosis line by line", () => {
  const ev = { type: "memory", summary: "1 uncoalesced access", lines: [{ message: "line 7: 32 sectors; coalesced is 4" }] };
  assert.equal(eventSentence(ev), "memory (simulator): 1 uncoalesced access · line 7: 32 sectors; coalesced is 4");
});

test("it uses the metrics' plain verdict", () => {
  assert.equal(eventSentence({ type: "metrics", verdict: "94% of the copy bandwidth." }), "metrics: 94% of the copy bandwidth.");
});

test("it gives Nsight Compute's explanations, or why the kernel was not profiled", () => {
  const ev = {
    type: "profile",
    available: true,
    source: "Nsight Compute 2025.3 on NVIDIA H200",
    explanations: ["Achieved occupancy 85%.", "Each warp's load touches 4 sectors."],
  };
  assert.equal(eventSentence(ev), "Nsight Compute 2025.3 on NVIDIA H200 · Achieved occupancy 85%. · Each warp's load touches 4 sectors.");
  const off = { type: "profile", available: false, reason: "Nsight Compute is not installed on this worker" };
  assert.equal(eventSentence(off), "Nsight Compute: not profiled: Nsight Compute is not installed on this worker");
});

test("a queued event names its queue, and why it waits when no worker serves it", () => {
  assert.equal(eventSentence({ type: "queued", queue: "sim" }), "queued (sim)");
  const ev = { type: "queued", queue: "gpu.h200.full", message: "No worker is serving gpu.h200.full right now." };
  assert.equal(eventSentence(ev), "queued (gpu.h200.full): No worker is serving gpu.h200.full right now.");
});

import assert from "node:assert/strict";
import { test } from "node:test";

import { EventStore, isFinished, parseJsonLenient } from "../src/events.js";

test("it keeps each seq once, however often the server replays it", () => {
  const store = new EventStore();
  const first = store.add([
    { type: "queued", seq: 1 },
    { type: "started", seq: 2 },
  ]);
  assert.deepEqual(first.map((e) => e.seq), [1, 2]);
  const again = store.add([
    { type: "queued", seq: 1 },
    { type: "started", seq: 2 },
    { type: "compiled", seq: 3 },
  ]);
  assert.deepEqual(again.map((e) => e.seq), [3]);
  assert.equal(store.size, 3);
  assert.equal(store.lastSeq(), 3);
});

test("it returns events in seq order even when they arrive out of order", () => {
  const store = new EventStore();
  const fresh = store.add([
    { type: "check", seq: 5 },
    { type: "compiled", seq: 3 },
    { type: "log", seq: 4 },
  ]);
  assert.deepEqual(fresh.map((e) => e.seq), [3, 4, 5]);
  store.add([{ type: "queued", seq: 1 }]);
  assert.deepEqual(store.all().map((e) => e.seq), [1, 3, 4, 5]);
});

test("it has no last seq before the first numbered event", () => {
  assert.equal(new EventStore().lastSeq(), null);
});

test("it parses the NaN and Infinity that Python's json writes, leaving strings alone", () => {
  const msg = parseJsonLenient('{"got": NaN, "hi": Infinity, "lo": -Infinity, "s": "NaN in a string"}');
  assert.deepEqual(msg, { got: "NaN", hi: "Infinity", lo: "-Infinity", s: "NaN in a string" });
  assert.throws(() => parseJsonLenient("{broken"));
});

test("it knows a finished submission by its status or its result's verdict", () => {
  assert.equal(isFinished({ status: "done", result: { verdict: "accepted" } }), true);
  assert.equal(isFinished({ status: "running", result: null }), false);
  assert.equal(isFinished({ status: "running", result: { verdict: "error" } }), true);
});

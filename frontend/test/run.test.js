import assert from "node:assert/strict";
import { test } from "node:test";

import { LATE_EVENTS_MS, Run } from "../src/run.js";

function shownRun() {
  const shown = [];
  const timers = [];
  const view = {
    addEvents() {},
    setStatus() {},
    showVerdict() {},
    showGoals() {},
    showCompileInfo: (ev) => shown.push(ev),
  };
  const run = new Run({ id: "r1", view, editor: {}, figures: {}, setTimer: (fn, ms) => timers.push({ fn, ms }) });
  const socket = { closed: false, close() { this.closed = true; } };
  run.socket = socket;
  return { run, shown, timers, socket };
}

const event = (ev) => JSON.stringify({ type: "event", event: ev });

test("a listing told after done, numbered before it, is still shown on the open page", () => {
  const { run, shown, timers, socket } = shownRun();
  run.onMessage(event({ type: "compiled", seq: 3, registers: 16 }));
  run.onMessage(event({ type: "done", seq: 5, verdict: "accepted", message: "1 check passed" }));
  assert.equal(socket.closed, false); // still listening for the CPU tier's late SASS
  run.onMessage(event({ type: "compiled", seq: 4, registers: 16, sass_excerpt: "FADD R9, R4, R3 ;" }));
  assert.equal(shown.at(-1).sass_excerpt, "FADD R9, R4, R3 ;");
  assert.equal(timers.length, 1);
  assert.equal(timers[0].ms, LATE_EVENTS_MS);
  timers[0].fn();
  assert.equal(socket.closed, true);
});

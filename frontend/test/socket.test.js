import assert from "node:assert/strict";
import { test } from "node:test";

import { backoffDelay, ReconnectingSocket, withAfter } from "../src/socket.js";

class FakeSocket {
  static made = [];
  constructor(url) {
    this.url = url;
    this.closed = false;
    FakeSocket.made.push(this);
  }
  close() {
    this.closed = true;
  }
  serverSends(data) {
    this.onmessage({ data });
  }
  drop(code = 1006) {
    this.onclose({ code, reason: "" });
  }
}

function fakeTimers() {
  const pending = [];
  return {
    pending,
    setTimer: (fn, ms) => {
      pending.push({ fn, ms });
      return pending.length;
    },
    clearTimer: () => {
      pending.length = 0;
    },
    fire() {
      const next = pending.shift();
      next.fn();
      return next.ms;
    },
  };
}

test("it doubles the delay up to the cap", () => {
  const opts = { baseDelay: 500, maxDelay: 4000, random: () => 1 };
  assert.deepEqual([0, 1, 2, 3, 4].map((a) => backoffDelay(a, opts)), [500, 1000, 2000, 4000, 4000]);
  assert.equal(backoffDelay(0, { baseDelay: 500, random: () => 0 }), 250);
});

test("it adds after=<seq> to the reconnect URL", () => {
  assert.equal(withAfter("ws://h/ws/submissions/3/", 7), "ws://h/ws/submissions/3/?after=7");
  assert.equal(withAfter("ws://h/x?a=1", 7), "ws://h/x?a=1&after=7");
  assert.equal(withAfter("ws://h/x", null), "ws://h/x");
});

test("it reconnects after a drop, asking for events after the last seq", () => {
  FakeSocket.made = [];
  const timers = fakeTimers();
  const got = [];
  let lastSeq = null;
  const sock = new ReconnectingSocket((attempt) => (attempt === 0 ? "ws://h/s/1/" : withAfter("ws://h/s/1/", lastSeq)), {
    WebSocketImpl: FakeSocket,
    setTimer: timers.setTimer,
    clearTimer: timers.clearTimer,
    random: () => 1,
    onMessage: (d) => {
      got.push(d);
      lastSeq = 4;
    },
  }).start();
  FakeSocket.made[0].serverSends("snapshot");
  FakeSocket.made[0].drop();
  assert.equal(timers.pending.length, 1);
  assert.equal(timers.fire(), 500);
  assert.equal(FakeSocket.made[1].url, "ws://h/s/1/?after=4");
  FakeSocket.made[1].drop();
  assert.equal(timers.fire(), 1000, "closes without a message in between back off further");
  FakeSocket.made[2].serverSends("snapshot again");
  FakeSocket.made[2].drop();
  assert.equal(timers.fire(), 500, "a message resets the backoff");
  sock.close();
  assert.equal(FakeSocket.made[3].closed, true);
  assert.deepEqual(got, ["snapshot", "snapshot again"]);
});

test("it gives up when the application refuses the socket", () => {
  FakeSocket.made = [];
  const timers = fakeTimers();
  let refused = null;
  new ReconnectingSocket(() => "ws://h/s/2/", {
    WebSocketImpl: FakeSocket,
    setTimer: timers.setTimer,
    clearTimer: timers.clearTimer,
    onGiveUp: (code) => {
      refused = code;
    },
  }).start();
  FakeSocket.made[0].drop(4403);
  assert.equal(refused, 4403);
  assert.equal(timers.pending.length, 0);
});

test("it stops reconnecting once closed", () => {
  FakeSocket.made = [];
  const timers = fakeTimers();
  const sock = new ReconnectingSocket(() => "ws://h/s/3/", {
    WebSocketImpl: FakeSocket,
    setTimer: timers.setTimer,
    clearTimer: timers.clearTimer,
  }).start();
  sock.close();
  FakeSocket.made[0].drop(1000);
  assert.equal(timers.pending.length, 0);
});

import assert from "node:assert/strict";
import { test } from "node:test";

import { chooseDraft, Drafts, draftKey, readRecord } from "../src/drafts.js";

class MemoryStorage {
  constructor() {
    this.items = new Map();
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.items.set(key, String(value));
  }
}

const SERVER = { source: "from the lab machine", saved_at: "2026-12-06T15:00:00+00:00" };

test("with no server copy, this browser's draft opens and is sent when it is more than the starter", () => {
  const local = { source: "mine", savedAt: null, dirty: true };
  assert.deepEqual(chooseDraft(local, null, "starter"), { source: "mine", push: true, keep: null });
  assert.equal(chooseDraft({ ...local, source: "starter" }, null, "starter").push, false);
  assert.equal(chooseDraft(null, null, "starter").source, null);
});

test("in a new browser the server's copy opens", () => {
  const chosen = chooseDraft(null, SERVER, "starter");
  assert.equal(chosen.source, SERVER.source);
  assert.equal(chosen.keep, null);
  assert.equal(chosen.savedAt, SERVER.saved_at);
});

test("a newer server copy wins and this browser's older copy is kept in the history", () => {
  const local = { source: "typed here yesterday", savedAt: "2026-12-05T09:00:00+00:00", dirty: false };
  const chosen = chooseDraft(local, SERVER, "starter");
  assert.equal(chosen.source, SERVER.source);
  assert.deepEqual(chosen.keep, { source: "typed here yesterday", note: "this browser's copy" });
});

test("edits made on top of the server's very copy win and are sent", () => {
  const local = { source: "one more line", savedAt: SERVER.saved_at, dirty: true };
  assert.deepEqual(chooseDraft(local, SERVER, "starter"), { source: "one more line", push: true, keep: null });
});

test("an older page's plain-text draft is read as never synced, and loses to the server but is kept", () => {
  assert.deepEqual(readRecord("x = 1"), { source: "x = 1", savedAt: null, dirty: true });
  const chosen = chooseDraft(readRecord("x = 1"), SERVER, "starter");
  assert.equal(chosen.source, SERVER.source);
  assert.equal(chosen.keep.source, "x = 1");
});

test("a save marks the draft changed; a sync of the same text marks it saved, of older text keeps it changed", () => {
  const storage = new MemoryStorage();
  const drafts = new Drafts("vector-add", storage);
  drafts.save("numba", "a");
  assert.deepEqual(drafts.record("numba"), { source: "a", savedAt: null, dirty: true });
  drafts.synced("numba", "a", "t1");
  assert.deepEqual(drafts.record("numba"), { source: "a", savedAt: "t1", dirty: false });
  drafts.save("numba", "ab");
  drafts.synced("numba", "a", "t2"); // the answer to an older save arrives after a newer edit
  assert.deepEqual(drafts.record("numba"), { source: "ab", savedAt: "t2", dirty: true });
  assert.equal(drafts.load("numba"), "ab");
  assert.ok(storage.getItem(draftKey("vector-add", "numba")).includes('"v":2'));
});

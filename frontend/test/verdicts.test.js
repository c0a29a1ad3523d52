// One label per verdict, shown the same on the badge, the status line, the history and the events.
import assert from "node:assert/strict";
import test from "node:test";

import { VERDICT_LABELS, VERDICTS, verdictLabel } from "../src/format.js";

test("every verdict has exactly one label, and labels are distinct", () => {
  for (const v of VERDICTS) assert.ok(VERDICT_LABELS[v], v);
  assert.equal(new Set(Object.values(VERDICT_LABELS)).size, VERDICTS.length);
  assert.equal(verdictLabel("not_run"), "Compiled, not run");
  assert.equal(verdictLabel("something_new"), "something new");
});

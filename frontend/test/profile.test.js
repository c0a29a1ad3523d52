import assert from "node:assert/strict";
import { test } from "node:test";

import { profilable, profileWords } from "../src/profile.js";

test("only an accepted run on a GPU offers an Nsight Compute report", () => {
  assert.equal(profilable({ verdict: "accepted", backend: "cuda" }), true);
  assert.equal(profilable({ verdict: "accepted", backend: "sim" }), false);
  assert.equal(profilable({ verdict: "wrong_answer", backend: "cuda" }), false);
  assert.equal(profilable(null), false);
});

test("a queued profile says where it runs, and a finished one reads as the report", () => {
  assert.match(profileWords({ state: "queued" }), /queued on the profile lane/);
  assert.match(profileWords({ available: false, reason: "ncu is not installed" }), /not profiled.*ncu is not installed/);
});

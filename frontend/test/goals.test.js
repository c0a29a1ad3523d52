import assert from "node:assert/strict";
import { test } from "node:test";

import { goalText } from "../src/format.js";

test("a missed goal reads its measurement and then its hint", () => {
  const goal = { met: false, reason: "coalesced: 32 sectors per request, target at most 4", hint: "line 8: see coalescing." };
  assert.equal(goalText(goal), "coalesced: 32 sectors per request, target at most 4. line 8: see coalescing.");
});

test("a met goal reads its measurement alone", () => {
  assert.equal(goalText({ met: true, reason: "no bank conflicts: 1-way", hint: "" }), "no bank conflicts: 1-way");
});

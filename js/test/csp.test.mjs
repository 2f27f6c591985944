// Pages whose Content-Security-Policy forbids making functions from strings: the learned decoder
// then builds objects field by field, and every vector must still decode as the spec says. Node's
// --disallow-code-generation-from-strings refuses `new Function` as such a page does.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

test("every vector decodes where functions cannot be made from strings", () => {
  const vectors = new URL("./vectors.test.mjs", import.meta.url).pathname;
  const probe = spawnSync(process.execPath, ["--disallow-code-generation-from-strings", "-e", "new Function('return 1')"]);
  assert.notEqual(probe.status, 0, "the flag did not forbid new Function");
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT; // else the run reports to this runner instead of on stdout
  const run = spawnSync(process.execPath, ["--disallow-code-generation-from-strings", "--test", "--test-reporter=tap", vectors], { encoding: "utf8", env });
  assert.equal(run.status, 0, run.stdout.slice(-3000) + run.stderr.slice(-3000));
  assert.match(run.stdout, /^# pass [1-9]/m);
  assert.match(run.stdout, /^# fail 0$/m);
});

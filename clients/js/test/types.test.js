// The TypeScript declarations: the generated message types match docs/protocol.schema.json
// (re-run `npm run gen-types` after the schema changes), and the hand-written API compiles
// under `tsc --strict` the way the README uses it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

import { OUTPUT_PATH, SCHEMA_PATH, render } from "../scripts/gen-types.js";

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("types/protocol.d.ts is generated from the current docs/protocol.schema.json", async () => {
  const committed = await readFile(OUTPUT_PATH, "utf8");
  const fresh = await render();
  assert.ok(committed === fresh, "types/protocol.d.ts is stale: run `npm run gen-types` in clients/js");
  for (const name of ["Snapshot", "Update", "Ack", "Reject", "Presence", "Pong", "Act", "Join", "Hello"]) {
    assert.match(committed, new RegExp(`export interface ${name} \\{`));
  }
  // A change of the schema shows: a new field of Ack gives other declarations.
  const schema = JSON.parse(await readFile(SCHEMA_PATH, "utf8"));
  schema.$defs.Ack.properties.extra_field = { type: "integer" };
  const dir = await mkdtemp(path.join(tmpdir(), "crib-schema-"));
  try {
    await writeFile(path.join(dir, "schema.json"), JSON.stringify(schema));
    const changed = await render(path.join(dir, "schema.json"));
    assert.notEqual(changed, committed);
    assert.match(changed, /extra_field\?: number/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the declarations compile with tsc --strict, and a wrong use does not", { timeout: 60_000 }, () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const run = (project) =>
    spawnSync(process.execPath, [tsc, "-p", project], { cwd: PACKAGE_DIR, encoding: "utf8", timeout: 60_000 });
  const done = run("test/typecheck");
  assert.equal(done.status, 0, done.stdout + done.stderr);
});

test("package.json publishes what the code needs and nothing it does not", async () => {
  const pkg = JSON.parse(await readFile(path.join(PACKAGE_DIR, "package.json"), "utf8"));
  assert.equal(pkg.type, "module");
  assert.deepEqual(pkg.files, ["src/", "types/", "README.md"]);
  assert.equal(pkg.exports["."].types, "./types/index.d.ts");
  assert.deepEqual(pkg.dependencies ?? {}, {}, "no runtime dependency: ws and @msgpack/msgpack are optional peers");
  assert.equal(pkg.peerDependenciesMeta.ws.optional, true);
  assert.equal(pkg.peerDependenciesMeta["@msgpack/msgpack"].optional, true);
  const dry = spawnSync("npm", ["pack", "--dry-run", "--json"], { cwd: PACKAGE_DIR, encoding: "utf8" });
  assert.equal(dry.status, 0, dry.stderr);
  const files = JSON.parse(dry.stdout)[0].files.map((f) => f.path).sort();
  for (const needed of ["README.md", "package.json", "src/index.js", "src/client.js", "src/patch.js", "src/codec.js", "types/index.d.ts", "types/protocol.d.ts"]) {
    assert.ok(files.includes(needed), `${needed} is published`);
  }
  assert.ok(!files.some((f) => f.startsWith("test/") || f.startsWith("node_modules/")), files.join(", "));
});

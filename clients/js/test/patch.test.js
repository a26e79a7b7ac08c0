// RFC 6902 JSON Patch: the operations, their failures, and the promises applyPatch makes
// (the input is never changed; unchanged parts are shared). The cases follow the RFC's
// appendix examples; the last test replays a real server's patches.

import { test } from "node:test";
import assert from "node:assert/strict";

import { PatchError, applyPatch, getPointer, parsePointer } from "../src/patch.js";
import { ServerProcess } from "./helpers/server.js";
import { testClient, waitFor } from "./helpers/play.js";

const ok = (doc, ops, expected) => assert.deepEqual(applyPatch(doc, ops), expected);
const fails = (doc, ops) => assert.throws(() => applyPatch(doc, ops), PatchError);

test("add: object members, array positions, '-' appends, nested values, the root", () => {
  ok({ foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }], { foo: "bar", baz: "qux" });
  ok({ foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }], { foo: ["bar", "qux", "baz"] });
  ok({ foo: ["bar"] }, [{ op: "add", path: "/foo/-", value: ["abc", "def"] }], { foo: ["bar", ["abc", "def"]] });
  ok({ foo: "bar" }, [{ op: "add", path: "/child", value: { grandchild: {} } }], { foo: "bar", child: { grandchild: {} } });
  ok({ foo: 1 }, [{ op: "add", path: "/foo", value: 2 }], { foo: 2 });
  ok(null, [{ op: "add", path: "", value: { a: 1 } }], { a: 1 });
  ok({ "": 1 }, [{ op: "add", path: "/", value: 2 }], { "": 2 });
  fails({ foo: "bar" }, [{ op: "add", path: "/baz/bat", value: "qux" }]);
  fails({ foo: [1] }, [{ op: "add", path: "/foo/2", value: 3 }]);
  fails({ foo: [1] }, [{ op: "add", path: "/foo/01", value: 3 }]);
  fails({ foo: "bar" }, [{ op: "add", path: "/baz" }]);
});

test("remove and replace need the target to exist", () => {
  ok({ baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }], { foo: "bar" });
  ok({ foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }], { foo: ["bar", "baz"] });
  ok({ baz: "qux", foo: "bar" }, [{ op: "replace", path: "/baz", value: "boo" }], { baz: "boo", foo: "bar" });
  ok({ a: [1, 2] }, [{ op: "replace", path: "/a/0", value: 9 }], { a: [9, 2] });
  ok(null, [{ op: "replace", path: "", value: { phase: "discard" } }], { phase: "discard" });
  fails({ foo: "bar" }, [{ op: "remove", path: "/nope" }]);
  fails({ a: [1] }, [{ op: "remove", path: "/a/1" }]);
  fails({ a: [1] }, [{ op: "remove", path: "/a/-" }]);
  fails({ foo: "bar" }, [{ op: "replace", path: "/nope", value: 1 }]);
  fails({ foo: "bar" }, [{ op: "remove", path: "" }]);
});

test("move, copy and test", () => {
  ok(
    { foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } },
    [{ op: "move", from: "/foo/waldo", path: "/qux/thud" }],
    { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } },
  );
  ok({ foo: ["all", "grass", "cows", "eat"] }, [{ op: "move", from: "/foo/1", path: "/foo/3" }], {
    foo: ["all", "cows", "eat", "grass"],
  });
  ok({ a: { b: 1 } }, [{ op: "copy", from: "/a", path: "/c" }], { a: { b: 1 }, c: { b: 1 } });
  ok({ baz: "qux", foo: ["a", 2, "c"] }, [
    { op: "test", path: "/baz", value: "qux" },
    { op: "test", path: "/foo/1", value: 2 },
  ], { baz: "qux", foo: ["a", 2, "c"] });
  ok({ a: { x: 1, y: [1, { z: 2 }] } }, [{ op: "test", path: "/a", value: { y: [1, { z: 2 }], x: 1 } }], {
    a: { x: 1, y: [1, { z: 2 }] },
  });
  ok({ "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: 10 }], { "/": 9, "~1": 10 });
  fails({ baz: "qux" }, [{ op: "test", path: "/baz", value: "bar" }]);
  fails({ a: "1" }, [{ op: "test", path: "/a", value: 1 }]);
  fails({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a/b/c" }]);
  fails({ a: 1 }, [{ op: "copy", from: "/nope", path: "/b" }]);
  fails({ a: 1 }, [{ op: "frobnicate", path: "/a" }]);
});

test("the input is never changed, a failing patch changes nothing, unchanged parts are shared", () => {
  const doc = { hand: ["5H", "6D"], scores: [1, 2], show: { counted: [], hands: { 0: ["AS"] } } };
  const frozen = JSON.stringify(doc);
  const out = applyPatch(doc, [
    { op: "add", path: "/hand/-", value: "KC" },
    { op: "replace", path: "/scores/1", value: 4 },
  ]);
  assert.equal(JSON.stringify(doc), frozen);
  assert.deepEqual(out.hand, ["5H", "6D", "KC"]);
  assert.deepEqual(out.scores, [1, 4]);
  assert.equal(out.show, doc.show, "an untouched subtree is the same object");
  assert.throws(
    () => applyPatch(doc, [{ op: "replace", path: "/scores/0", value: 9 }, { op: "remove", path: "/nope" }]),
    (err) => err instanceof PatchError && err.index === 1,
  );
  assert.equal(JSON.stringify(doc), frozen);
  // Data cannot reach prototypes.
  const weird = applyPatch({}, [{ op: "add", path: "/__proto__", value: { polluted: true } }]);
  assert.equal({}.polluted, undefined);
  assert.deepEqual(Object.keys(weird), ["__proto__"]);
});

test("JSON Pointers: escapes, bad pointers", () => {
  assert.deepEqual(parsePointer(""), []);
  assert.deepEqual(parsePointer("/a~1b/m~0n/"), ["a/b", "m~n", ""]);
  assert.throws(() => parsePointer("a"), PatchError);
  assert.throws(() => parsePointer("/a~2"), PatchError);
  assert.equal(getPointer({ a: [0, { b: 7 }] }, "/a/1/b"), 7);
  assert.throws(() => getPointer({ a: [] }, "/a/0"), PatchError);
});

test("a real server's patches rebuild the view it sends in a fresh snapshot", { timeout: 20_000 }, async () => {
  const server = await ServerProcess.start();
  const a = testClient(server.ws, "Ann");
  const b = testClient(server.ws, "Bob");
  try {
    const { room } = await a.createRoom({ options: { players: 2 } });
    await a.join(room, 0);
    await b.join(room, 1);
    await waitFor(a, (c) => c.version === 2, "the game start");
    assert.equal(a.view.hand.length, 6, "the first patch replaced the whole (null) view");
    await a.act({ type: "discard", cards: a.view.hand.slice(0, 2) });
    await b.act({ type: "discard", cards: b.view.hand.slice(0, 2) });
    await waitFor(a, (c) => c.version === 4, "both discards");
    const fresh = testClient(server.ws, "Ann", { playerToken: a.playerToken });
    const snap = await fresh.join(room, 0, { token: a.seatToken });
    await fresh.close();
    assert.equal(snap.version, a.version);
    assert.deepEqual(a.view, snap.view);
  } finally {
    await Promise.all([a.close(), b.close()]);
    await server.stop();
  }
});

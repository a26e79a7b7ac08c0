// A store outage under an act, for real: the server runs on a Redis of the test's own.
// With Redis paused (CLIENT PAUSE WRITE) the server's commit gets no answer in time and
// the act is answered `outcome_unknown`; with Redis stopped the server cannot even connect
// and answers `store_unavailable`. The client re-sends the same action id with backoff
// until the store answers again, and each action lands in the room's log exactly once.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";

import { OwnRedis, ServerProcess, randomPrefix, roomIds, roomLog } from "./helpers/server.js";
import { chooseAction, nextEvent, record, rng, testClient, waitFor } from "./helpers/play.js";

let redis;
let server;
const prefix = randomPrefix();
const figures = [];

before(async () => {
  redis = await OwnRedis.start();
  // No rooms budget: with it, a frozen Redis meets the budget's own script first, and the
  // creation below would not reach the store (store_unavailable, not the lost answer this
  // file is about).
  server = await ServerProcess.start({ redisUrl: redis.url, keyPrefix: prefix, env: { CRIBBAGE_ROOMS_PER_MINUTE: "0" } });
});

after(async () => {
  await server?.stop();
  await redis?.destroy();
  if (figures.length) console.log(`# ${figures.join("; ")}`);
});

test("outcome_unknown (Redis paused) and store_unavailable (Redis stopped) are retried with the same id; applied once", { timeout: 40_000 }, async () => {
  const retry = { baseDelayMs: 200, maxDelayMs: 1000, maxRetries: 20 };
  const host = testClient(server.ws, "Ann", { actRetry: retry });
  const guest = testClient(server.ws, "Bob", { actRetry: retry, encoding: "msgpack" });
  const logs = [record(host), record(guest)];
  const random = rng(51);
  try {
    const created = await host.createRoom({ options: { players: 2, target: 61 } });
    const room = created.room;
    await host.join(room, 0);
    await guest.join(room, 1);
    await waitFor(host, (c) => c.version === 2, "the game start");

    // Writes paused: the commit's answer never comes within the server's Redis timeout
    // (4 s: long enough that a first try refused `busy` by admission control on a loaded
    // machine, and sent again, still meets the pause).
    redis.pause(4000, "WRITE");
    const first = await host.act(chooseAction(host.view, random), { actionId: "outage-write" });
    assert.equal(first.type, "ack");
    assert.equal(first.version, 3);
    assert.ok(logs[0].retries.length >= 1, "the act was retried");
    // Every retry is of the same id, for an answer that says "send it again": besides the
    // outage's own codes, `busy` (admission control, when the suite's load makes the
    // server's loop late) applied nothing either. The room's log below shows it once.
    assert.ok(logs[0].retries.every((r) => r.actionId === "outage-write" && ["outcome_unknown", "store_unavailable", "busy"].includes(r.code)),
      JSON.stringify(logs[0].retries));
    assert.ok(logs[0].retries.some((r) => r.code === "outcome_unknown"),
      `a write whose outcome was unknown: ${JSON.stringify(logs[0].retries)}`);

    // Redis stopped: nothing can be sent, so nothing was done. Started again once the
    // client has been told so.
    await redis.stop();
    const pending = guest.act(chooseAction(guest.view, random), { actionId: "outage-all" });
    await nextEvent(guest, "act_retry", (r) => r.code === "store_unavailable");
    await redis.start();
    const second = await pending;
    assert.equal(second.type, "ack");
    assert.equal(second.version, 4);
    assert.ok(logs[1].retries.some((r) => r.code === "store_unavailable"), "a store that could not be reached");

    await waitFor(host, (c) => c.version === 4, "the host's update");
    const log = roomLog(redis.url, prefix, room);
    assert.deepEqual(log.map((e) => [e.version, e.id]), [
      [1, null],
      [2, null],
      [3, "outage-write"],
      [4, "outage-all"],
    ]);
    const sends = (l, id) => l.sent.filter((m) => m.type === "act" && m.action_id === id).length;
    figures.push(
      `outage: write pause -> ${logs[0].retries.map((r) => r.code).join(",")} then ack${first.duplicate ? " (duplicate)" : ""} ` +
        `after ${sends(logs[0], "outage-write")} sends; Redis stopped -> ${logs[1].retries.map((r) => r.code).join(",")} then ack after ` +
        `${sends(logs[1], "outage-all")} sends`,
    );
  } finally {
    await Promise.all([host.close(), guest.close()]);
  }
});

test("createRoom while Redis is frozen: sent again with the same request_id until it answers; one room, its computer seated once", { timeout: 40_000 }, async () => {
  const host = testClient(server.ws, "Cy", { actRetry: { baseDelayMs: 300, maxDelayMs: 1000, maxRetries: 20 } });
  const retries = [];
  host.on("create_retry", (r) => retries.push(r));
  try {
    await host.connect();
    // A room first: the server's write lane then keeps a connection, so the next creation
    // is sent to the frozen Redis (and made when it thaws) — its answer is what is lost.
    const warm = await host.createRoom({ options: { players: 2 } });
    const before = roomIds(redis.url, prefix);
    assert.ok(before.includes(warm.room));
    redis.freeze();
    let created;
    try {
      const pending = host.createRoom({ options: { players: 2, target: 61 }, computers: { 1: "easy" } });
      await nextEvent(host, "create_retry");
      await nextEvent(host, "create_retry");
      redis.thaw();
      created = await pending;
    } finally {
      redis.thaw();
    }
    assert.ok(retries.length >= 2, "the creation was sent again");
    assert.equal(new Set(retries.map((r) => r.requestId)).size, 1, "always with the same request_id");
    // Usually the write reaches the frozen Redis and its answer is lost (outcome_unknown);
    // on a loaded machine the server may meet the freeze on a fresh connection first
    // (store_unavailable). Either way the creation must be sent again with the same
    // request_id and made once, which is what follows.
    assert.ok(retries.every((r) => ["outcome_unknown", "store_unavailable", "busy"].includes(r.code)),
      `retried for an outage only: ${retries.map((r) => r.code)}`);
    const after = roomIds(redis.url, prefix);
    assert.deepEqual(after.sort(), [...before, created.room].sort(), "exactly one more room");
    assert.deepEqual(created.computers, { 1: "easy" });
    assert.deepEqual(roomLog(redis.url, prefix, created.room).map((e) => e.version), [1], "the computer sat down once");
    const again = await host.createRoom({ options: { players: 2, target: 61 }, computers: { 1: "easy" }, requestId: retries[0].requestId });
    assert.equal(again.room, created.room);
    assert.equal(again.creator_token, created.creator_token);
    figures.push(`createRoom, Redis frozen: ${retries.map((r) => r.code).join(",")} then room_created; 1 room`);
  } finally {
    await host.close();
  }
});

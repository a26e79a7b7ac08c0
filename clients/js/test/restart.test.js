// Server restarts under a game in progress. With Redis (rooms survive the process): a
// SIGKILL mid-game (the clients see 1006) and a graceful SIGTERM (uvicorn closes with
// 1012); the server comes back on the same port, the clients reconnect with backoff,
// resume their seats with their tokens, re-send what was unanswered, and the game ends
// with every acked action in the room's log exactly once. With the in-memory store the
// room is gone after a restart: the failed resume is surfaced, not retried forever.

import { test } from "node:test";
import assert from "node:assert/strict";

import { REDIS_URL, ServerProcess, deleteKeys, randomPrefix, roomLog } from "./helpers/server.js";
import { nextEvent, playSeat, record, rng, testClient, waitFor } from "./helpers/play.js";
import { auditGame } from "./helpers/audit.js";

const figures = [];
test.after(() => {
  if (figures.length) console.log(`# ${figures.join("; ")}`);
});

async function gameThroughRestart(signal, seeds) {
  const prefix = randomPrefix();
  const server = await ServerProcess.start({ redisUrl: REDIS_URL, keyPrefix: prefix });
  const host = testClient(server.ws, "Ann", { encoding: "msgpack" });
  const guest = testClient(server.ws, "Bob");
  const logs = [record(host), record(guest)];
  let restart = null;
  let restartedAt = null;
  try {
    const created = await host.createRoom({ options: { players: 2, target: 61 } });
    const room = created.room;
    await host.join(room, 0);
    await guest.join(room, 1);
    // Mid-game, while both players are acting, the server goes away and comes back. From
    // then on the players make no new move until their connection has dropped (a
    // graceful shutdown takes a moment, and the game must not end before it).
    let hold = null;
    const lost = (c) => (c.connectionState === "open" ? nextEvent(c, "state", (s) => s.state !== "open") : null);
    host.on("view", ({ version }) => {
      if (restart || version < 20) return;
      restartedAt = version;
      hold = Promise.all([lost(host), lost(guest)]);
      restart = (async () => {
        await server.kill(signal);
        await server.start();
      })();
    });
    const gate = () => hold;
    const answers = await Promise.all([
      playSeat(host, rng(seeds[0]), { gate }),
      playSeat(guest, rng(seeds[1]), { gate }),
    ]);
    await restart;
    const summary = await server.roomSummary(room);
    const ids = auditGame({ clients: [host, guest], logs, answerLists: answers, summary, seatedVersion: 2, target: 61 });
    // The room's log: one entry per version, each acked action id exactly once, at the
    // version its ack named.
    const log = roomLog(REDIS_URL, prefix, room);
    assert.deepEqual(
      log.map((e) => e.version),
      Array.from({ length: summary.version }, (_, i) => i + 1),
    );
    const logged = log.filter((e) => e.id);
    assert.equal(logged.length, ids.size);
    for (const entry of logged) assert.deepEqual([...ids.get(entry.id)], [entry.version], `log entry of ${entry.id}`);
    const attempts = logs.map((l) => l.closes.filter((c) => c.willReconnect).length);
    const resumes = logs.map((l) => l.states.filter((st, i) => st === "open" && l.states[i - 1] === "reconnecting").length);
    const duplicates = answers.flat().filter((a) => a.answer.type === "ack" && a.answer.duplicate).length;
    const resent = logs.map((l) => {
      const sends = new Map();
      for (const m of l.sent) if (m.type === "act") sends.set(m.action_id, (sends.get(m.action_id) || 0) + 1);
      return [...sends.values()].filter((n) => n > 1).length;
    });
    figures.push(
      `${signal} at v${restartedAt}: game to v${summary.version}, ${ids.size} acked actions, ` +
        `connection losses ${attempts.join("+")} (resumed ${resumes.join("+")}), acts re-sent ${resent.join("+")}, duplicate acks ${duplicates}`,
    );
    return { logs, summary };
  } finally {
    await Promise.all([host.close(), guest.close()]);
    await server.stop();
    deleteKeys(REDIS_URL, prefix);
  }
}

test("SIGKILL mid-game: the clients reconnect, resume and finish; every acked action applied once", { timeout: 40_000 }, async () => {
  const { logs } = await gameThroughRestart("SIGKILL", [41, 42]);
  for (const log of logs) {
    assert.ok(log.closes.some((c) => c.code === 1006 && c.willReconnect), "a dropped connection (1006)");
    const back = log.states.indexOf("reconnecting");
    assert.ok(back >= 0 && log.states.indexOf("open", back) > back, "reconnecting, then open again");
    assert.equal(log.errors.length, 0);
  }
});

test("SIGTERM (graceful restart): close code 1012, then a resume and the game's end", { timeout: 40_000 }, async () => {
  const { logs } = await gameThroughRestart("SIGTERM", [43, 44]);
  for (const log of logs) {
    assert.equal(log.closes.find((c) => c.willReconnect).code, 1012, "uvicorn says: service restart");
    assert.ok(log.states.includes("reconnecting"));
  }
});

test("in-memory store: a resume refused after a restart is reported, not retried forever", { timeout: 60_000 }, async () => {
  const server = await ServerProcess.start();
  const client = testClient(server.ws, "Ann");
  const log = record(client);
  try {
    const created = await client.createRoom({ options: { players: 2, target: 61 } });
    await client.join(created.room, 0);
    const failed = nextEvent(client, "error", (e) => e.ref === "join");
    await server.kill("SIGTERM");
    await server.start();
    const error = await failed;
    // An in-memory server keeps its token secret in memory too: the new process did not
    // issue the seat token, so the resume is refused with bad_token before the room is
    // even looked up (the room is gone as well).
    assert.equal(error.code, "bad_token");
    assert.equal(error.fatal, false);
    await waitFor(client, (c) => c.connectionState === "open", "open again");
    assert.equal(client.room, null);
    assert.equal(client.view, null);
    assert.equal(log.closes[0].code, 1012);
    // The connection is usable: a new room can be made and joined.
    const again = await client.createRoom({ options: { players: 2 } });
    const snap = await client.join(again.room, 0);
    assert.equal(snap.status, "waiting");
  } finally {
    await client.close();
    await server.stop();
  }
});

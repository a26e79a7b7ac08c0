// What the client repairs on its own, against a real server (in-memory store), with frames
// lost or connections cut at chosen moments by a WebSocketImpl wrapper (helpers/faulty.js):
// an act re-sent after a drop is answered `duplicate`; a version gap, a patch that does not
// apply and a missed last update (seen through a pong) are repaired by resync; retryable
// rejects are retried up to the limit and then handed to the app; fatal close codes and
// the app's own close() are not retried.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";

import { CribbageError } from "../src/index.js";
import { ServerProcess } from "./helpers/server.js";
import { chooseAction, nextEvent, playSeat, record, rng, testClient, waitFor } from "./helpers/play.js";
import { faultyWebSocket } from "./helpers/faulty.js";
import { auditGame } from "./helpers/audit.js";

let server;
const figures = [];

before(async () => {
  server = await ServerProcess.start();
});

after(async () => {
  await server?.stop();
  if (figures.length) console.log(`# ${figures.join("; ")}`);
});

async function table(hostExtra = {}, guestExtra = {}) {
  const host = testClient(server.ws, "Ann", hostExtra);
  const guest = testClient(server.ws, "Bob", guestExtra);
  const created = await host.createRoom({ options: { players: 2, target: 61 } });
  await host.join(created.room, 0);
  await guest.join(created.room, 1);
  await waitFor(host, (c) => c.version === 2, "the game start");
  return { room: created.room, host, guest };
}

/** The one of `clients` that has a move, and makes it (once they all see the same version). */
async function oneMove(clients, random) {
  const latest = Math.max(...clients.map((c) => c.version));
  await Promise.all(clients.map((c) => waitFor(c, (x) => x.version === latest, "the same version")));
  for (const c of clients) {
    const action = chooseAction(c.view, random);
    if (action) return { client: c, answer: await c.act(action) };
  }
  throw new Error("nobody has a move");
}

test("an act whose ack is lost in a dropped connection is re-sent with the same id and answered duplicate", { timeout: 60_000 }, async () => {
  const hooks = { armed: null, acts: 0 };
  hooks.outgoing = (frame) => {
    if (frame.type === "act" && ++hooks.acts === 3) hooks.armed = frame.action_id;
    return "pass";
  };
  hooks.incoming = (frame) => {
    if (!hooks.armed) return "pass";
    if (frame.type === "ack" && frame.action_id === hooks.armed) {
      hooks.cut = hooks.armed;
      hooks.armed = null;
      return "kill"; // the ack never arrives; the connection drops
    }
    return frame.type === "update" ? "drop" : "pass"; // nor does the act's own update
  };
  const { room, host, guest } = await table({ WebSocketImpl: faultyWebSocket(hooks) });
  const logs = [record(host), record(guest)];
  try {
    const answers = await Promise.all([playSeat(host, rng(11)), playSeat(guest, rng(12))]);
    const cut = hooks.cut;
    assert.ok(cut, "the connection was cut after an applied act");
    const resent = logs[0].sent.filter((m) => m.type === "act" && m.action_id === cut);
    assert.equal(resent.length, 2, "sent before the drop and again after the resume, same id");
    const answer = answers[0].find((a) => a.answer.action_id === cut).answer;
    assert.equal(answer.type, "ack");
    assert.equal(answer.duplicate, true);
    assert.equal(hooks.sockets.length, 2, "one reconnect");
    assert.equal(logs[0].closes[0].code, 1006);
    assert.equal(logs[0].closes[0].willReconnect, true);
    assert.deepEqual(logs[0].states.slice(0, 2), ["reconnecting", "open"]);
    const summary = await server.roomSummary(room);
    auditGame({ clients: [host, guest], logs, answerLists: answers, summary, seatedVersion: 2, target: 61 });
    figures.push(`duplicate test: game to v${summary.version}, act ${cut} acked duplicate at v${answer.version}`);
  } finally {
    await Promise.all([host.close(), guest.close()]);
  }
});

test("a version gap, a patch that does not apply and a missed last update are repaired by resync", { timeout: 60_000 }, async () => {
  const hostHooks = { mode: "pass" };
  hostHooks.incoming = (frame) => {
    if (frame.type !== "update" || hostHooks.mode === "pass") return "pass";
    const mode = hostHooks.mode;
    hostHooks.mode = "pass";
    if (mode === "drop") return "drop";
    // A patch that cannot apply: a failing test operation first.
    return { ...frame, patch: [{ op: "test", path: "/phase", value: "no such phase" }, ...frame.patch] };
  };
  const watchHooks = { mode: "pass" };
  watchHooks.incoming = (frame) => {
    if (frame.type === "update" && watchHooks.mode === "drop") {
      watchHooks.mode = "pass";
      return "drop";
    }
    return "pass";
  };
  const { room, host, guest } = await table({ WebSocketImpl: faultyWebSocket(hostHooks), pingIntervalMs: 0 });
  const watcher = testClient(server.ws, "Eve", { WebSocketImpl: faultyWebSocket(watchHooks), pingIntervalMs: 100, pongGraceMs: 200 });
  const logs = [record(host), record(guest), record(watcher)];
  const random = rng(21);
  try {
    await watcher.join(room, null);
    // 1. A gap: the host loses the guest's discard (v3); its own discard's update (v4)
    //    then comes after v2.
    hostHooks.mode = "drop";
    const guestDiscard = await guest.act(chooseAction(guest.view, random));
    assert.equal(guestDiscard.version, 3);
    const hostDiscard = await host.act(chooseAction(host.view, random));
    assert.equal(hostDiscard.type, "ack");
    assert.equal(logs[0].resyncs.length, 1);
    assert.equal(logs[0].resyncs[0].reason, "gap");
    assert.equal(logs[0].resyncs[0].expected, 3);
    assert.equal(logs[0].resyncs[0].received, 4);
    await waitFor(host, (c) => c.version === 4, "the host's snapshot");
    // The repaired view is the one a fresh connection of the same seat gets.
    const fresh = testClient(server.ws, "Ann", { playerToken: host.playerToken });
    const freshSnap = await fresh.join(room, 0, { token: host.seatToken });
    await fresh.close();
    assert.equal(freshSnap.version, 4);
    assert.deepEqual(host.view, freshSnap.view);

    // 2. A patch that does not apply: the view stays as it was and a resync repairs it.
    hostHooks.mode = "corrupt";
    const before = host.view;
    await oneMove([host, guest], random);
    // Each waits for its own v5: a predicate on the other client would be checked only on
    // this one's events, and the host's resync may land before the guest's update does.
    await Promise.all([
      waitFor(host, (c) => c.version === 5, "the host after the bad patch"),
      waitFor(guest, (c) => c.version === 5, "the guest's v5"),
    ]);
    assert.equal(logs[0].resyncs.length, 2);
    assert.equal(logs[0].resyncs[1].reason, "patch_failed");
    assert.notEqual(host.view, before);
    assert.equal(host.view.count, guest.view.count);

    // 3. A missed last update: nothing follows it, so only the pong's version tells.
    //    (The watcher must have v5 first, or the drop would take v5 and v6 would show a gap.)
    await waitFor(watcher, (c) => c.version === 5, "the watcher at v5");
    watchHooks.mode = "drop";
    const resync = nextEvent(watcher, "resync");
    await oneMove([host, guest], random);
    const seen = await resync;
    assert.equal(seen.reason, "behind");
    assert.equal(seen.serverVersion, 6);
    await waitFor(watcher, (c) => c.version === 6, "the watcher's snapshot");
    assert.deepEqual(watcher.view.scores, guest.view.scores);

    // The game goes on to its end with views that agree.
    const answers = await Promise.all([playSeat(host, rng(22)), playSeat(guest, rng(23))]);
    await waitFor(watcher, (c) => c.status === "game_over" && c.version === host.version, "the watcher's game over");
    const summary = await server.roomSummary(room);
    assert.equal(summary.version, host.version);
    assert.deepEqual(host.view.scores, watcher.view.scores);
    assert.deepEqual(logs[1].resyncs, [], "the guest lost nothing");
    assert.equal(logs[0].resyncs.length, 2);
    assert.equal(logs[2].resyncs.length, 1);
    figures.push(`resync test: game to v${summary.version}, ${answers.flat().length} more acts`);
  } finally {
    await Promise.all([host.close(), guest.close(), watcher.close()]);
  }
});

test("retryable rejects are retried with the same id up to the limit, then handed to the app", { timeout: 60_000 }, async () => {
  const hooks = { fake: null, loseAck: null };
  hooks.outgoing = (frame) => {
    if (frame.type === "act" && hooks.fake) {
      const reply = { type: "reject", action_id: frame.action_id, code: hooks.fake, message: "simulated outage" };
      if (hooks.retryAfter) reply.retry_after = hooks.retryAfter;
      return { reply };
    }
    return "pass";
  };
  hooks.incoming = (frame) => {
    // The act was applied but its answer is replaced: "outcome unknown".
    if (frame.type === "ack" && frame.action_id === hooks.loseAck) {
      hooks.loseAck = null;
      return { type: "reject", action_id: frame.action_id, code: "outcome_unknown", message: "simulated" };
    }
    return "pass";
  };
  const { host, guest } = await table({ WebSocketImpl: faultyWebSocket(hooks), actRetry: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 50 } });
  const log = record(host);
  const random = rng(31);
  try {
    // store_unavailable every time: three sends, then the reject is the answer.
    hooks.fake = "store_unavailable";
    const action = chooseAction(host.view, random);
    const first = await host.act(action, { actionId: "retry-test-1" });
    assert.equal(first.type, "reject");
    assert.equal(first.code, "store_unavailable");
    assert.deepEqual(log.retries.map((r) => [r.actionId, r.code, r.retry]), [
      ["retry-test-1", "store_unavailable", 1],
      ["retry-test-1", "store_unavailable", 2],
    ]);
    assert.equal(host.version, 2, "nothing was applied");
    // Sent again by the app with the same id once the store is back: applied now.
    hooks.fake = null;
    const second = await host.act(action, { actionId: "retry-test-1" });
    assert.equal(second.type, "ack");
    assert.equal(second.duplicate, false);
    assert.equal(second.version, 3);

    // busy with retry_after (the server's admission control): sent again no sooner than
    // retry_after, although the backoff alone would wait at most 50 ms.
    hooks.fake = "busy";
    hooks.retryAfter = 0.2;
    // (The wrapper answers the act before the server sees it: its content does not matter.)
    const busy = await host.act(action, { actionId: "retry-test-busy" });
    assert.equal(busy.code, "busy");
    // This act's retries (by its id: the log is the connection's, and every retry it holds
    // is printed if this fails).
    assert.deepEqual(log.retries.filter((r) => r.actionId === "retry-test-busy").map((r) => [r.code, r.delayMs >= 200]),
      [["busy", true], ["busy", true]], JSON.stringify(log.retries));
    hooks.fake = null;
    hooks.retryAfter = null;
    assert.equal(host.version, 3, "nothing was applied");

    // outcome_unknown for an act that was in fact applied: the retry learns it.
    await guest.act(chooseAction(guest.view, random));
    await waitFor(host, (c) => c.version === 4, "the guest's discard");
    const mover = [host, guest].find((c) => chooseAction(c.view, random));
    if (mover === host) {
      hooks.loseAck = "retry-test-2";
      const answer = await host.act(chooseAction(host.view, random), { actionId: "retry-test-2" });
      assert.equal(answer.type, "ack");
      assert.equal(answer.duplicate, true, "the re-sent id was answered from the first application");
      assert.equal(answer.version, 5);
    } else {
      // The guest leads; play one card so that the host is next.
      await guest.act(chooseAction(guest.view, random));
      await waitFor(host, (c) => c.version === 5, "the guest's card");
      hooks.loseAck = "retry-test-2";
      const answer = await host.act(chooseAction(host.view, random), { actionId: "retry-test-2" });
      assert.equal(answer.type, "ack");
      assert.equal(answer.duplicate, true);
      assert.equal(answer.version, 6);
    }
    // Sent once more for the lost ack (outcome_unknown). On a loaded machine the real server
    // may also refuse a try `busy` (admission control: its loop woke late), which is sent
    // again too; every send is a retry of the same id, and the log says why.
    const retried = log.retries.filter((r) => r.actionId === "retry-test-2");
    assert.equal(retried.filter((r) => r.code === "outcome_unknown").length, 1, JSON.stringify(log.retries));
    assert.ok(retried.every((r) => ["outcome_unknown", "busy", "rate_limited"].includes(r.code)), JSON.stringify(log.retries));
    assert.equal(log.sent.filter((m) => m.type === "act" && m.action_id === "retry-test-2").length,
      1 + retried.length, JSON.stringify(log.retries));
  } finally {
    await Promise.all([host.close(), guest.close()]);
  }
});

test("a hint the server is too busy to make, or past the address's budget, is asked again after retry_after; other hint errors are the answer", { timeout: 60_000 }, async () => {
  const hooks = { busyHints: 0, hintSent: [] };
  hooks.outgoing = (frame) => {
    if (frame.type === "hint") hooks.hintSent.push(Date.now());
    if (frame.type === "hint" && hooks.busyHints > 0) {
      hooks.busyHints -= 1;
      // one refusal of each kind: hints_in_flight, then hints_per_minute
      const code = hooks.busyHints === 1 ? "busy" : "too_many_hints";
      return { reply: { type: "error", code, ref: "hint", retry_after: 0.1, message: "simulated" } };
    }
    return "pass";
  };
  const { host, guest } = await table({ WebSocketImpl: faultyWebSocket(hooks) });
  const log = record(host);
  try {
    hooks.busyHints = 2;
    const hint = await host.hint();
    assert.equal(hint.type, "hint");
    assert.equal(hint.suggestion.kind, "discard");
    assert.equal(log.sent.filter((m) => m.type === "hint").length, 3, "sent, refused twice, sent again");
    // No sooner than retry_after (100 ms) each time; a timer may fire a millisecond or two
    // early by the wall clock.
    const gaps = hooks.hintSent.slice(1).map((t, i) => t - hooks.hintSent[i]);
    assert.equal(gaps.length, 2);
    assert.ok(gaps.every((g) => g >= 95), `gaps ${gaps}`);
    assert.equal(host.version, 2, "nothing was applied");
    // busy without retry_after is not a refusal for now: it is the answer.
    hooks.outgoing = (frame) => (frame.type === "hint"
      ? { reply: { type: "error", code: "busy", ref: "hint", message: "simulated" } }
      : "pass");
    await assert.rejects(host.hint(), (err) => err instanceof CribbageError && err.code === "busy");
    hooks.outgoing = (frame) => (frame.type === "hint"
      ? { reply: { type: "error", code: "too_many_hints", ref: "hint", message: "simulated" } }
      : "pass");
    await assert.rejects(host.hint(), (err) => err instanceof CribbageError && err.code === "too_many_hints");
  } finally {
    await Promise.all([host.close(), guest.close()]);
  }
});

test("fatal close codes and the app's close() are not retried", { timeout: 60_000 }, async () => {
  const hooks = {};
  const { host, guest } = await table({ WebSocketImpl: faultyWebSocket(hooks) });
  const logs = [record(host), record(guest)];
  try {
    // The server (here: the wrapper) closes with 1008, policy violation.
    const closed = nextEvent(host, "state", (s) => s.state === "closed");
    hooks.sockets[0].kill(1008);
    await closed;
    assert.equal(hooks.sockets.length, 1, "no second socket");
    assert.deepEqual(logs[0].closes, [{ code: 1008, reason: "", wasClean: false, willReconnect: false }]);
    const fatal = logs[0].errors.find((e) => e.fatal);
    assert.equal(fatal.code, "fatal_close");
    assert.equal(fatal.closeCode, 1008);
    await assert.rejects(host.act({ type: "rematch" }), (err) => err instanceof CribbageError && err.code === "closed");

    // close() by the app: pending acts reject with `closed`, no reconnect.
    const pending = guest.act({ type: "discard", cards: guest.view.hand.slice(0, 2) }, { actionId: "closing-1" });
    const caught = pending.catch((err) => err);
    await guest.close();
    const err = await caught;
    if (err instanceof CribbageError) assert.equal(err.code, "closed");
    else assert.equal(err.type, "ack"); // the ack may beat the close
    assert.equal(guest.connectionState, "closed");
    assert.deepEqual(
      logs[1].closes.map((c) => [c.code, c.willReconnect, c.byApp]),
      [[1000, false, true]],
    );
  } finally {
    await Promise.all([host.close(), guest.close()]);
  }
});

test("a close event without a real close code (0) counts as abnormal (1006): the client reconnects", { timeout: 60_000 }, async () => {
  const hooks = {};
  const { host, guest } = await table({ WebSocketImpl: faultyWebSocket(hooks) });
  const log = record(host);
  try {
    const back = nextEvent(host, "state", (s) => s.state === "open");
    hooks.sockets[0].kill(0);
    await back;
    assert.equal(hooks.sockets.length, 2, "a second socket");
    assert.deepEqual(log.closes.map((c) => [c.code, c.willReconnect]), [[1006, true]]);
    assert.deepEqual(log.errors.filter((e) => e.fatal), []);
    assert.equal(host.seat, 0);
  } finally {
    await Promise.all([host.close(), guest.close()]);
  }
});

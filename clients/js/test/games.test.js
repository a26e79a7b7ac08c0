// Whole 2-player games between library clients against a real server (in-memory store):
// JSON, msgpack (with Muggins, so announcements and answers), a spectator, the browser-like
// path (the global WebSocket of Node's --experimental-websocket), a game against a computer
// seat played from hints, and the turn clock.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import * as msgpack from "@msgpack/msgpack";

import { ServerProcess } from "./helpers/server.js";
import { faultyWebSocket } from "./helpers/faulty.js";
import { CribbageError } from "../src/index.js";
import { chooseAction, nextEvent, playSeat, rng, record, testClient, waitFor } from "./helpers/play.js";
import { auditGame } from "./helpers/audit.js";

let server;
const summaries = [];

before(async () => {
  // Computer seats act 50 ms after their turn comes (the default is 0.8 s).
  server = await ServerProcess.start({ extraArgs: ["--bot-delay", "0.05"] });
});

after(async () => {
  await server?.stop();
  if (summaries.length) console.log(`# games: ${summaries.map((s) => `${s.label} v${s.version}`).join(", ")}`);
});

/** The story from `history` is what each connection saw live: paged back (small pages,
 * so several), per seat and public, every version from the game's start to now. */
async function checkHistory({ host, watcher, logs, first }) {
  assert.ok(Number.isInteger(first) && first >= 1, "the snapshot says where the game starts");
  const byVersion = (log) => {
    const out = new Map();
    for (const { event, version } of log.events) {
      if (version < first) continue;
      if (!out.has(version)) out.set(version, []);
      out.get(version).push(event);
    }
    return out;
  };
  const one = await host.history({ limit: 5 });
  assert.equal(one.versions.length, 5);
  assert.equal(one.versions.at(-1).version, host.version);
  assert.equal(one.more, true);
  for (const [client, log, asPublic] of [[host, logs[0], false], [host, logs[2], true]]) {
    const story = await client.historyAll({ public: asPublic, pageSize: 37 });
    assert.equal(story.first, first);
    assert.equal(story.public, asPublic);
    assert.deepEqual(story.versions.map((v) => v.version),
      Array.from({ length: host.version - first + 1 }, (_, i) => first + i), "every version, in order");
    const live = byVersion(log);
    for (const { version, events } of story.versions) {
      assert.deepEqual(events, live.get(version) ?? [], `version ${version} as seen live`);
      if (asPublic) {
        for (const e of events) {
          if (e.type === "deal") assert.deepEqual(e.hands, {});
          if (e.type === "discard") assert.equal(e.cards, null);
        }
      }
    }
  }
  assert.equal(watcher.seat, null);
}

async function playTable({ encodings, options, seeds, watcherEncoding = "json", extra = [{}, {}] }) {
  const [host, guest] = encodings.map((encoding, i) => testClient(server.ws, i === 0 ? "Ann" : "Bob", { encoding, ...extra[i] }));
  const watcher = testClient(server.ws, "Eve", { encoding: watcherEncoding });
  const clients = [host, guest, watcher];
  const logs = clients.map(record);
  try {
    const created = await host.createRoom({ options });
    const room = created.room;
    const first = await host.join(room, 0);
    assert.equal(first.status, "waiting");
    assert.equal(first.view, null);
    assert.ok(first.seat_token, "the join that takes a seat returns its token");
    await watcher.join(room, null);
    const last = await guest.join(room, 1);
    // The join that starts the game is answered by a snapshot that carries the start.
    assert.equal(last.status, "playing");
    assert.deepEqual(last.missed.map((m) => m.version), [2]);
    assert.deepEqual(
      last.missed[0].events.map((e) => e.type),
      ["seat_taken", "game_start", "game_commitment", "cut_for_deal", "deal_commitment", "deal"],
    );
    assert.ok(logs[1].events.some((e) => e.fromSnapshot && e.event.type === "deal" && e.version === 2));
    const answers = await Promise.all([playSeat(host, rng(seeds[0])), playSeat(guest, rng(seeds[1]))]);
    await waitFor(watcher, (c) => c.status === "game_over" && c.version === host.version, "the spectator's game over");
    const summary = await server.roomSummary(room);
    auditGame({ clients, logs, answerLists: answers, summary, seatedVersion: 2, target: options.target });
    for (const [i, log] of logs.entries()) {
      assert.deepEqual(log.resyncs, [], `client ${i} needed no resync`);
      assert.deepEqual(log.errors, [], `client ${i} saw no error`);
    }
    // The spectator sees what is public only.
    assert.equal(watcher.seat, null);
    assert.deepEqual(watcher.view.hand, []);
    for (const { event } of logs[2].events) {
      if (event.type === "deal") assert.deepEqual(event.hands, {});
      if (event.type === "discard") assert.equal(event.cards, null);
    }
    assert.deepEqual(watcher.legalActions(), []);
    // This server sends each seat's legal moves; the players chose from them (and no act
    // was refused).
    assert.ok(host.serverSendsLegal && guest.serverSendsLegal);
    assert.deepEqual(host.legalActions(), host.view.legal);
    assert.ok(answers.flat().every((a) => a.answer.type === "ack"));
    await checkHistory({ host, watcher, logs, first: last.history_from });
    summaries.push({ label: encodings.join("+"), version: summary.version });
    return { room, answers, logs, clients, summary };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

test("a whole 2-player game in JSON, with a spectator", { timeout: 60_000 }, async () => {
  // No WebSocketImpl: on Node 20 the client loads the ws package by itself.
  const { answers, logs } = await playTable({ encodings: ["json", "json"], options: { players: 2, target: 61 }, seeds: [1, 2] });
  assert.ok(answers[0].length > 10 && answers[1].length > 10);
  assert.ok(logs[0].sent.every((m) => m.type !== "act" || /^[\x21-\x7e]{1,64}$/.test(m.action_id)));
  assert.equal(logs[0].received.filter((m) => m.type === "welcome").length, 1);
});

test("a whole 2-player game in msgpack with Muggins (announce and answer)", { timeout: 60_000 }, async () => {
  // One client loads @msgpack/msgpack lazily, the other gets it injected with the WebSocket.
  const { answers, logs } = await playTable({
    encodings: ["msgpack", "msgpack"],
    options: { players: 2, target: 61, muggins: true },
    seeds: [3, 4],
    extra: [{}, { WebSocketImpl: WebSocket, msgpack }],
  });
  const kinds = new Set(answers.flat().map((a) => a.action.type));
  assert.ok(kinds.has("announce") && kinds.has("answer"), `Muggins actions played: ${[...kinds]}`);
  assert.ok(logs[0].received.some((m) => m.type === "update" && m.events.some((e) => e.type === "muggins_result")));
});

test("the browser path: Node's global WebSocket, JSON and msgpack seats", { timeout: 60_000 }, async () => {
  const script = fileURLToPath(new URL("./fixtures/global-websocket-game.js", import.meta.url));
  const child = spawn(process.execPath, ["--experimental-websocket", "--no-warnings", script, server.ws], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const [code] = await once(child, "exit");
  assert.equal(code, 0, `fixture failed:\n${out}\n${err}`);
  const result = JSON.parse(out.trim().split("\n").pop());
  assert.equal(result.websocket, "global");
  assert.equal(result.phase, "game_over");
  assert.deepEqual(result.encodings, ["json", "msgpack"]);
  assert.ok(result.blobs > 10, `msgpack frames arrived as Blobs: ${result.blobs}`);
  const summary = await server.roomSummary(result.room);
  assert.equal(summary.version, result.version);
  assert.equal(summary.status, "game_over");
  summaries.push({ label: "global-WebSocket json+msgpack", version: summary.version });
});

test("a game against a computer seat given by the creator, every move taken from a hint", { timeout: 60_000 }, async () => {
  const host = testClient(server.ws, "Ann");
  const log = record(host);
  try {
    const created = await host.createRoom({ options: { players: 2, target: 61 } });
    await host.join(created.room, 0);
    // Only the creator's token may give a seat away.
    await assert.rejects(host.setComputer(1, "standard", host.playerToken), (err) => err instanceof CribbageError && err.code === "bad_token");
    await host.setComputer(1, "standard", created.creator_token);
    await waitFor(host, (c) => c.seats[1]?.kind === "computer" && c.view !== null, "the computer seat and the game start");
    let hints = 0;
    const random = rng(7);
    while (host.view.phase !== "game_over") {
      if (!chooseAction(host.view, random)) {
        const seen = host.version;
        await waitFor(host, (c) => c.version > seen, "the computer's move");
        continue;
      }
      const hint = await host.hint();
      hints += 1;
      assert.equal(hint.seat, 0);
      assert.ok(hint.suggestion.best, `a suggestion at v${hint.version}: ${JSON.stringify(hint.suggestion)}`);
      const answer = await host.act(hint.suggestion.best);
      assert.equal(answer.type, "ack", JSON.stringify(answer));
    }
    const summary = await server.roomSummary(created.room);
    assert.equal(summary.status, "game_over");
    assert.equal(host.version, summary.version);
    assert.equal(Math.max(...host.view.scores), 61);
    assert.deepEqual(log.resyncs, []);
    const computerMoves = log.events.filter((e) => e.event.seat === 1 && ["discard", "play"].includes(e.event.type)).length;
    assert.ok(computerMoves > 5);
    summaries.push({ label: `vs computer (${hints} hints)`, version: summary.version });
  } finally {
    await host.close();
  }
});

test("join with `since`: an app coming back from saved tokens gets what it missed as events", { timeout: 60_000 }, async () => {
  const first = testClient(server.ws, "Ann");
  let saved;
  try {
    const created = await first.createRoom({ options: { players: 2, target: 61 }, computers: { "1": "standard" } });
    await first.join(created.room, 0);
    await waitFor(first, (c) => c.legalActions().length > 0, "the deal");
    saved = { room: created.room, playerToken: first.playerToken, seatToken: first.seatToken, version: first.version };
    const answer = await first.act(first.legalActions()[0]);
    assert.equal(answer.type, "ack");
    // the computer discards too, and the starter is cut
    await waitFor(first, (c) => c.view.phase === "play", "the play");
  } finally {
    await first.close();
  }
  const again = testClient(server.ws, "Ann", { playerToken: saved.playerToken });
  const log = record(again);
  try {
    const snapshot = await again.join(saved.room, 0, { token: saved.seatToken, since: saved.version });
    const join = log.sent.find((m) => m.type === "join");
    assert.equal(join.since, saved.version, "the join names the saved version");
    const versions = snapshot.missed.map((m) => m.version);
    assert.deepEqual(versions, Array.from({ length: snapshot.version - saved.version }, (_, i) => saved.version + 1 + i));
    const fromSnapshot = log.events.filter((e) => e.fromSnapshot);
    assert.ok(fromSnapshot.some((e) => e.event.type === "discard" && e.event.seat === 0), "our own discard");
    assert.ok(fromSnapshot.some((e) => e.event.type === "starter"), "the starter");
    assert.ok(fromSnapshot.every((e) => e.version > saved.version && e.version <= snapshot.version));
    assert.ok(log.events.every((e) => !("since" in e)), "events carry {event, version, fromSnapshot}");
    // A later join of the same room sends the client's own version, not the saved one.
    const later = await again.join(saved.room, 0);
    assert.equal(log.sent.filter((m) => m.type === "join").at(-1).since, snapshot.version);
    assert.deepEqual(later.missed, []);
  } finally {
    await again.close();
  }
});

test("the turn clock: deadlines in the view, and the server acts for an idle seat", { timeout: 60_000 }, async () => {
  const host = testClient(server.ws, "Ann");
  const idle = testClient(server.ws, "Bob");
  const log = record(host);
  try {
    const created = await host.createRoom({ options: { players: 2, target: 61 }, room: { turn_seconds: 1 } });
    assert.equal(created.room_settings.turn_seconds, 1);
    await host.join(created.room, 0);
    await idle.join(created.room, 1);
    await waitFor(host, (c) => c.view !== null, "the game start");
    assert.equal(host.roomSettings.turn_seconds, 1);
    // Both seats have to discard: both have a deadline, the same one each client sees.
    const deadlines = host.turnDeadlines();
    assert.deepEqual(Object.keys(deadlines).sort(), ["0", "1"]);
    assert.equal(host.turnDeadline(), deadlines["0"]);
    assert.equal(host.turnDeadline(1), deadlines["1"]);
    assert.equal(idle.turnDeadline(), deadlines["1"]);
    assert.equal(typeof host.msUntilTurnDeadline(), "number");
    assert.equal(host.turnDeadline(3), null);
    // Ann discards; Bob does nothing, and the server discards for him.
    const timedOut = nextEvent(host, "event", (e) => e.event.type === "timed_out");
    await host.act(chooseAction(host.view, rng(8)));
    assert.equal(host.turnDeadline(), null, "no deadline for a seat with nothing to do");
    const { event, version } = await timedOut;
    assert.equal(event.seat, 1);
    assert.equal(event.action.type, "discard");
    assert.equal(event.action.cards, null, "Bob's cards stay hidden from Ann");
    await waitFor(idle, (c) => c.version === version, "Bob's update");
    assert.equal(idle.view.discarded[1], true);
    assert.ok(log.events.some((e) => e.event.type === "starter"));
  } finally {
    await Promise.all([host.close(), idle.close()]);
  }
});

test("a client keeps within the frame budget its welcome names: not refused, never closed as a flood", { timeout: 90_000 }, async () => {
  // 8 frames a second, a burst of 4, and a connection closed past 6 refusals in a minute:
  // two clients playing a whole game at full speed used to be refused about once an act
  // and closed (1008); they now send within the budget the welcome names.
  const slow = await ServerProcess.start({
    env: { CRIBBAGE_FRAME_RATE: "8", CRIBBAGE_FRAME_BURST: "4", CRIBBAGE_FLOOD_REFUSALS: "6", CRIBBAGE_FLOOD_WINDOW_SECONDS: "60" },
  });
  const host = testClient(slow.ws, "Ann");
  const guest = testClient(slow.ws, "Bob");
  const closes = [];
  const limited = [];
  for (const c of [host, guest]) {
    c.on("close", (e) => closes.push(e));
    c.on("act_retry", (e) => {
      if (e.code === "rate_limited") limited.push(e);
    });
    c.on("error", (e) => {
      if (e.code === "rate_limited") limited.push(e);
    });
  }
  try {
    const { room } = await host.createRoom({ options: { players: 2, target: 61 } });
    await host.join(room, 0);
    await guest.join(room, 1);
    const answers = await Promise.all([playSeat(host, rng(41)), playSeat(guest, rng(42))]);
    assert.equal(host.view.phase, "game_over");
    assert.ok(answers.flat().every((a) => a.answer.type === "ack"));
    assert.deepEqual(closes, [], "no connection was closed");
    assert.ok(host.welcome.frame_rate === 8 && host.welcome.frame_burst === 4);
    assert.ok(limited.length <= 2, `rate_limited refusals: ${limited.length}`);
  } finally {
    await Promise.all([host.close(), guest.close()]);
    await slow.stop();
  }
});

test("the frame budget runs on a monotonic clock: a wall clock set back holds no frame", { timeout: 60_000 }, async () => {
  // A budget timed by Date.now() took a clock set back an hour (NTP, a user) for an hour
  // of frames to repay, and held every frame queued behind it.
  const slow = await ServerProcess.start({ env: { CRIBBAGE_FRAME_RATE: "8", CRIBBAGE_FRAME_BURST: "4" } });
  const client = testClient(slow.ws, "Ann", { requestTimeoutMs: 10_000 });
  const realNow = Date.now;
  try {
    await client.connect();
    assert.equal(client.welcome.frame_rate, 8);
    const back = realNow() - 3_600_000;
    const started = performance.now();
    Date.now = () => back + (performance.now() - started);
    const pongs = await Promise.all(Array.from({ length: 12 }, () => client.ping()));
    const took = performance.now() - started;
    Date.now = realNow;
    assert.equal(pongs.length, 12);
    // 12 frames at 95 % of 8 a second with 2 left in the burst: about 1.3 s.
    assert.ok(took < 8_000, `12 pings took ${Math.round(took)} ms`);
  } finally {
    Date.now = realNow;
    await client.close();
    await slow.stop();
  }
});

test("over the connection's frame rate: acts, history pages and pings are refused rate_limited and sent again", { timeout: 60_000 }, async () => {
  // A server that takes 8 frames a second with a burst of 4: two clients playing at full
  // speed are refused over and over, and the library sends each refused message again.
  // The welcome's frame budget is taken out (as from a server that names none), so the
  // clients learn the pace from the refusals alone.
  const slow = await ServerProcess.start({ env: { CRIBBAGE_FRAME_RATE: "8", CRIBBAGE_FRAME_BURST: "4" } });
  const unnamed = () => faultyWebSocket({
    incoming: (frame) => (frame.type === "welcome" ? { ...frame, frame_rate: 0, frame_burst: 0 } : "pass"),
  });
  const host = testClient(slow.ws, "Ann", { pingIntervalMs: 200, WebSocketImpl: unnamed() });
  const guest = testClient(slow.ws, "Bob", { WebSocketImpl: unnamed() });
  const logs = [record(host), record(guest)];
  const retries = [];
  host.on("act_retry", (e) => retries.push(e));
  guest.on("act_retry", (e) => retries.push(e));
  try {
    const { room } = await host.createRoom({ options: { players: 2, target: 61 } });
    await host.join(room, 0);
    await guest.join(room, 1);
    const answers = await Promise.all([playSeat(host, rng(31)), playSeat(guest, rng(32))]);
    assert.equal(host.view.phase, "game_over");
    const summary = await slow.roomSummary(room);
    auditGame({ clients: [host, guest], logs, answerLists: answers, summary, seatedVersion: 2, target: 61 });
    const limited = retries.filter((e) => e.code === "rate_limited");
    assert.ok(limited.length > 0, "the acts were refused rate_limited at least once");
    // Every act was applied exactly once and every answer the players saw is an ack.
    assert.ok(answers.flat().every((a) => a.answer.type === "ack"));
    // Paging the whole game back in small pages (many requests at once) still completes.
    const all = await host.historyAll({ pageSize: 2 });
    assert.equal(all.versions.at(-1).version, summary.version);
    assert.ok(all.versions.length >= summary.version - 2, `history: ${all.versions.length} versions`);
    assert.equal(host.connectionState, "open", "no drop: refused pings do not count as unanswered");
    summaries.push({ label: `rate-limited (${limited.length} act retries)`, version: summary.version });
  } finally {
    await Promise.all([host.close(), guest.close()]);
    await slow.stop();
  }
});

// A scripted player for the tests: it chooses every move from its own view only, through
// the library. When the server sends legal actions (view.legal) it picks among them;
// until then it works the legal moves out of the view itself, as any client must today.

import { CribbageClient } from "../../src/index.js";

/** Reject codes that mean "another seat got there first" (docs/protocol.md): carry on. */
export const TOO_LATE = new Set(["nothing_to_answer", "already_answered", "wrong_phase", "not_an_opponent", "game_over", "stale_answer"]);

/** A small seeded random generator (mulberry32), so a failing game can be replayed. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (random, list) => list[Math.floor(random() * list.length)];

function sample(random, list, k) {
  const copy = [...list];
  const out = [];
  while (out.length < k) out.push(copy.splice(Math.floor(random() * copy.length), 1)[0]);
  return out;
}

/** The counting value of a card text ("5H" -> 5, "TD" -> 10, "AS" -> 1). */
export function cardValue(card) {
  const rank = card[0];
  if (rank === "A") return 1;
  if ("TJQK".includes(rank)) return 10;
  return Number(rank);
}

/** The legal moves of the view's seat (rematch excluded), worked out from the view. */
export function legalFromView(view) {
  if (!view || view.seat === null || view.seat === undefined) return [];
  if (Array.isArray(view.legal)) return view.legal.filter((a) => a.type !== "rematch");
  const seat = view.seat;
  if (view.phase === "discard" && !view.discarded[seat]) {
    return [{ type: "discard", count: view.players === 2 ? 2 : 1 }]; // any cards of the hand
  }
  if (view.phase === "play" && view.turn === seat) {
    return view.hand.filter((c) => cardValue(c) + view.count <= 31).map((card) => ({ type: "play", card }));
  }
  if (view.phase === "show") {
    const pending = view.show && view.show.pending;
    if (!pending) return [];
    if (pending.seat === seat && (pending.announced === null || pending.announced === undefined)) {
      return [{ type: "announce", points: 0 }]; // any 0..29
    }
    if (pending.announced !== null && pending.announced !== undefined && (pending.awaiting || []).includes(seat)) {
      return [{ type: "answer", call: "accept", ref: pending.ref }];
    }
  }
  return [];
}

/**
 * One legal action for the view's seat chosen with `random`, or null. `legal`: the
 * client's `legalActions()` when the server sends them; else worked out from the view.
 */
export function chooseAction(view, random, legal = null) {
  if (legal !== null) legal = legal.filter((a) => a.type !== "rematch");
  else legal = legalFromView(view);
  if (legal.length === 0) return null;
  const move = pick(random, legal);
  if (move.type === "discard" && move.count !== undefined) {
    return { type: "discard", cards: sample(random, view.hand, move.count) };
  }
  if (move.type === "announce" && !Array.isArray(view.legal)) {
    return { type: "announce", points: Math.floor(random() * 13) };
  }
  return move;
}

/**
 * Play the client's seat until game over. Resolves with every `{action, answer}`; rejects
 * on a refusal that is not a race, or an act that failed. `gate()` (optional) is awaited
 * before each move: a test holds the players with it.
 */
export function playSeat(client, random, { gate = null } = {}) {
  return new Promise((resolve, reject) => {
    const answers = [];
    let busy = false;
    let triedAt = -1;
    let done = false;
    const finish = (err) => {
      if (done) return;
      done = true;
      offView();
      offState();
      if (err) reject(err);
      else resolve(answers);
    };
    const step = async () => {
      if (busy || done) return;
      busy = true;
      let acted = false;
      try {
        if (gate) await gate();
        const view = client.view;
        if (!view) return;
        if (view.phase === "game_over") return finish();
        if (triedAt === client.version) return;
        const action = chooseAction(view, random, client.serverSendsLegal ? client.legalActions() : null);
        if (!action) return;
        triedAt = client.version;
        const answer = await client.act(action);
        answers.push({ action, answer });
        if (answer.type === "reject" && !TOO_LATE.has(answer.code)) {
          throw new Error(`seat ${client.seat}: ${JSON.stringify(action)} refused: ${answer.code} ${answer.message}`);
        }
        acted = true;
      } catch (err) {
        finish(err);
      } finally {
        busy = false;
      }
      if (acted || (client.view && client.view.phase === "game_over")) step();
    };
    const offView = client.on("view", () => step());
    const offState = client.on("state", ({ state }) => {
      if (state === "closed") finish(new Error(`seat ${client.seat}: the client closed`));
    });
    step();
  });
}

/** How long a test helper waits for a condition or an event before it fails with what it
 * waited for (ms): a hang then names its step instead of ending as a test timeout. */
export const WAIT_MS = 30_000;

function describeClient(client) {
  return `version ${client.version}, state ${client.connectionState}, phase ${client.view?.phase}`;
}

/** Resolve when `predicate(client)` holds (checked on every view, seat and state change);
 * reject after `ms` with `label` and where the client stood. */
export function waitFor(client, predicate, label = "condition", ms = WAIT_MS) {
  return new Promise((resolve, reject) => {
    const offs = [];
    const timer = setTimeout(() => {
      offs.forEach((f) => f());
      reject(new Error(`waited ${ms} ms for ${label}; the client is at ${describeClient(client)}`));
    }, ms);
    offs.push(() => clearTimeout(timer));
    const check = () => {
      let ok = false;
      try {
        ok = predicate(client);
      } catch (err) {
        offs.forEach((f) => f());
        reject(err);
        return;
      }
      if (ok) {
        offs.forEach((f) => f());
        resolve(client);
      } else if (client.connectionState === "closed") {
        offs.forEach((f) => f());
        reject(new Error(`client closed while waiting for ${label}`));
      }
    };
    for (const type of ["view", "seats", "state", "snapshot", "presence"]) offs.push(client.on(type, check));
    check();
  });
}

/** Resolve with the detail of the next `type` event that satisfies `predicate`; reject
 * after `ms` naming the event and where the client stood. */
export function nextEvent(client, type, predicate = () => true, ms = WAIT_MS) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`waited ${ms} ms for a ${type} event; the client is at ${describeClient(client)}`));
    }, ms);
    const off = client.on(type, (detail) => {
      if (predicate(detail)) {
        off();
        clearTimeout(timer);
        resolve(detail);
      }
    });
  });
}

/**
 * Everything a test wants to know afterwards about one client: the frames and messages, the
 * events with their versions, states, closes, resyncs, errors, retries, acks.
 */
export function record(client) {
  const log = { received: [], sent: [], events: [], states: [], closes: [], resyncs: [], errors: [], retries: [], views: [] };
  client.on("message", (m) => log.received.push(m));
  client.on("sent", (m) => log.sent.push(m));
  client.on("event", (e) => log.events.push(e));
  client.on("state", (s) => log.states.push(s.state));
  client.on("close", (c) => log.closes.push(c));
  client.on("resync", (r) => log.resyncs.push(r));
  client.on("error", (e) => log.errors.push(e));
  client.on("act_retry", (r) => log.retries.push(r));
  client.on("view", (v) => log.views.push(v));
  return log;
}

/** A client with quick reconnects, as the tests want them. */
export function testClient(url, name, extra = {}) {
  return new CribbageClient({
    url,
    name,
    reconnect: { baseDelayMs: 50, maxDelayMs: 500, ...(extra.reconnect || {}) },
    actRetry: { baseDelayMs: 100, maxDelayMs: 1000, ...(extra.actRetry || {}) },
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "reconnect" && k !== "actRetry")),
  });
}

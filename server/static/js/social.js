// Challenges on every page (issue 20; docs/protocol.md "Challenges, blocks and online now").
//
// Every page of a browser that has a player (player.js) holds one light WebSocket of its
// own for them — the start page, a profile, the leaderboard, "You", and the table page too
// (beside the table's own connection) — so a challenge reaches the player wherever they are.
// A challenge to them shows as a banner above the page with Accept and Decline; one they
// sent shows "waiting for an answer". When one is accepted, both players' pages go to the
// table (/r/<room>) and sit at their seat there (room.js sits at `autoSit` once).
// Frames about a challenge may come twice: they are keyed by id and status.
import { codeText, describeOptions } from "./describe.js";
import { h, replaceKeepingFocus } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { loadPlayer } from "./player.js";
import { loadName, loadSeen, saveSeen, updateRoom } from "./storage.js";

const PING_MS = 60_000;
const RETRY_MS = 3_000;

const state = {
  ws: null,
  open: false,
  challenges: new Map(), // id -> challenge (the latest frame's)
  notes: [], // short lines: declined, expired, refusals
  waiters: [], // {resolve, reject} of sendChallenge, oldest first
  box: null,
  status: null, // the box's live region (kept: only its contents change)
};

/** The same /ws as the table's; the query (ignored by the server) tells the two apart in
 * logs and in the browser tests' frame watchers. */
function wsUrl() {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws?for=challenges`;
}

/** Open this page's challenges connection (once; nothing without a player). */
export function startSocial() {
  if (state.box || !loadPlayer()) return;
  state.box = h("aside", { class: "challenges", id: "challenges", "aria-label": t("challenge.region") });
  state.status = h("div", { role: "status", class: "challenge-status" });
  state.box.appendChild(state.status);
  state.box.hidden = true;
  const app = document.getElementById("app");
  document.body.insertBefore(state.box, app);
  onLanguageChange(draw);
  connect();
  setInterval(() => send({ type: "ping" }), PING_MS);
}

function connect() {
  const player = loadPlayer();
  if (!player) return;
  const ws = new WebSocket(wsUrl(), ["cribbage.v1.json"]);
  state.ws = ws;
  ws.addEventListener("open", () => {
    ws.send(JSON.stringify({ type: "hello", name: loadName().trim() || t("name.guest"),
      player: { id: player.id, secret: player.secret }, client: "web/social" }));
  });
  ws.addEventListener("message", (e) => {
    let frame;
    try { frame = JSON.parse(e.data); } catch { return; }
    onFrame(frame);
  });
  ws.addEventListener("close", () => {
    state.open = false;
    if (state.ws === ws) setTimeout(connect, RETRY_MS);
  });
}

function send(message) {
  if (state.ws && state.open) state.ws.send(JSON.stringify(message));
}

/** Challenge player `to` to a table of two: resolves with the challenge when the server
 * took it; rejects with an Error whose `code` is the server's. */
export function sendChallenge(to, options, room) {
  return new Promise((resolve, reject) => {
    if (!state.open) {
      const err = new Error("not connected");
      err.code = "store_unavailable";
      reject(err);
      return;
    }
    state.waiters.push({ resolve, reject });
    send({ type: "challenge", to, options, room });
  });
}

function onFrame(frame) {
  const c = frame.challenge;
  switch (frame.type) {
    case "welcome":
      state.open = true;
      return;
    case "challenge_sent":
      state.waiters.shift()?.resolve(c);
      state.challenges.set(c.id, c);
      break;
    case "challenge_received":
      state.challenges.set(c.id, c);
      break;
    case "challenge_accepted":
      state.challenges.delete(c.id);
      // Told again to each new connection while it is kept: go to the table once only.
      if (!wentTo(c.id) && location.pathname !== `/r/${frame.room}`) {
        updateRoom(frame.room, { autoSit: frame.seat });
        location.assign(`/r/${frame.room}`);
      }
      break;
    case "challenge_declined":
    case "challenge_expired":
      if (state.challenges.has(c.id)) {
        state.challenges.delete(c.id);
        const other = mine(c) ? c.challenged : c.challenger;
        state.notes = [{ id: c.id, text: t(`challenge.${c.status}`, { name: other.name || t("history.no_name") }) }];
      }
      break;
    case "error":
      if (frame.ref === "challenge") {
        const waiter = state.waiters.shift();
        const err = new Error(frame.message);
        err.code = frame.code;
        waiter?.reject(err);
      } else if (frame.ref === "challenge_answer") {
        state.notes = [{ id: frame.code, text: codeText(frame.code) }];
      } else if (frame.ref === "hello") {
        // A player the server does not know (deleted, or another server's): no challenges
        // on this page; player.js makes a new one on the next visit.
        const ws = state.ws;
        state.ws = null;
        ws?.close();
      }
      break;
    default:
      return;
  }
  draw();
}

/** Whether this browser already went to the table of accepted challenge `id` (and note
 * that it has: the last 20 are kept). */
function wentTo(id) {
  const seen = loadSeen();
  if (seen.includes(id)) return true;
  saveSeen([...seen, id].slice(-20));
  return false;
}

function mine(c) {
  return c.challenger.id === loadPlayer()?.id;
}

function answer(id, what) {
  send({ type: "challenge_answer", id, answer: what });
}

function tableText(c) {
  const text = describeOptions({ ...c.options, players: 2 });
  return c.room?.rated ? `${text} · ${t("challenge.rated")}` : text;
}

function draw() {
  const box = state.box;
  if (!box) return;
  box.setAttribute("aria-label", t("challenge.region"));
  const items = [...state.challenges.values()].filter((c) => c.status === "pending");
  const rows = items.map((c) => {
    if (mine(c)) {
      return h("p", { class: "challenge-line", "data-challenge": c.id, "data-kind": "sent" },
        t("challenge.waiting", { name: c.challenged.name || t("history.no_name"), table: tableText(c) }));
    }
    return h("div", { class: "challenge-line incoming", "data-challenge": c.id, "data-kind": "received" },
      h("p", {}, t("challenge.incoming", { name: c.challenger.name || t("history.no_name"), table: tableText(c) })),
      h("button", { type: "button", class: "primary", "data-key": `accept-${c.id}`, onclick: () => answer(c.id, "accept") },
        t("challenge.accept")),
      h("button", { type: "button", "data-key": `decline-${c.id}`, onclick: () => answer(c.id, "decline") },
        t("challenge.decline")));
  });
  const notes = state.notes.map((n) => h("p", { class: "challenge-note", "data-note": n.id }, n.text));
  box.hidden = !rows.length && !notes.length;
  replaceKeepingFocus(state.status, [...rows, ...notes]);
}

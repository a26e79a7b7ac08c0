// CribbageClient: one player's (or spectator's) connection to a cribbage.v1 server.
//
// What it does for the app (docs/protocol.md is the contract):
// - connects with the JSON or the msgpack subprotocol and says `hello`;
// - `join`s one room (a seat or watching) and keeps `view`, `version`, `seats`, `status`,
//   `roomSettings` current from the `snapshot` and each `update`'s JSON Patch;
// - repairs what it cannot trust with `resync`: a version gap, a patch that does not apply,
//   a `pong` that tells of a newer version while nothing is on its way;
// - sends `act` with generated action ids, keeps every unanswered one, re-sends it with the
//   SAME id after a reconnect (the server applies an id at most once and answers a repeat
//   with `ack duplicate: true`), and retries `outcome_unknown` / `store_unavailable` / `busy`
//   rejects with backoff, up to a limit;
// - pings every 20 s, drops a connection that stops answering, and reconnects with
//   exponential backoff and jitter after 1006/1011/1012/1013 and network errors, resuming
//   with the player token and the seat token.

import { applyPatch } from "./patch.js";
import { CribbageError } from "./errors.js";
import { Emitter } from "./emitter.js";
import { SUBPROTOCOLS, loadCodec, loadWebSocket } from "./codec.js";

export const LIBRARY_VERSION = "0.1.0";

/** Close codes after which the client reconnects (unless the app closed it). */
export const RECONNECT_CLOSE_CODES = Object.freeze([1000, 1001, 1005, 1006, 1011, 1012, 1013, 1014]);

/** Reject (and join error) codes that mean "not applied, or applied at most once: send the
 * same request again later". */
export const RETRY_CODES = Object.freeze(["outcome_unknown", "store_unavailable", "busy"]);

/** Faults of the connection (not answers of the server) after which `createRoom` sends its
 * request again with the same `request_id`: the room may or may not have been made. */
const CREATE_RETRY_FAULTS = Object.freeze(["connection_lost", "not_connected", "timeout"]);

/** Request types whose `rate_limited` refusal is sent again, and the waiter list of each. */
const LIMITED_REQUESTS = Object.freeze({
  create_room: "room_created",
  hint: "hint",
  leave: "left",
  history: "history",
});

const DEFAULTS = Object.freeze({
  encoding: "json",
  pingIntervalMs: 20_000,
  pongTimeoutMs: 10_000,
  pongGraceMs: 1_000,
  requestTimeoutMs: 20_000,
  reconnect: Object.freeze({
    baseDelayMs: 250,
    maxDelayMs: 10_000,
    factor: 2,
    jitter: 0.5,
    maxAttempts: Infinity,
    closeCodes: RECONNECT_CLOSE_CODES,
  }),
  actRetry: Object.freeze({
    baseDelayMs: 250,
    maxDelayMs: 4_000,
    factor: 2,
    jitter: 0.5,
    maxRetries: 6,
    codes: RETRY_CODES,
  }),
});

const OPEN = 1; // WebSocket.OPEN in every implementation

/**
 * The delay before retry number `attempt` (0-based): `baseDelayMs * factor^attempt`, at
 * most `maxDelayMs`, less a random share of up to `jitter` (0..1) of it.
 */
export function backoffDelay(attempt, policy, random = Math.random) {
  const full = Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** attempt);
  return Math.max(0, Math.round(full * (1 - policy.jitter * random())));
}

/** Milliseconds on a monotonic clock, for the frame budget: a wall clock set back (NTP, a
 * user) would hold queued frames back, set forward would send a burst past the budget. */
function monotonicMs() {
  return globalThis.performance?.now ? globalThis.performance.now() : Date.now();
}

function randomPrefix() {
  const bytes = new Uint8Array(6);
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (b) => b.toString(36).padStart(2, "0")).join("");
}

function isBlob(data) {
  return typeof Blob === "function" && data instanceof Blob;
}

export class CribbageClient {
  /**
   * @param {object} options see types/index.d.ts (`ClientOptions`)
   */
  constructor(options) {
    if (!options || typeof options.url !== "string") {
      throw new CribbageError("bad_option", "options.url (the server's /ws URL) is required");
    }
    if (typeof options.name !== "string" || options.name.trim() === "") {
      throw new CribbageError("bad_option", "options.name (the display name for hello) is required");
    }
    this._opts = {
      ...DEFAULTS,
      ...options,
      reconnect: { ...DEFAULTS.reconnect, ...(options.reconnect || {}) },
      actRetry: { ...DEFAULTS.actRetry, ...(options.actRetry || {}) },
    };
    if (!(this._opts.encoding in SUBPROTOCOLS)) {
      throw new CribbageError("bad_option", `encoding must be "json" or "msgpack", not ${this._opts.encoding}`);
    }
    this._random = typeof options.random === "function" ? options.random : Math.random;
    this._events = new Emitter();

    /** Connection state: idle, connecting, open, reconnecting, closed. */
    this.connectionState = "idle";
    /** The player token (from `welcome`); keep it to come back as the same player. */
    this.playerToken = options.playerToken ?? null;
    /** The player (`{id, secret}` from `POST /api/players`) hello presents, or null. The
     * server answers a wrong one with `error bad_player` (the connection fails with it). */
    this.player = options.player && typeof options.player.id === "string" && typeof options.player.secret === "string"
      ? { id: options.player.id, secret: options.player.secret } : null;
    /** The last `welcome` frame. */
    this.welcome = null;
    /** Milliseconds to add to `Date.now()` to get the server's clock (from pongs). */
    this.serverClockOffsetMs = 0;

    /** The lobby while this client follows it (`lobbySubscribe`): the public tables waiting
     * for players, newest first (`LobbyTable` entries); null when not following. */
    this.lobby = null;
    this._lobbyFilters = null;

    this.room = null;
    this.seat = null;
    this.seatToken = null;
    this.version = -1;
    this.view = null;
    this.seats = [];
    this.status = null;
    this.options = null;
    this.roomSettings = null;

    this._encoding = this._opts.encoding;
    this._WS = null;
    this._codec = null;
    this._ws = null;
    this._welcomed = false;
    this._gen = 0;
    // Frames keep within the connection's budget the welcome names (`frame_rate`,
    // `frame_burst`), at 95 % of its rate, queued meanwhile; from a server that names none,
    // once it refused a frame `rate_limited`, no closer together than the longest
    // `retry_after` it named.
    this._rate = 0; // frames a second (0: no budget known)
    this._burst = 0;
    this._tokens = 0;
    this._stamp = 0;
    this._paceMs = 0;
    this._nextSendAt = 0;
    this._outbox = [];
    this._outboxTimer = null;
    this._inbox = [];
    this._inboxBusy = false;
    this._closedForGood = false;
    this._target = null; // {room, seat, token}: the room to be in (joined now or resumed next)
    this._joined = false; // this connection has the target room's snapshot
    this._joinWaiters = [];
    this._joinRetries = 0;
    this._joinTimer = null;
    this._resyncing = false;
    this._resyncTimer = null;
    this._legal = null;
    this._pending = new Map();
    this._waiters = { room_created: [], hint: [], left: [], set_computer: [], history: [] };
    this._pings = new Map();
    this._nonce = 0;
    this._pingTimer = null;
    this._behindTimer = null;
    this._reconnectTimer = null;
    this._reconnectAttempt = 0;
    this._openWaiters = [];
    this._connectPromise = null;
    this._prefix = options.actionIdPrefix ?? randomPrefix();
    this._counter = 0;
  }

  // -- subscribing ------------------------------------------------------------------------

  /** Call `fn(detail)` on every `type` event (see `ClientEventMap`); returns an unsubscribe
   * function. */
  on(type, fn) {
    return this._events.on(type, fn);
  }

  /** Like `on`, once. */
  once(type, fn) {
    return this._events.once(type, fn);
  }

  /** Remove a listener added with `on`. */
  off(type, fn) {
    this._events.off(type, fn);
  }

  // -- connecting -------------------------------------------------------------------------

  /** Open the connection and say hello. Resolves with the `welcome` once the client is
   * `open` (and, when a room was joined before, back in it). Rejects with a CribbageError
   * when the client is closed first. */
  connect() {
    if (this._closedForGood) return Promise.reject(new CribbageError("closed", "the client is closed"));
    if (!this._connectPromise) {
      this._connectPromise = new Promise((resolve, reject) => {
        this._connectResolve = resolve;
        this._connectReject = reject;
      });
      this._connectPromise.catch(() => {});
      this._setState("connecting");
      this._openSocket();
    }
    return this._connectPromise;
  }

  /**
   * Close for good (no reconnect). Pending acts and requests reject with code `closed`.
   * Resolves once the socket has closed (or after 2 s).
   */
  close(code = 1000, reason = "client closed") {
    if (this._closedForGood) return Promise.resolve();
    const ws = this._ws;
    const done = new Promise((resolve) => {
      if (!ws || ws.readyState > OPEN) return resolve();
      const timer = setTimeout(resolve, 2000);
      ws.onclose = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this._detachSocket();
    if (ws) {
      try {
        ws.close(code, reason);
      } catch {
        /* already closing */
      }
    }
    this._finish(new CribbageError("closed", "the client was closed"), { code, reason, byApp: true });
    return done;
  }

  // -- requests -----------------------------------------------------------------------------

  /**
   * Create a room (`create_room`). Resolves with the `room_created` frame; rejects with the
   * server's error code (`bad_options`, …). Does not sit down: call `join`.
   *
   * The request carries a `request_id` (`requestId`, else a fresh random one), so it is
   * safe to send again: the server answers a repeat with the same room and creator token.
   * An answer `outcome_unknown`, `store_unavailable` or `busy`, a dropped connection or no
   * answer in time (the room may exist, or nothing was done) is sent again with the same id
   * after a backoff (`actRetry`), up to `actRetry.maxRetries` times, each announced by a
   * `create_retry` event; then the promise rejects with the last error.
   */
  createRoom({ options = {}, computers, room, requestId } = {}) {
    const message = { type: "create_room", options, request_id: requestId ?? this.newRequestId() };
    if (computers) message.computers = computers;
    if (room) message.room = room;
    return this._createRoom(message);
  }

  /** A fresh `request_id` for `createRoom`: a random UUID (122 random bits). */
  newRequestId() {
    if (typeof globalThis.crypto?.randomUUID === "function") return globalThis.crypto.randomUUID();
    let hex = "";
    for (let i = 0; i < 4; i++) hex += randomPrefix();
    return `req-${hex}`;
  }

  async _createRoom(message) {
    const policy = this._opts.actRetry;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this._request("room_created", message);
      } catch (err) {
        const again = policy.codes.includes(err.code) || CREATE_RETRY_FAULTS.includes(err.code);
        if (!again || attempt >= policy.maxRetries || this._closedForGood) throw err;
        const delayMs = backoffDelay(attempt, policy, this._random);
        this._events.emit("create_retry", { requestId: message.request_id, code: err.code, retry: attempt + 1, delayMs });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  /**
   * Sit at `seat` of `room` (0..3, or `null` to watch). Resolves with the `snapshot`.
   * The client remembers the room and, after a reconnect, joins it again with the seat
   * token. `token` names the token to take or resume the seat with (default: the seat token
   * this client got for that room, else the player token). `since` (an app coming back
   * from saved state): the last version it saw of the room; the snapshot's `missed` then
   * brings the events after it, emitted as `event`s with `fromSnapshot: true`. Without it a
   * client that was already in the room sends its own version.
   */
  join(room, seat = null, { token, since } = {}) {
    if (this._closedForGood) return Promise.reject(new CribbageError("closed", "the client is closed"));
    for (const w of this._joinWaiters.splice(0)) {
      w.reject(new CribbageError("superseded", "another join was asked for"));
    }
    if (this._target && this._target.room !== room) {
      this._failActs(new CribbageError("superseded", "the client joined another room"));
    }
    if (room !== this.room) this._resetRoom();
    const keep = room === this.room && seat === this.seat ? this.seatToken : null;
    this._target = { room, seat, token: token ?? keep ?? null, since: Number.isInteger(since) && since >= 0 ? since : null };
    this._joined = false;
    this._joinRetries = 0;
    const promise = new Promise((resolve, reject) => this._joinWaiters.push({ room, resolve, reject }));
    promise.catch(() => {}); // a join the app let go of must not be an unhandled rejection
    if (this.connectionState === "idle") this.connect();
    else if (this._welcomed) this._sendJoin(); // else the next welcome sends it
    return promise;
  }

  /** Stop following the room (the seat stays yours; `join` again to come back). */
  async leave() {
    const target = this._target;
    if (!target) return null;
    this._target = null;
    for (const w of this._joinWaiters.splice(0)) w.reject(new CribbageError("superseded", "left the room"));
    this._failActs(new CribbageError("superseded", "the client left the room"));
    const wasJoined = this._joined;
    this._joined = false;
    this._resetRoom();
    if (!wasJoined || !this._socketOpen()) return null;
    return this._request("left", { type: "leave" });
  }

  /**
   * Submit an engine action for this client's seat. Resolves with the `ack` (maybe
   * `duplicate: true`) or the final `reject`. An unanswered act is re-sent with the same
   * `action_id` after a reconnect; `outcome_unknown`, `store_unavailable` and `busy` are
   * retried with backoff up to `actRetry.maxRetries` times, then resolved with that reject.
   * Rejects (the promise) only when the client closes or leaves the room first.
   */
  act(action, { actionId } = {}) {
    if (this._closedForGood) return Promise.reject(new CribbageError("closed", "the client is closed"));
    const target = this._target;
    if (!target || target.seat === null || target.seat === undefined) {
      return Promise.reject(new CribbageError("not_seated", "join a room in a seat first"));
    }
    const id = actionId ?? this.newActionId();
    const known = this._pending.get(id);
    if (known) return known.promise;
    const entry = { actionId: id, action, retries: 0, sends: 0, timer: null };
    entry.promise = new Promise((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
    });
    entry.promise.catch(() => {}); // likewise for an act whose promise the app dropped
    this._pending.set(id, entry);
    this._sendAct(entry);
    return entry.promise;
  }

  /** A fresh action id: unique per client (random prefix), game and seat. */
  newActionId() {
    this._counter += 1;
    const game = this.view && typeof this.view.game_number === "number" ? this.view.game_number : 0;
    return `${this._prefix}-g${game}-${this._counter}`;
  }

  /** The acts sent and not yet answered: `[{actionId, action, retries, sends}]`. */
  pendingActions() {
    return [...this._pending.values()].map(({ actionId, action, retries, sends }) => ({
      actionId,
      action,
      retries,
      sends,
    }));
  }

  /** Ask for the `expert` computer's suggestion for this seat; resolves with the `hint`
   * (a hint refused `busy` or `too_many_hints` with `retry_after` is asked again after
   * it, until the request's timeout, `requestTimeoutMs`, rejects the promise with code
   * `timeout`). */
  hint() {
    return this._request("hint", { type: "hint" });
  }

  /**
   * One page of the current game's story (`history`): the versions before `before`
   * (default: up to the room's latest), at most `limit` (1..500, default 200) of the newest
   * of them, oldest first, each `{version, events}` with its events as this seat may see
   * them (redacted exactly like updates), or with `public: true` as a spectator sees them.
   * Resolves with the `history` frame (`first`: the version that started the game;
   * `more`: older versions exist). Needs a joined room.
   */
  history({ before, limit, public: asPublic } = {}) {
    const message = { type: "history" };
    if (before !== undefined && before !== null) message.before = before;
    if (limit !== undefined && limit !== null) message.limit = limit;
    if (asPublic) message.public = true;
    return this._request("history", message);
  }

  /**
   * The whole story of the current game: every page of `history`, from the version that
   * started the game up to now. Resolves with `{room, game, first, versions, public}`,
   * versions oldest first.
   */
  async historyAll({ public: asPublic = false, pageSize = 500 } = {}) {
    const pages = [];
    let before;
    let frame;
    for (;;) {
      frame = await this.history({ before, limit: pageSize, public: asPublic });
      pages.unshift(frame.versions);
      if (!frame.more || frame.versions.length === 0) break;
      before = frame.versions[0].version;
    }
    return { room: frame.room, game: frame.game, first: frame.first, versions: pages.flat(), public: Boolean(frame.public) };
  }

  /**
   * The room's creator gives an empty seat to a computer player (`set_computer`).
   * Resolves once the server has handled it without an error (the seat change then arrives
   * as an update); rejects with the server's error code.
   */
  /**
   * Quick match ("Play now", docs/protocol.md "Quick match"): wait for a table of `table`
   * (`{players, partnerships, target, muggins, lowball, backup10, match, rated}`, each
   * optional). The answers come as events: `queue_status` (how many wait, the computer
   * offer), `matched` (the room and seat: `join` it) and `queue_left`; a refusal as
   * `error`. Needs a connection that said hello with a player. Returns whether it was sent.
   */
  queueJoin(table = {}) {
    return this._send({ type: "queue_join", table });
  }

  /** Stop waiting (answered by `queue_left`, or `matched` when too late). */
  queueLeave() {
    return this._send({ type: "queue_leave" });
  }

  /** Take the computer offer of `queue_status.computer_offer` (answered by `matched`). */
  queueAcceptComputer() {
    return this._send({ type: "queue_accept_computer" });
  }

  /**
   * Table talk (docs/protocol.md "Chat"): say a preset phrase (`{preset: "good_game"}`, an
   * id of the protocol's presets) or free text (`{text}`) at the table this client follows.
   * Every reader, this client included, gets it as a `chat` event; a refusal comes as
   * `error` (`ref: "chat"`: chat_off, chat_presets_only, bad_chat, chat_too_long, ...).
   * Returns whether it was sent.
   */
  chat({ preset, text } = {}) {
    const message = { type: "chat" };
    if (preset !== undefined && preset !== null) message.preset = preset;
    if (text !== undefined && text !== null) message.text = text;
    return this._send(message);
  }

  /** Mute the author of chat message `message` (an id), or with `block` block them:
   * answered by a `chat_muted` event. Returns whether it was sent. */
  chatMute(message, { block = false } = {}) {
    return this._send({ type: "chat_mute", message, block: Boolean(block) });
  }

  /** Hear player `player` (an id) again: answered by `chat_muted` with `muted` false. */
  chatUnmute(player) {
    return this._send({ type: "chat_unmute", player });
  }

  /** Report chat message `message` to the moderators, for `reason` (abuse, spam, cheating,
   * other) and an optional `note`: answered by a `chat_reported` event. */
  chatReport(message, reason = "abuse", note) {
    const frame = { type: "chat_report", message, reason };
    if (note) frame.note = note;
    return this._send(frame);
  }

  setComputer(seat, level, creatorToken, room) {
    const message = { type: "set_computer", seat, level, creator_token: creatorToken };
    if (room) message.room = room;
    // The server handles one connection's messages in order: a pong to a ping sent right
    // after the request means it was handled, and an error would have come first.
    return this._request("set_computer", message, (waiter) =>
      this._sendPing({ resolve: () => this._settleWaiter("set_computer", waiter, true, undefined), reject: () => {} }),
    );
  }

  /**
   * Follow the lobby: the public tables waiting for players (filters `players`,
   * `partnerships`, `language`, `rated`, each optional). `lobby` then holds the tables and
   * the event "lobby" fires with `{tables, update}` at the first list and at every
   * `lobby_update` (`update` null for a whole list). Followed again after a reconnect.
   */
  lobbySubscribe(filters = {}) {
    this._lobbyFilters = { ...filters };
    if (this._welcomed) this._send({ type: "lobby_subscribe", ...this._lobbyFilters });
  }

  /** Stop following the lobby. */
  lobbyUnsubscribe() {
    const was = this._lobbyFilters !== null;
    this._lobbyFilters = null;
    this.lobby = null;
    if (was && this._welcomed) this._send({ type: "lobby_unsubscribe" });
  }

  _onLobby(frame) {
    if (this._lobbyFilters === null) return;
    let tables;
    if (frame.type === "lobby") {
      tables = frame.tables.slice();
    } else {
      const gone = new Set([...frame.removed, ...frame.changed.map((t) => t.room)]);
      tables = (this.lobby || []).filter((t) => !gone.has(t.room)).concat(frame.added, frame.changed);
      tables.sort((a, b) => (b.created - a.created) || (a.room < b.room ? -1 : 1));
    }
    this.lobby = tables;
    this._events.emit("lobby", { tables, update: frame.type === "lobby_update" ? frame : null });
  }

  /** Ask for a fresh snapshot now. */
  resync() {
    this._requestResync("app", {});
  }

  /** Ping; resolves with the `pong` (and updates `serverClockOffsetMs`). */
  ping() {
    if (!this._socketOpen() || !this._welcomed) {
      return Promise.reject(new CribbageError("not_connected", "the connection is not open"));
    }
    return new Promise((resolve, reject) => {
      this._sendPing({ resolve, reject });
    });
  }

  // -- what the app reads ---------------------------------------------------------------------

  /**
   * This seat's legal actions, in the shape `act` takes: `view.legal` once the server sends
   * it (or a `legal` field of the snapshot/update frames). Servers that send neither yet:
   * always `[]` (check `serverSendsLegal`).
   */
  legalActions() {
    const view = this.view;
    if (view && Array.isArray(view.legal)) return view.legal;
    if (Array.isArray(this._legal)) return this._legal;
    return [];
  }

  /** Whether the server sends legal actions (so `legalActions()` can be trusted). */
  get serverSendsLegal() {
    return Boolean(this.view && Array.isArray(this.view.legal)) || Array.isArray(this._legal);
  }

  /** The view's turn clock: seat (as text) -> Unix time in ms by which it must act. */
  turnDeadlines() {
    const clock = this.view && this.view.turn_clock;
    return clock && typeof clock === "object" ? { ...clock } : {};
  }

  /** The Unix time (ms, server clock) by which `seat` (default: this seat) must act, or
   * null when it has no running turn clock. */
  turnDeadline(seat = this.seat) {
    if (seat === null || seat === undefined) return null;
    const due = this.turnDeadlines()[String(seat)];
    return typeof due === "number" ? due : null;
  }

  /** Milliseconds left before `seat`'s turn deadline (by this machine's clock corrected
   * with the server's), or null. Negative once it has passed. */
  msUntilTurnDeadline(seat = this.seat, now = Date.now()) {
    const due = this.turnDeadline(seat);
    return due === null ? null : due - (now + this.serverClockOffsetMs);
  }

  // -- internals: socket ------------------------------------------------------------------

  _setState(state) {
    const previous = this.connectionState;
    if (previous === state) return;
    this.connectionState = state;
    this._events.emit("state", { state, previous });
    if (state === "open") {
      for (const w of this._openWaiters.splice(0)) w.resolve();
    }
  }

  _whenOpen() {
    if (this._closedForGood) return Promise.reject(new CribbageError("closed", "the client is closed"));
    if (this.connectionState === "open") return Promise.resolve();
    if (this.connectionState === "idle") this.connect();
    return new Promise((resolve, reject) => this._openWaiters.push({ resolve, reject }));
  }

  _socketOpen() {
    return this._ws !== null && this._ws.readyState === OPEN;
  }

  async _openSocket() {
    const gen = ++this._gen;
    try {
      if (!this._WS) this._WS = await loadWebSocket(this._opts.WebSocketImpl);
      if (!this._codec) this._codec = await loadCodec(this._encoding, this._opts.msgpack);
    } catch (err) {
      this._fatal(err);
      return;
    }
    if (gen !== this._gen || this._closedForGood) return;
    let ws;
    try {
      ws = new this._WS(this._opts.url, [SUBPROTOCOLS[this._encoding]]);
    } catch (err) {
      this._fatal(new CribbageError("bad_option", `cannot open ${this._opts.url}: ${err.message}`, { cause: err }));
      return;
    }
    try {
      ws.binaryType = "arraybuffer";
    } catch {
      /* an implementation without binaryType hands over bytes as it likes */
    }
    this._ws = ws;
    this._inbox = [];
    this._dropOutbox();
    ws.onopen = () => {
      if (gen === this._gen) this._onOpen(ws);
    };
    ws.onmessage = (event) => {
      if (gen === this._gen) this._onData(event.data, gen);
    };
    ws.onerror = () => {
      /* the close event follows and decides */
    };
    ws.onclose = (event) => {
      if (gen === this._gen) this._onClose(event.code, event.reason, event.wasClean);
    };
  }

  _detachSocket() {
    this._gen += 1;
    this._ws = null;
    this._welcomed = false;
    this._inbox = [];
    this._inboxBusy = false;
    this._dropOutbox();
    this._stopConnectionTimers();
  }

  _stopConnectionTimers() {
    clearInterval(this._pingTimer);
    clearTimeout(this._behindTimer);
    clearTimeout(this._joinTimer);
    clearTimeout(this._resyncTimer);
    this._pingTimer = this._behindTimer = this._joinTimer = this._resyncTimer = null;
    for (const p of this._pings.values()) {
      clearTimeout(p.timer);
      p.reject?.(new CribbageError("connection_lost", "the connection dropped before the pong"));
    }
    this._pings.clear();
  }

  _onOpen(ws) {
    const wanted = SUBPROTOCOLS[this._encoding];
    if (ws.protocol && ws.protocol !== wanted) {
      this._fatal(new CribbageError("bad_frame", `the server chose the subprotocol ${ws.protocol}, not ${wanted}`));
      return;
    }
    const hello = { type: "hello", name: this._opts.name, client: this._opts.client ?? `cribbage-js/${LIBRARY_VERSION}` };
    if (this.playerToken) hello.token = this.playerToken;
    if (this.player) hello.player = { id: this.player.id, secret: this.player.secret };
    if (["en", "da", "sv"].includes(this._opts.language)) hello.language = this._opts.language;
    this._send(hello);
  }

  /** A connection ended. Decide: reconnect, or surface and stop. */
  _onClose(code, reason, wasClean) {
    // A close event without a real close code (0 or none, as some proxies and test
    // harnesses give) is an abnormal closure: treat it as 1006 and reconnect.
    if (!(Number.isInteger(code) && code >= 1000 && code <= 4999)) code = 1006;
    this._detachSocket();
    this._joined = false;
    this._resyncing = false;
    for (const kind of Object.keys(this._waiters)) {
      for (const w of this._waiters[kind].splice(0)) {
        clearTimeout(w.timer);
        w.reject(new CribbageError("connection_lost", "the connection dropped before the answer"));
      }
    }
    for (const entry of this._pending.values()) {
      clearTimeout(entry.timer);
      entry.timer = null;
    }
    if (this._closedForGood) return;
    const policy = this._opts.reconnect;
    if (!policy.closeCodes.includes(code)) {
      this._events.emit("close", { code, reason, wasClean, willReconnect: false });
      this._fatal(
        new CribbageError("fatal_close", `the server closed the connection: ${code} ${reason || ""}`.trim(), {
          closeCode: code,
        }),
      );
      return;
    }
    if (this._reconnectAttempt >= policy.maxAttempts) {
      this._events.emit("close", { code, reason, wasClean, willReconnect: false });
      this._fatal(new CribbageError("reconnect_exhausted", `gave up after ${this._reconnectAttempt} reconnects`, { closeCode: code }));
      return;
    }
    const delayMs = backoffDelay(this._reconnectAttempt, policy, this._random);
    this._reconnectAttempt += 1;
    this._events.emit("close", { code, reason, wasClean, willReconnect: true, delayMs });
    this._setState("reconnecting");
    clearTimeout(this._reconnectTimer);
    this._reconnectTimer = setTimeout(() => {
      this._reconnectTimer = null;
      if (!this._closedForGood) this._openSocket();
    }, delayMs);
  }

  /** Give up on a connection that stopped answering (treated like 1006). */
  _dropSocket(reason) {
    const ws = this._ws;
    if (!ws) return;
    this._detachSocket();
    try {
      ws.close(4000, reason);
    } catch {
      /* ignore */
    }
    this._onClose(1006, reason, false);
  }

  /** Stop for good: reject everything waiting, emit the error (unless the app closed). */
  _fatal(error) {
    const ws = this._ws;
    this._detachSocket();
    if (ws) {
      try {
        ws.close(1000, error.code);
      } catch {
        /* ignore */
      }
    }
    this._events.emit("error", { code: error.code, message: error.message, fatal: true, closeCode: error.closeCode, error });
    this._finish(error, null);
  }

  _finish(error, closeDetail) {
    if (this._closedForGood) return;
    this._closedForGood = true;
    clearTimeout(this._reconnectTimer);
    this._reconnectTimer = null;
    this._stopConnectionTimers();
    this._failActs(error);
    for (const w of this._joinWaiters.splice(0)) w.reject(error);
    for (const kind of Object.keys(this._waiters)) {
      for (const w of this._waiters[kind].splice(0)) {
        clearTimeout(w.timer);
        w.reject(error);
      }
    }
    for (const w of this._openWaiters.splice(0)) w.reject(error);
    if (this._connectReject) this._connectReject(error);
    if (closeDetail) this._events.emit("close", { ...closeDetail, wasClean: true, willReconnect: false });
    this._setState("closed");
  }

  _failActs(error) {
    for (const entry of this._pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(error);
    }
    this._pending.clear();
  }

  _send(message) {
    if (!this._socketOpen()) return false;
    let frame;
    try {
      frame = this._codec.encode(message);
    } catch (err) {
      this._events.emit("error", { code: "bad_message", message: `cannot encode ${message.type}: ${err.message}`, fatal: false, error: err });
      return false;
    }
    let slot = 0;
    const now = monotonicMs();
    if (this._rate > 0 && message.type !== "hello") {
      this._tokens = Math.min(this._burst, this._tokens + ((now - this._stamp) / 1000) * this._rate);
      this._stamp = now;
      this._tokens -= 1; // this frame's, taken now: later frames queue behind it
      if (this._tokens < 0) slot = now + Math.ceil((-this._tokens / this._rate) * 1000);
    } else if (this._paceMs > 0) {
      slot = Math.max(now, this._nextSendAt);
      this._nextSendAt = slot + this._paceMs;
    }
    if (slot > now || this._outbox.length) {
      this._outbox.push({ ws: this._ws, frame, message, at: Math.max(slot, now) });
      if (this._outboxTimer === null) this._flushOutboxLater();
      return true;
    }
    this._ws.send(frame);
    this._events.emit("sent", message);
    return true;
  }

  /** Learn the pace from a `rate_limited` refusal's `retry_after` (seconds): at least the
   * wait named, half as long again at each refusal met while paced (still too fast). */
  _learnPace(retryAfter) {
    const ms = Math.round((retryAfter ?? 0.05) * 1000);
    this._paceMs = Math.max(Math.round(this._paceMs * 1.5), ms);
  }

  _flushOutboxLater() {
    const first = this._outbox[0];
    if (!first) return;
    this._outboxTimer = setTimeout(() => {
      this._outboxTimer = null;
      while (this._outbox.length && this._outbox[0].at <= monotonicMs()) {
        const { ws, frame, message } = this._outbox.shift();
        // A frame queued for a socket that has gone since is dropped: the new connection
        // starts with its own hello, and what it needs again is sent again.
        if (ws !== this._ws || !this._socketOpen()) continue;
        ws.send(frame);
        this._events.emit("sent", message);
      }
      this._flushOutboxLater();
    }, Math.max(0, first.at - monotonicMs()));
  }

  _dropOutbox() {
    clearTimeout(this._outboxTimer);
    this._outboxTimer = null;
    this._outbox = [];
    this._nextSendAt = 0;
  }

  // -- internals: receiving -----------------------------------------------------------------

  _onData(data, gen) {
    // Frames are handled strictly in order; a Blob (a runtime that ignores binaryType)
    // has to be read first, so everything after it waits in the inbox.
    if (this._inboxBusy || isBlob(data)) {
      this._inbox.push(data);
      if (!this._inboxBusy) this._drainInbox(gen);
      return;
    }
    this._handleData(data);
  }

  async _drainInbox(gen) {
    this._inboxBusy = true;
    try {
      while (this._inbox.length > 0 && gen === this._gen) {
        let data = this._inbox.shift();
        if (isBlob(data)) data = await data.arrayBuffer();
        if (gen !== this._gen) return;
        this._handleData(data);
      }
    } finally {
      if (gen === this._gen) this._inboxBusy = false;
    }
  }

  _handleData(data) {
    let frame;
    try {
      frame = this._codec.decode(data);
    } catch (err) {
      this._events.emit("error", { code: "bad_frame", message: `undecodable frame: ${err.message}`, fatal: false, error: err });
      return;
    }
    if (frame === null || typeof frame !== "object" || typeof frame.type !== "string") {
      this._events.emit("error", { code: "bad_frame", message: "a frame that is not a message", fatal: false });
      return;
    }
    this._events.emit("message", frame);
    switch (frame.type) {
      case "welcome":
        return this._onWelcome(frame);
      case "snapshot":
        return this._onSnapshot(frame);
      case "update":
        return this._onUpdate(frame);
      case "ack":
        return this._onAck(frame);
      case "reject":
        return this._onReject(frame);
      case "presence":
        return this._onPresence(frame);
      case "pong":
        return this._onPong(frame);
      case "error":
        return this._onServerError(frame);
      case "room_created":
        this._events.emit("room_created", frame);
        return this._settle("room_created", true, frame);
      case "hint":
        this._events.emit("hint", frame);
        return this._settle("hint", true, frame);
      case "left":
        return this._settle("left", true, frame);
      case "history":
        this._events.emit("history", frame);
        return this._settle("history", true, frame);
      case "lobby":
      case "lobby_update":
        return this._onLobby(frame);
      case "queue_status":
      case "queue_left":
      case "matched":
        this._events.emit(frame.type, frame); // quick match (queueJoin)
        return undefined;
      case "chat":
      case "chat_hidden":
      case "chat_muted":
      case "chat_reported":
        this._events.emit(frame.type, frame); // table talk (chat, chatMute, chatReport)
        return undefined;
      default:
        return undefined; // a message type this version does not know: ignored (protocol.md)
    }
  }

  _onWelcome(frame) {
    this.welcome = frame;
    this._welcomed = true;
    if (frame.frame_rate > 0) {
      // The server's budget started full when the connection opened; hello took one.
      this._rate = 0.95 * frame.frame_rate;
      this._burst = Math.max(1, (frame.frame_burst || 1) - 1);
      this._tokens = this._burst - 1;
      this._stamp = monotonicMs();
    } else {
      this._rate = 0;
    }
    this.playerToken = frame.player_token;
    this._events.emit("welcome", frame);
    this._startPinging();
    if (this._lobbyFilters !== null) this._send({ type: "lobby_subscribe", ...this._lobbyFilters });
    if (this._target) this._sendJoin();
    else this._becomeOpen();
  }

  _becomeOpen() {
    const first = this._connectResolve;
    this._reconnectAttempt = 0;
    this._setState("open");
    if (first) {
      this._connectResolve = null;
      this._connectReject = null;
      first(this.welcome);
    }
    this._flushActs();
  }

  _sendJoin() {
    const target = this._target;
    if (!target || !this._socketOpen()) return;
    const message = { type: "join", room: target.room, seat: target.seat };
    if (target.token) message.token = target.token;
    // Coming back to the room: ask for what happened since (snapshot.missed), from the
    // version the app named (until the first snapshot) or the one this client holds.
    if (target.since !== null && target.since !== undefined) message.since = target.since;
    else if (this.room === target.room && this.version >= 0) message.since = this.version;
    this._send(message);
    clearTimeout(this._joinTimer);
    if (this._opts.requestTimeoutMs > 0) {
      this._joinTimer = setTimeout(() => this._dropSocket("join not answered"), this._opts.requestTimeoutMs);
    }
  }

  _onSnapshot(frame) {
    const target = this._target;
    if (!target || frame.room !== target.room) return; // a room this client no longer follows
    clearTimeout(this._joinTimer);
    clearTimeout(this._resyncTimer);
    this._joinTimer = this._resyncTimer = null;
    const joining = !this._joined;
    this._joined = true;
    this._joinRetries = 0;
    this._resyncing = false;
    const previousStatus = this.status;
    this.room = frame.room;
    this.seat = frame.seat ?? null;
    target.seat = this.seat;
    target.since = null; // from now on the client's own version says where it is
    if (frame.seat_token) {
      this.seatToken = frame.seat_token;
      target.token = frame.seat_token;
    }
    this.version = frame.version;
    this.view = frame.view ?? null;
    this.seats = Array.isArray(frame.seats) ? frame.seats : [];
    this.status = frame.status;
    this.options = frame.options ?? null;
    this.roomSettings = frame.room_settings ?? null;
    this._legal = Array.isArray(frame.legal) ? frame.legal : null;
    this._events.emit("snapshot", frame);
    // The versions this connection missed, each with its events (join/resync `since`,
    // updates the server could not send, the join that started the game).
    if (Array.isArray(frame.missed)) {
      for (const entry of frame.missed) {
        for (const event of entry.events || []) {
          this._events.emit("event", { event, version: entry.version, fromSnapshot: true });
        }
      }
    }
    this._events.emit("seats", { seats: this.seats, version: this.version });
    if (previousStatus !== this.status) this._events.emit("status", { status: this.status, previous: previousStatus });
    this._events.emit("view", { view: this.view, version: this.version, cause: "snapshot" });
    for (const w of this._joinWaiters.splice(0)) w.resolve(frame);
    if (this.connectionState !== "open") this._becomeOpen();
    else if (joining) this._flushActs();
  }

  _onUpdate(frame) {
    if (!this._joined || frame.room !== this.room || this._resyncing) return;
    if (frame.version <= this.version) return; // already have it
    if (frame.version !== this.version + 1) {
      this._requestResync("gap", { expected: this.version + 1, received: frame.version });
      return;
    }
    let view;
    try {
      view = applyPatch(this.view, frame.patch);
    } catch (err) {
      this._requestResync("patch_failed", { received: frame.version, error: err });
      return;
    }
    const previousStatus = this.status;
    this.view = view;
    this.version = frame.version;
    this.status = frame.status;
    if (Array.isArray(frame.seats)) this.seats = frame.seats;
    if (Array.isArray(frame.legal)) this._legal = frame.legal;
    this._events.emit("update", frame);
    for (const event of frame.events || []) {
      this._events.emit("event", { event, version: frame.version, fromSnapshot: false });
    }
    if (Array.isArray(frame.seats)) this._events.emit("seats", { seats: this.seats, version: this.version });
    if (previousStatus !== this.status) this._events.emit("status", { status: this.status, previous: previousStatus });
    this._events.emit("view", { view: this.view, version: this.version, cause: "update" });
  }

  _requestResync(reason, detail) {
    if (this._resyncing || !this._joined || !this._socketOpen()) return;
    this._resyncing = true;
    this._send(this.version >= 0 ? { type: "resync", since: this.version } : { type: "resync" });
    this._events.emit("resync", { reason, version: this.version, ...detail });
    clearTimeout(this._resyncTimer);
    if (this._opts.requestTimeoutMs > 0) {
      this._resyncTimer = setTimeout(() => this._dropSocket("resync not answered"), this._opts.requestTimeoutMs);
    }
  }

  _onPresence(frame) {
    if (frame.room !== this.room) return;
    this.seats = this.seats.map((s) =>
      s.seat === frame.seat
        ? {
            ...s,
            connected: frame.connected,
            computer_standin: frame.computer_standin ?? s.computer_standin,
            // A rated room's seat left during this game (docs/protocol.md "Rated rooms").
            abandoned: frame.abandoned ?? s.abandoned ?? false,
            // When the computer takes over this away seat (Unix ms), or null.
            takeover_at: frame.connected ? null : frame.takeover_at ?? null,
            ...(frame.name !== undefined && frame.name !== null ? { name: frame.name } : {}),
          }
        : s,
    );
    this._events.emit("presence", frame);
    this._events.emit("seats", { seats: this.seats, version: this.version });
  }

  // -- internals: acts ----------------------------------------------------------------------

  _canAct() {
    return this.connectionState === "open" && this._joined && this._socketOpen();
  }

  _sendAct(entry) {
    if (!this._canAct() || entry.timer) return;
    if (this._send({ type: "act", action_id: entry.actionId, action: entry.action })) entry.sends += 1;
  }

  _flushActs() {
    if (!this._canAct()) return;
    for (const entry of this._pending.values()) {
      clearTimeout(entry.timer);
      entry.timer = null;
      this._sendAct(entry);
    }
  }

  _onAck(frame) {
    const entry = this._pending.get(frame.action_id);
    if (!entry) return;
    this._pending.delete(frame.action_id);
    clearTimeout(entry.timer);
    this._events.emit("ack", frame);
    entry.resolve(frame);
  }

  _onReject(frame) {
    const entry = this._pending.get(frame.action_id);
    if (!entry) return;
    if (frame.code === "rate_limited") {
      this._learnPace(frame.retry_after);
      // Over the connection's frame rate: not applied; send it again (same id) once the
      // server says a frame will be taken. Not counted as a retry: a client that keeps
      // flooding is closed by the server (1008) instead.
      const delayMs = Math.max(10, Math.round((frame.retry_after ?? 0.05) * 1000));
      this._events.emit("act_retry", { actionId: entry.actionId, code: frame.code, retry: entry.retries, delayMs });
      clearTimeout(entry.timer);
      entry.timer = setTimeout(() => {
        entry.timer = null;
        this._sendAct(entry);
      }, delayMs);
      return;
    }
    const policy = this._opts.actRetry;
    if (policy.codes.includes(frame.code) && entry.retries < policy.maxRetries) {
      // A busy server names how long it let the action wait (`retry_after`): no sooner.
      const delayMs = Math.max(backoffDelay(entry.retries, policy, this._random),
        Math.round((frame.retry_after ?? 0) * 1000));
      entry.retries += 1;
      this._events.emit("act_retry", { actionId: entry.actionId, code: frame.code, retry: entry.retries, delayMs });
      clearTimeout(entry.timer);
      entry.timer = setTimeout(() => {
        entry.timer = null;
        this._sendAct(entry);
      }, delayMs);
      return;
    }
    this._pending.delete(frame.action_id);
    clearTimeout(entry.timer);
    this._events.emit("reject", frame);
    entry.resolve(frame);
  }

  // -- internals: requests, errors, pings ------------------------------------------------------

  _request(kind, message, afterSend) {
    return this._whenOpen().then(
      () =>
        new Promise((resolve, reject) => {
          const waiter = { resolve, reject, timer: null, message };
          const timeout = this._opts.requestTimeoutMs;
          if (timeout > 0) {
            waiter.timer = setTimeout(() => {
              const list = this._waiters[kind];
              const i = list.indexOf(waiter);
              if (i >= 0) list.splice(i, 1);
              reject(new CribbageError("timeout", `no answer to ${message.type} within ${timeout} ms`));
            }, timeout);
          }
          this._waiters[kind].push(waiter);
          if (!this._send(message)) {
            this._waiters[kind].splice(this._waiters[kind].indexOf(waiter), 1);
            clearTimeout(waiter.timer);
            reject(new CribbageError("not_connected", "the connection is not open"));
          } else if (afterSend) afterSend(waiter);
        }),
    );
  }

  _settle(kind, ok, value) {
    const waiter = this._waiters[kind][0];
    if (waiter) this._settleWaiter(kind, waiter, ok, value);
  }

  _settleWaiter(kind, waiter, ok, value) {
    const list = this._waiters[kind];
    const i = list.indexOf(waiter);
    if (i < 0) return;
    list.splice(i, 1);
    clearTimeout(waiter.timer);
    if (ok) waiter.resolve(value);
    else waiter.reject(value);
  }

  _onServerError(frame) {
    const error = new CribbageError(frame.code, frame.message, { frame });
    // Over the frame rate, or a hint the server is too busy to make now or that this
    // address has had too many of (`too_many_hints`): not handled, so sent again after
    // `retry_after` (until the request's own timeout).
    const later = frame.code === "rate_limited"
      || ((frame.code === "busy" || frame.code === "too_many_hints")
        && frame.ref === "hint" && frame.retry_after != null);
    if (frame.code === "rate_limited") this._learnPace(frame.retry_after);
    if (later && this._retryLimited(frame)) return;
    switch (frame.ref) {
      case "hello":
        this._fatal(error);
        return;
      case "join":
        this._onJoinError(frame, error);
        return;
      case "create_room":
        if (this._waiters.room_created.length) return this._settle("room_created", false, error);
        break;
      case "hint":
        if (this._waiters.hint.length) return this._settle("hint", false, error);
        break;
      case "leave":
        if (this._waiters.left.length) return this._settle("left", false, error);
        break;
      case "set_computer":
        if (this._waiters.set_computer.length) return this._settle("set_computer", false, error);
        break;
      case "history":
        if (this._waiters.history.length) return this._settle("history", false, error);
        break;
      case "resync":
        this._resyncing = false;
        clearTimeout(this._resyncTimer);
        break;
      default:
        break;
    }
    this._events.emit("error", { code: frame.code, message: frame.message, ref: frame.ref ?? null, fatal: false, frame });
  }

  /** A message refused as over the connection's frame rate was not handled, so sending it
   * again is always safe: a join, a resync or a waiting request (create_room, hint, history,
   * leave) is sent again after `retry_after`; true when handled here. (A refused
   * `set_computer` fails with the error, whose `frame.retry_after` the app may honour: its
   * success is learned from a ping that follows it, which a resend would overtake.) */
  _retryLimited(frame) {
    const delayMs = Math.max(10, Math.round((frame.retry_after ?? 0.05) * 1000));
    const gen = this._gen;
    const kind = LIMITED_REQUESTS[frame.ref];
    if (kind && this._waiters[kind].length) {
      // Answers come in the order of the requests, so the refused one is the oldest waiting.
      const waiter = this._waiters[kind][0];
      setTimeout(() => {
        // Not sent again for a request that has ended meanwhile (its timeout).
        if (gen === this._gen && this._waiters[kind].includes(waiter)) this._send(waiter.message);
      }, delayMs);
      return true;
    }
    if (frame.ref === "join" && this._target) {
      clearTimeout(this._joinTimer);
      this._joinTimer = setTimeout(() => {
        if (gen === this._gen) this._sendJoin();
      }, delayMs);
      return true;
    }
    if (frame.ref === "resync") {
      this._resyncing = false;
      clearTimeout(this._resyncTimer);
      setTimeout(() => {
        if (gen === this._gen) this._requestResync("rate_limited", {});
      }, delayMs);
      return true;
    }
    if (frame.ref === "ping") {
      // The refused ping gets no pong: forget the automatic one so that the next goes out
      // on its own schedule instead of the connection being dropped as unanswered.
      for (const [nonce, p] of this._pings) {
        if (p.auto) {
          clearTimeout(p.timer);
          this._pings.delete(nonce);
        }
      }
      return true;
    }
    return false;
  }

  _onJoinError(frame, error) {
    clearTimeout(this._joinTimer);
    this._joinTimer = null;
    const policy = this._opts.actRetry;
    if (this._target && RETRY_CODES.includes(frame.code) && this._joinRetries < policy.maxRetries) {
      const delayMs = backoffDelay(this._joinRetries, policy, this._random);
      this._joinRetries += 1;
      this._events.emit("join_retry", { room: this._target.room, code: frame.code, retry: this._joinRetries, delayMs });
      const gen = this._gen;
      this._joinTimer = setTimeout(() => {
        if (gen === this._gen) this._sendJoin();
      }, delayMs);
      return;
    }
    const resuming = this._joinWaiters.length === 0;
    this._target = null;
    this._joined = false;
    this._resetRoom();
    for (const w of this._joinWaiters.splice(0)) w.reject(error);
    this._failActs(error);
    if (resuming) {
      this._events.emit("error", { code: frame.code, message: frame.message, ref: "join", fatal: false, frame });
    }
    if (this.connectionState !== "open") this._becomeOpen();
  }

  _startPinging() {
    clearInterval(this._pingTimer);
    const every = this._opts.pingIntervalMs;
    if (!(every > 0)) return;
    this._pingTimer = setInterval(() => {
      // One automatic ping at a time; a connection that leaves it unanswered is dropped.
      for (const p of this._pings.values()) if (p.auto) return;
      this._sendPing({ auto: true });
    }, every);
  }

  _sendPing(waiter) {
    this._nonce += 1;
    const nonce = this._nonce;
    const entry = { ...waiter, sentAt: Date.now(), timer: null };
    const timeout = waiter.auto ? this._opts.pongTimeoutMs : this._opts.requestTimeoutMs;
    if (timeout > 0) {
      entry.timer = setTimeout(() => {
        this._pings.delete(nonce);
        if (waiter.auto) this._dropSocket("pong not received");
        else waiter.reject(new CribbageError("timeout", `no pong within ${timeout} ms`));
      }, timeout);
    }
    this._pings.set(nonce, entry);
    if (!this._send({ type: "ping", nonce })) {
      clearTimeout(entry.timer);
      this._pings.delete(nonce);
      waiter.reject?.(new CribbageError("not_connected", "the connection is not open"));
    }
  }

  _onPong(frame) {
    const entry = this._pings.get(frame.nonce);
    if (entry) {
      this._pings.delete(frame.nonce);
      clearTimeout(entry.timer);
      const now = Date.now();
      if (typeof frame.time === "number") {
        this.serverClockOffsetMs = Math.round(frame.time * 1000 - (entry.sentAt + now) / 2);
      }
    }
    this._events.emit("pong", frame);
    if (entry && entry.resolve) entry.resolve(frame);
    if (frame.room && frame.room === this.room && typeof frame.version === "number" && frame.version > this.version) {
      this._checkBehind(frame.version);
    }
  }

  // The server's latest version is ahead of ours. An update may be on its way (the pong
  // can overtake it inside the server), so look again a moment later before resyncing.
  _checkBehind(serverVersion) {
    if (this._behindTimer) return;
    const gen = this._gen;
    this._behindTimer = setTimeout(() => {
      this._behindTimer = null;
      if (gen !== this._gen) return;
      if (this.version < serverVersion && this._pending.size === 0 && !this._resyncing) {
        this._requestResync("behind", { serverVersion });
      }
    }, this._opts.pongGraceMs);
  }

  _resetRoom() {
    this.room = null;
    this.seat = null;
    this.seatToken = null;
    this.version = -1;
    this.view = null;
    this.seats = [];
    this.status = null;
    this.options = null;
    this.roomSettings = null;
    this._legal = null;
    this._resyncing = false;
  }
}

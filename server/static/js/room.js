// The room page, /r/<room>: the lobby (type a name, take a free seat or watch), the waiting
// room, and the table itself.
//
// The connection is the JavaScript client library (clients/js, served from
// /static/vendor/cribbage-client/): it joins, keeps the seat's `view` current, reconnects
// and resumes by token, and re-sends unanswered acts. What this seat may do comes from the
// server's legal moves (`view.legal`, through `legalActions()`): the page has no rules of
// its own. The story of the game (the play-by-play, the cut for deal, the lines under the
// board, the whole game) is every version's events, from updates, snapshots' `missed` and
// the server's `history` after a reload or a late join (story.js).
//
// The page re-renders whole on every change (the DOM is small) and keeps keyboard focus
// across renders (dom.js).
import { CribbageClient, RETRY_CODES } from "../vendor/cribbage-client/index.js";
import { COMPACT_QUERY, board } from "./board.js";
import { cardBack, cardEl, cardShort, cardsShort, sortCards } from "./cards.js";
import { CHAT_MODES, CHAT_REFS, ChatState, chatPanel } from "./chat.js";
import {
  backupLine, capitalize, codeText, describeOptions, gameOverLines, logLine, makeNames, matchLines,
  discardChoiceText, matchScore, playHintSentences, sayShow,
} from "./describe.js";
import { h, replaceKeepingFocus } from "./dom.js";
import { formatList, formatNumber, onLanguageChange, t } from "./i18n.js";
import { icon } from "./icons.js";
import { topBar } from "./layout.js";
import { downloadReplay, fetchReplay, replayPanel } from "./replay.js";
import { play as playSound } from "./sound.js";
import { ensurePlayer, forgetPlayer, loadPlayer } from "./player.js";
import { loadName, loadRoom, saveName, updateRoom } from "./storage.js";
import { Story, countsOfDeal } from "./story.js";

const LOG_LINES = 80;
const LOBBY_POLL_MS = 3000;
// At game over: the waits before reading the summary again for the archived game's id
// when a read failed (then no link).
const ARCHIVED_RETRY_MS = [2000, 5000, 15000];
const DEFAULT_ANSWER_WINDOW = 15;
/** Reject codes of a Muggins answer that lost a race (docs/protocol.md): "too late". */
const TOO_LATE = new Set([
  "stale_answer", "nothing_to_answer", "already_answered", "wrong_phase", "not_an_opponent", "game_over",
]);
/** Join errors after which the stored seat is not ours any more (seat_blocked: a block
 * between this player and one at the table, docs/protocol.md "Challenges, blocks and online
 * now": back to the lobby, where watching is still open). */
const SEAT_LOST = new Set(["seat_taken", "bad_token", "bad_seat", "already_seated", "seat_blocked"]);
/** Join errors about the name (docs/protocol.md "Seat names"): choose another, then sit. */
const NAME_REFUSED = new Set(["bad_name", "name_taken"]);
/** Seconds left under which a turn clock is said aloud once, and drawn urgent. */
const CLOCK_URGENT = 10;

function wsUrl() {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
}

export function roomPage(root, roomId) {
  const stored = loadRoom(roomId);
  const state = {
    mode: "loading", // loading | lobby | missing | table
    summary: null, // GET /api/rooms/{id}, for the lobby
    archived: null, // {number, id}: the finished game's id in the archive (its grading)
    archivedAsked: null, // the game number whose archive id was asked for
    name: loadName(),
    client: null,
    connStatus: "connecting",
    seat: null, // my seat, null when watching
    seats: [],
    roomStatus: "waiting",
    options: {},
    roomInfo: roomSettings(stored), // room_settings: hints, answer window, takeover grace
    view: null,
    version: -1,
    story: new Story(),
    selected: new Set(),
    hint: null,
    message: null,
    announce: "",
    answerDeadline: null,
    creatorToken: stored.creatorToken || null,
    computerLevel: {},
    copied: false,
    inFlight: false,
    wholeGame: false,
    replay: null, // {data, step} while watching the replay in the page
    replayBusy: false,
    greeted: false,
    chat: new ChatState(), // the table's talk (chat.js)
  };
  let lobbyTimer = null;
  let tickTimer = null;
  let lastJoin = { seat: null, seatToken: null };
  let resumedOwnSeat = false; // the lobby took this player's own seat back once
  let playersReplaced = 0;

  // ---------------------------------------------------------------- connection ---------
  function connect(seat, seatToken) {
    state.client?.close();
    lastJoin = { seat, seatToken };
    const record = loadRoom(roomId);
    state.mode = "table";
    state.seat = seat;
    state.story = new Story();
    state.greeted = false;
    state.chat = new ChatState();
    const client = new CribbageClient({
      url: wsUrl(),
      name: state.name.trim() || t("name.guest"),
      playerToken: record.playerToken || null,
      player: loadPlayer(), // the player this browser is (player.js): its seats are its own
      client: "web/2",
    });
    state.client = client;
    client.on("state", ({ state: s }) => {
      if (state.client !== client) return;
      state.connStatus = s === "reconnecting" ? "retrying" : s;
      render();
    });
    client.on("welcome", (w) => {
      updateRoom(roomId, { playerToken: w.player_token });
      // The server knows this player: read whom they muted (once per connection made here).
      if (w.player && state.client === client && !state.chat.mutesRead) {
        state.chat.mutesRead = true;
        loadMutes(state.chat);
      }
    });
    client.on("snapshot", (frame) => { if (state.client === client) { onSnapshot(frame, client); render(); } });
    client.on("update", (frame) => { if (state.client === client) { onUpdate(frame, client); render(); } });
    client.on("presence", (frame) => { if (state.client === client) { onPresence(frame, client); render(); } });
    client.on("error", (e) => { if (state.client === client) { onClientError(e); render(); } });
    // Table talk (chat.js): a message, one a moderator hid, the answers to mute and report.
    client.on("chat", (frame) => { if (state.client === client) { state.chat.add(frame.message); render(); } });
    client.on("chat_hidden", (frame) => { if (state.client === client) { state.chat.hide(frame.id); render(); } });
    client.on("chat_muted", (frame) => { if (state.client === client) { state.chat.onMuted(frame); render(); } });
    client.on("chat_reported", (frame) => { if (state.client === client) { state.chat.onReported(frame); render(); } });
    // A move refused for now (the server is busy, or its store is away) is sent again by
    // the client library: say so instead of leaving the player wondering.
    client.on("act_retry", () => {
      if (state.client === client && state.inFlight) {
        state.message = { kind: "info", text: t("status.retrying") };
        render();
      }
    });
    client.join(roomId, seat, seatToken ? { token: seatToken } : {}).catch((err) => {
      if (state.client === client) { onJoinError(err); render(); }
    });
    stopLobbyPolling();
    render();
  }

  /** The players this browser's player muted (docs/protocol.md "Chat"), for the panel's
   * Unmute list; nothing when there is no player or the server cannot tell. */
  async function loadMutes(chat) {
    const me = loadPlayer();
    if (!me) return;
    try {
      const res = await fetch("/api/players/me/mutes", { headers: { Authorization: `Player ${me.id}.${me.secret}` } });
      if (!res.ok) return;
      const data = await res.json();
      if (state.chat !== chat) return;
      chat.knownMutes(data?.mutes);
      render();
    } catch {
      /* the list stays as this page learns it */
    }
  }

  function onSnapshot(frame, client) {
    state.seat = frame.seat ?? null;
    state.seats = client.seats;
    state.roomStatus = frame.status;
    state.options = frame.options || {};
    state.roomInfo = roomSettings(frame);
    state.chat.fromSnapshot(frame.chat);
    state.view = client.view;
    state.version = client.version;
    state.hint = null;
    state.inFlight = false;
    if (state.seat !== null) updateRoom(roomId, { seat: state.seat, seatToken: client.seatToken });
    sendPendingComputer(client);
    const story = state.story;
    if (frame.history_from) story.startAt(frame.history_from);
    for (const m of frame.missed || []) story.add(m.version, m.events);
    if (!state.greeted) {
      state.greeted = true;
      // Translated when shown (a function), so that a change of language reaches it.
      const n = state.seat === null ? null : state.seat + 1;
      if (n === null) story.addLocal(frame.version, () => t("log.watching"), "presence");
      else story.addLocal(frame.version, () => t("log.at_seat", { n }), "presence", state.seat);
    }
    fillStory(client);
  }

  /** After a reload, a late join or a long absence: read the game's story from the server. */
  function fillStory(client) {
    const story = state.story;
    if (story.first === null || story.loading || story.completeTo(state.version)) return;
    story.loading = true;
    client.historyAll().then((answer) => {
      if (state.story !== story) return;
      story.startAt(answer.first);
      for (const v of answer.versions) story.add(v.version, v.events);
      story.loading = false;
      story.failed = false;
      render();
    }).catch(() => {
      story.loading = false;
      story.failed = true;
      render();
    });
  }

  function onUpdate(frame, client) {
    const before = state.view;
    const wasMyMove = before ? myMove() : false;
    state.view = client.view;
    state.version = client.version;
    state.roomStatus = frame.status;
    state.seats = client.seats;
    state.inFlight = false;
    state.story.add(frame.version, frame.events);
    const v = state.view;
    // A hint is for the position it was asked in: gone once the phase, the turn, the deal
    // or the seat's own hand changes (a card laid with the turn staying here, when the
    // other side has no card left, changes only the hand).
    if (!before || before.phase !== v?.phase || before.turn !== v?.turn || before.deal_number !== v?.deal_number
        || (before.hand || []).length !== (v?.hand || []).length) {
      state.hint = null;
    }
    if (v && before && before.deal_number !== v.deal_number) state.selected.clear();
    let sound = null;
    for (const ev of frame.events) {
      if (ev.type === "play") sound = sound || "card";
      else if (ev.type === "peg" || ev.type === "backup") sound = "peg";
      else if (ev.type === "announce") {
        state.answerDeadline = Date.now() + Number(state.roomInfo.answer_window || DEFAULT_ANSWER_WINDOW) * 1000;
        state.announce = "";
      } else if (ev.type === "muggins_result") state.answerDeadline = null;
    }
    if (v && !wasMyMove && myMove()) sound = "turn";
    if (sound) playSound(sound);
  }

  function onPresence(frame, client) {
    const old = state.seats[frame.seat];
    state.seats = client.seats;
    if (!old || old.connected === frame.connected) return;
    const names = currentNames();
    const key = frame.connected ? "log.connected" : "log.disconnected";
    const who = names.seat(frame.seat), form = names.form(frame.seat);
    state.story.addLocal(state.version, () => t(key, { who, form }), "presence");
  }

  /** The server does not know the kept player (deleted, say): forget it, make a new one
   * (player.js) and connect again; the seat's token still holds the seat. */
  async function replacePlayer() {
    const client = state.client;
    if (!client) return; // already at it
    client.close();
    state.client = null;
    if (playersReplaced >= 2) forgetPlayer(); // and go on without one
    else {
      playersReplaced += 1;
      forgetPlayer();
      await ensurePlayer();
    }
    if (state.client === null) connect(lastJoin.seat, lastJoin.seatToken);
  }

  function onJoinError(err) {
    const code = err?.code;
    if (code === "superseded" || code === "closed") return;
    if (code === "bad_player") {
      replacePlayer();
      return;
    }
    if (code === "room_not_found") {
      state.client?.close();
      state.client = null;
      state.mode = "missing";
      return;
    }
    if (NAME_REFUSED.has(code)) {
      // The name cannot sit at this table: back to the lobby, the name box ready.
      updateRoom(roomId, { seat: null, seatToken: null, autoSit: null });
      state.client?.close();
      state.client = null;
      state.message = { kind: "error", text: codeText(code) };
      state.focusName = true;
      showLobby();
      return;
    }
    if (SEAT_LOST.has(code)) {
      // The stored seat is not ours any more (or someone took the seat first).
      updateRoom(roomId, { seat: null, seatToken: null });
      state.client?.close();
      state.client = null;
      state.message = { kind: "error", text: code === "seat_taken" ? t("error.seat_taken_pick") : codeText(code) };
      showLobby();
      return;
    }
    state.message = { kind: "error", text: codeText(code) };
  }

  function onClientError(e) {
    if (e.code === "bad_player") {
      onJoinError(e);
      return;
    }
    if (e.ref === "join" || (e.ref === "hello" && NAME_REFUSED.has(e.code))) {
      onJoinError(e);
      return;
    }
    if (e.ref === "history") return; // the story stays as it is
    if (CHAT_REFS.has(e.ref)) {
      // Said in the chat panel, where the message was written.
      state.chat.pending = null;
      state.chat.notice = { kind: "error", text: codeText(e.code) };
      return;
    }
    state.message = { kind: "error", text: codeText(e.code) };
  }

  function currentNames() {
    return makeNames(state.seats, state.view, state.seat);
  }

  function legal() {
    return state.client ? state.client.legalActions() : [];
  }

  /** Whether this seat has something to do now (the server's legal moves, less rematch). */
  function myMove() {
    return state.seat !== null && legal().some((a) => a.type !== "rematch");
  }

  async function act(action) {
    // One action at a time: a double click must not send the same card twice.
    if (state.inFlight || !state.client) return;
    state.inFlight = true;
    state.message = null;
    try {
      const answer = await state.client.act(action);
      if (answer.type === "reject") {
        state.message = TOO_LATE.has(answer.code) && action.type === "answer"
          ? { kind: "info", text: t("muggins.too_late") }
          : RETRY_CODES.includes(answer.code)
            // Not a rule broken: the server could not take the move just now.
            ? { kind: "error", text: codeText(answer.code) }
            : { kind: "error", text: t("error.not_allowed", { why: codeText(answer.code) }) };
      } else {
        state.message = null;
      }
    } catch (err) {
      state.message = { kind: "error", text: codeText(err.code) };
    } finally {
      state.inFlight = false;
      render();
    }
  }

  // ---------------------------------------------------------------- lobby --------------
  async function loadSummary() {
    try {
      // With this browser's player, the summary says which seat here is theirs.
      const me = loadPlayer();
      const res = await fetch(`/api/rooms/${encodeURIComponent(roomId)}`,
        { headers: me ? { Authorization: `Player ${me.id}.${me.secret}` } : {} });
      if (res.status === 404) {
        state.mode = "missing";
        stopLobbyPolling();
      } else if (res.ok) {
        state.summary = await res.json();
        // This browser's player sits here (another tab or device took the seat, or the
        // seat token was lost): take the seat back — a player's join needs no token.
        const mine = state.summary.your_seat;
        if (me && mine !== null && mine !== undefined && state.mode === "lobby" && !resumedOwnSeat) {
          resumedOwnSeat = true;
          connect(mine, null);
          return;
        }
      }
    } catch {
      /* keep the last summary; the next poll retries */
    }
    if (state.mode !== "table") render();
  }

  function showLobby() {
    state.mode = "lobby";
    state.seat = null;
    state.view = null;
    loadSummary();
    stopLobbyPolling();
    lobbyTimer = setInterval(loadSummary, LOBBY_POLL_MS);
  }

  function stopLobbyPolling() {
    clearInterval(lobbyTimer);
    lobbyTimer = null;
  }

  function sit(seat) {
    const name = state.name.trim();
    if (!name) {
      state.message = { kind: "error", text: t("error.name_first") };
      render();
      root.querySelector("#lobby-name")?.focus();
      return;
    }
    saveName(name);
    state.message = null;
    connect(seat, null);
  }

  function watch() {
    state.message = null;
    if (state.name.trim()) saveName(state.name.trim());
    connect(null, null);
  }

  function giveToComputer(seat) {
    const level = state.computerLevel[seat] || "standard";
    state.message = null;
    state.pendingComputer = { seat, level };
    if (!state.client) watch(); // not connected yet (the lobby): watch, then ask
    else sendPendingComputer(state.client);
  }

  function sendPendingComputer(client) {
    const pending = state.pendingComputer;
    if (!pending) return;
    state.pendingComputer = null;
    client.setComputer(pending.seat, pending.level, state.creatorToken, roomId).catch((err) => {
      state.message = { kind: "error", text: t("error.set_computer", { why: codeText(err.code) }) };
      render();
    });
  }

  // ---------------------------------------------------------------- rendering ----------
  function render() {
    let page;
    if (state.mode === "loading") page = h("main", { class: "center" }, h("h1", {}, t("chrome.brand")), h("p", {}, t("common.loading")));
    else if (state.mode === "missing") page = missingPage();
    else if (state.mode === "lobby") page = lobbyPage();
    else if (state.replay) page = replayPage();
    else page = tablePage();
    const scrolled = [".log", ".chat-list"].map((sel) => {
      const el = root.querySelector(sel);
      return { sel, atBottom: !el || el.scrollHeight - el.scrollTop - el.clientHeight < 40 };
    });
    replaceKeepingFocus(root, page);
    document.title = pageTitle();
    if (state.focusName && state.mode === "lobby") {
      const box = root.querySelector("#lobby-name");
      if (box) {
        state.focusName = false;
        box.focus();
        box.select();
      }
    }
    // Keep the play-by-play and the talk scrolled to the newest line, unless the reader
    // scrolled up.
    for (const { sel, atBottom } of scrolled) {
      const el = root.querySelector(sel);
      if (el && atBottom) el.scrollTop = el.scrollHeight;
    }
    // A running Muggins answer window or turn clock: redraw every second for the countdown.
    const clocks = Object.values(state.view?.turn_clock || {});
    const takeovers = state.mode === "table" && awaySeats().some((x) => x.takeover_at && !x.computer_standin);
    const ticking = !state.replay && ((state.answerDeadline && state.answerDeadline > Date.now()) || clocks.length > 0 || takeovers);
    if (ticking && !tickTimer) tickTimer = setInterval(render, 1000);
    if (!ticking && tickTimer) { clearInterval(tickTimer); tickTimer = null; }
  }

  /** The tab's title says when it is this player's move, for people in another tab. */
  function pageTitle() {
    const v = state.view;
    if (state.mode === "table" && v && myMove()) return t("title.your_move");
    if (v?.phase === "game_over") return t("title.game_over");
    return t("title.page");
  }

  function missingPage() {
    return h("div", {}, topBar(),
      h("main", { class: "center" },
        h("h1", {}, t("missing.title")),
        h("p", {}, t("missing.text")),
        h("p", {}, h("a", { href: "/" }, t("missing.new")))));
  }

  function shareBox(title = t("share.label")) {
    const link = `${location.origin}/r/${roomId}`;
    const copy = async () => {
      try {
        await navigator.clipboard.writeText(link);
      } catch {
        // Clipboard API unavailable (plain http on another host): copy the selected text.
        const input = root.querySelector("#share-link");
        input?.select();
        document.execCommand?.("copy");
      }
      state.copied = true;
      render();
      setTimeout(() => { state.copied = false; render(); }, 2000);
    };
    return h("div", { class: "share" },
      h("label", { for: "share-link" }, title),
      h("div", { class: "share-row" },
        h("input", { id: "share-link", value: link, readonly: true, "data-key": "share-link", "data-keep": "no",
          onfocus: (e) => e.target.select() }),
        h("button", { type: "button", onclick: copy, "data-key": "copy-link", id: "copy-link" },
          state.copied ? t("share.copied") : t("share.copy"))),
      h("span", { class: "sr-only", role: "status" }, state.copied ? t("share.copied_status") : ""));
  }

  function messageEl() {
    if (!state.message) return null;
    return h("p", { class: ["message", state.message.kind], role: "alert" }, state.message.text);
  }

  function seatKindText(seat) {
    if (seat.kind === "computer") return t("lobby.computer_seat", { level: t(`level.${seat.level || "standard"}`) });
    return seat.name;
  }

  /** A computer seat, marked so that no name can pass for it: a drawn computer and the
   * catalogue's words (names reading like them are refused, docs/protocol.md "Seat names"). */
  function computerTag(seat) {
    return h("span", { class: "computer-tag", "data-computer": seat.seat, "data-presence": "computer" },
      icon("computer"), seatKindText(seat));
  }

  /** A person's name, whole in the title and to assistive technology, cut with an
   * ellipsis where it does not fit. */
  function nameEl(text, cls = "seat-name") {
    return h("span", { class: cls, title: text }, text);
  }

  /** "Seat 1", and in partnerships "Seat 1 · team A" (partners sit opposite). */
  function seatLabel(seat, options) {
    return options?.partnerships ? `${t("seat.n", { n: seat + 1 })} · ${t("team.name", { team: seat % 2 ? "B" : "A" })}`
      : t("seat.n", { n: seat + 1 });
  }

  /** For a partnership table: who plays with whom, before anyone picks a seat. */
  function teamsNote(options) {
    if (!options?.partnerships) return null;
    return h("p", { class: "teams-note", id: "teams-note" }, t("lobby.teams"));
  }

  function lobbyPage() {
    const s = state.summary;
    const seats = s?.seats || [];
    const open = seats.filter((x) => !x.taken && x.kind !== "computer");
    const statusText = !s ? "" : s.status === "waiting" ? t("lobby.free_seats", { n: open.length })
      : s.status === "game_over" ? t("lobby.status_over") : t("lobby.status_playing");
    // A full table: nothing to sit at, so no name to type — say so, and offer to watch.
    const full = Boolean(s) && seats.length > 0 && !open.length;
    return h("div", {}, topBar(),
      h("main", { class: "lobby" },
        h("h1", {}, t("lobby.title")),
        s ? h("p", { class: "lede" }, describeOptions(s.options), " · ", statusText) : h("p", {}, t("common.loading")),
        s ? h("p", { class: "muted settings-desc" }, describeSettings(roomSettings(s), s.options)) : null,
        shareBox(),
        h("section", { class: "panel", "aria-labelledby": "lobby-seats-h" },
          full ? h("p", { class: "lobby-full", id: "lobby-full", role: "status" }, t("lobby.full")) : h("div", { class: "field" },
            h("label", { for: "lobby-name" }, t("form.your_name")),
            h("input", {
              id: "lobby-name", "data-key": "lobby-name", value: state.name, maxlength: 32, autocomplete: "nickname",
              oninput: (e) => { state.name = e.target.value; },
              onkeydown: (e) => { if (e.key === "Enter" && open.length) sit(open[0].seat); },
            })),
          messageEl(),
          h("h2", { id: "lobby-seats-h" }, t("lobby.seats")),
          teamsNote(s?.options),
          h("ul", { class: "seat-list" }, seats.map((seat) => h("li", { "data-seat": seat.seat, "data-team": s.options?.partnerships ? (seat.seat % 2 ? "B" : "A") : null },
            h("span", { class: "seat-label" }, seatLabel(seat.seat, s.options)),
            seat.kind === "computer"
              ? computerTag(seat)
              : seat.taken
                ? h("span", { class: "seat-who" }, nameEl(seat.name), seat.connected ? "" : ` ${t("lobby.away")}`)
                : h("button", { type: "button", class: "primary", onclick: () => sit(seat.seat), "data-key": `sit-${seat.seat}`,
                  "data-seat": seat.seat }, t("lobby.sit_here")),
            !seat.taken && seat.kind !== "computer" && state.creatorToken ? computerPicker(seat.seat) : null))),
          h("p", {}, h("button", { type: "button", onclick: watch, "data-key": "watch", id: "watch" }, t("lobby.watch")))),
        h("p", {}, h("a", { href: "/" }, t("lobby.other_table")))));
  }

  function computerPicker(seat) {
    return h("span", { class: "computer-picker" },
      h("label", { class: "sr-only", for: `level-${seat}` }, t("lobby.level_for", { n: seat + 1 })),
      h("select", {
        id: `level-${seat}`, "data-key": `level-${seat}`,
        onchange: (e) => { state.computerLevel[seat] = e.target.value; },
      },
      h("option", { value: "standard", selected: (state.computerLevel[seat] || "standard") === "standard" }, t("level.standard")),
      h("option", { value: "expert", selected: state.computerLevel[seat] === "expert" }, t("level.expert")),
      h("option", { value: "easy", selected: state.computerLevel[seat] === "easy" }, t("level.easy"))),
      h("button", { type: "button", onclick: () => giveToComputer(seat), "data-key": `computer-${seat}` }, t("lobby.give_computer")));
  }

  // ------------------------------------------------------------------ the table --------
  function connText() {
    return t(`conn.${state.connStatus}`);
  }

  function header() {
    return topBar({
      heading: h("span", { class: "options-desc" }, describeOptions(state.view?.options || state.options)),
      status: h("span", { class: ["conn", `conn-${state.connStatus}`], role: "status" }, connText()),
      sound: render,
    });
  }

  function tablePage() {
    const v = state.view;
    const names = currentNames();
    // While the last deal's show is up, the board and the players describe that deal.
    const side = v && reviewing() ? reviewedView(v) : v;
    const attrs = {
      id: "table", class: "table-page",
      "data-status": state.roomStatus, "data-phase": v?.phase || "waiting",
      "data-seat": state.seat ?? "", "data-turn": v?.turn ?? "", "data-game": v?.game_number ?? "",
      "data-deal": v?.deal_number ?? "", "data-version": state.version,
      "data-conn": state.connStatus, "data-review": reviewing() ? "show" : "",
      "data-story": state.story.loading ? "loading" : state.story.completeTo(state.version) ? "complete" : "partial",
    };
    return h("div", {}, header(),
      h("main", attrs,
        v ? null : waitingRoom(),
        v ? h("div", { class: "table-grid" },
          h("section", { class: "panel felt", "aria-labelledby": "felt-h" },
            h("h2", { id: "felt-h", class: "sr-only" }, t("table.title")),
            scoreStrip(v, names),
            matchBar(v, names),
            statusLine(v, names),
            othersClocks(v, names),
            awayNotice(v, names),
            messageEl(),
            reviewing() ? showReview(v, names) : [cutForDeal(v, names), playArea(v, names), myArea(v, names)]),
          h("section", { class: "panel board-panel", "aria-labelledby": "board-h" },
            h("h2", { id: "board-h" }, t("board.title")),
            board(side, names, { lowball: v.options.lowball }),
            linesUnderBoard(v, names),
            state.roomInfo.rated ? h("p", { class: "rated-badge", "data-rated": "true" }, t("settings.rated")) : null,
            playersList(side, names),
            // The link stays at hand during the game: others can watch (or take a seat
            // freed later) — one copy of it on the page, here or in the waiting room.
            shareBox(state.seats.some((x) => !x.taken) ? t("share.label") : t("share.watch_label"))),
          h("section", { class: "panel show-panel", "aria-labelledby": "show-h" }, showPanel(v, names)),
          logPanel(names),
          chatSection()) : null,
        v ? null : chatSection()));
  }

  // ------------------------------------------------------------------ table talk -------
  function chatSection() {
    const client = state.client;
    return chatPanel({
      chat: state.chat,
      mode: state.roomInfo.chat,
      me: client?.welcome?.player ?? null,
      mySeat: state.seat,
      watching: state.seat === null && state.roomStatus === "playing",
      canTalk: Boolean(client?.welcome?.player),
      render,
      send: (payload) => {
        state.chat.notice = null;
        const sent = Boolean(state.client?.chat(payload));
        if (!sent) state.chat.notice = { kind: "error", text: codeText("not_connected") };
        render();
        return sent;
      },
      mute: (m, block) => {
        state.chat.notice = null;
        state.chat.pending = { id: m.id, name: m.name, player: m.player ?? null };
        if (!state.client?.chatMute(m.id, { block })) state.chat.notice = { kind: "error", text: codeText("not_connected") };
        render();
      },
      unmute: (player) => {
        state.chat.notice = null;
        if (!state.client?.chatUnmute(player)) state.chat.notice = { kind: "error", text: codeText("not_connected") };
        render();
      },
      report: (m, reason, note) => {
        state.chat.notice = null;
        if (!state.client?.chatReport(m.id, reason, note)) state.chat.notice = { kind: "error", text: codeText("not_connected") };
        render();
      },
    });
  }

  function waitingRoom() {
    const open = state.seats.filter((s) => !s.taken);
    return h("section", { class: "panel waiting", "aria-labelledby": "waiting-h" },
      h("h2", { id: "waiting-h", class: "waiting-title" }, t("waiting.title")),
      h("p", {}, state.seats.length ? t("waiting.text", { n: open.length }) : t("waiting.connecting")),
      h("p", { class: "muted settings-desc" }, describeSettings(state.roomInfo, state.options)),
      shareBox(),
      messageEl(),
      teamsNote(state.options),
      h("ul", { class: "seat-list" }, state.seats.map((seat) => h("li", { "data-seat": seat.seat },
        h("span", { class: "seat-label" }, seatLabel(seat.seat, state.options)),
        seat.taken || seat.kind === "computer"
          ? h("span", { class: "seat-who" }, seat.kind === "computer" ? computerTag(seat)
            : [nameEl(seat.seat === state.seat ? t("players.you", { name: seat.name }) : seat.name), " ", presenceDot(seat)])
          : state.seat === null
            ? h("button", { type: "button", class: "primary", onclick: () => sit(seat.seat), "data-key": `sit-${seat.seat}` }, t("lobby.sit_here"))
            : h("span", { class: "muted" }, t("waiting.free")),
        !seat.taken && seat.kind !== "computer" && state.creatorToken ? computerPicker(seat.seat) : null))),
      state.seat === null && open.length ? h("div", { class: "field" },
        h("label", { for: "lobby-name" }, t("waiting.name_to_sit")),
        h("input", { id: "lobby-name", "data-key": "lobby-name", value: state.name, maxlength: 32,
          oninput: (e) => { state.name = e.target.value; } })) : null);
  }

  function presenceDot(seat) {
    const computer = seat.kind === "computer";
    const standin = !computer && seat.computer_standin;
    const text = computer ? t("presence.computer", { level: t(`level.${seat.level || "standard"}`) })
      : standin ? t("presence.standin")
        : seat.connected ? t("presence.online") : t("presence.away");
    return h("span", { class: ["presence", computer ? "bot" : standin ? "standin" : seat.connected ? "on" : "off"],
      "data-presence": computer ? "computer" : standin ? "standin" : seat.connected ? "on" : "off" },
    computer ? icon("computer") : h("span", { class: "dot", "aria-hidden": "true" }), text);
  }

  /** The lines under the board: the Back-up 10 lines of the deal whose show is on the
   * table (the one counted now, or the last one; the whole story is in the play-by-play),
   * and the result once the game is over — a rematch starts with none. */
  function linesUnderBoard(v, names) {
    const lines = [];
    const deal = showSource(v)?.deal ?? null;
    for (const d of state.story.byDeal()) {
      if (d.deal !== deal) continue;
      for (const { event } of d.events) {
        if (event.type === "backup") lines.push({ kind: "backup", text: backupLine(event, names), deal });
      }
    }
    if (v.result) for (const text of gameOverLines(v.result, names)) lines.push({ kind: "over", text });
    if (v.result && v.match) for (const text of matchLines(v.match, names)) lines.push({ kind: "match", text });
    if (!lines.length) return null;
    return h("ul", { class: "board-lines", "aria-label": t("board.lines") },
      lines.map((l) => h("li", { class: `line-${l.kind}`, "data-deal": l.deal ?? null }, l.text)));
  }

  /** The view as the board and the players' list draw it while the last deal's show is
   * reviewed: that deal's dealer (who had the crib), and no cards held, laid away or to
   * play — the new deal's cards wait behind the review. The scores are the same (nothing
   * scores between the show and the next starter); a running turn clock stays shown. */
  function reviewedView(v) {
    const crib = v.last_show.find((e) => e.kind === "crib");
    const deals = state.story.byDeal();
    const previous = deals.length > 2 ? deals[deals.length - 2].dealer : null;
    const dealer = crib ? crib.seat : previous ?? v.dealer;
    return { ...v, dealer, turn: null, go: [], reviewing: true };
  }

  function playersList(v, names) {
    return h("ul", { class: "players", "aria-label": t("players.title"), "data-dealer": v.dealer }, state.seats.map((seat) => {
      const s = seat.seat;
      const chips = [];
      if (v.dealer === s) chips.push(h("span", { class: "chip dealer" }, t("chip.dealer")));
      if (v.turn === s && v.phase !== "game_over") chips.push(h("span", { class: "chip turn" }, v.phase === "show" ? t("chip.to_announce") : t("chip.to_play")));
      if (v.phase === "discard" && v.discarded[s] && !v.reviewing) chips.push(h("span", { class: "chip done" }, t("chip.crib_done")));
      if (v.go?.[s]) chips.push(h("span", { class: "chip go" }, t("chip.go")));
      // A rated game's leaver (docs/rules.md §9.3): the mark stays after they are back.
      if (seat.abandoned) chips.push(h("span", { class: "chip abandoned", "data-abandoned": s, title: t("chip.abandoned_title") }, t("chip.abandoned")));
      const due = v.turn_clock?.[String(s)];
      if (due) {
        const left = secondsLeft(due);
        chips.push(h("span", {
          class: ["chip clock", left <= CLOCK_URGENT && "urgent"], "data-clock-seat": s, title: t("chip.clock_title"),
        }, icon("clock"), t("chip.clock", { n: left })));
      }
      const team = v.options.partnerships ? t("team.name", { team: v.sides[s] === 0 ? "A" : "B" }) : "";
      const held = v.reviewing ? team : [t("players.cards", { n: v.hand_sizes[s] }), team].filter(Boolean).join(" · ");
      const who = s === state.seat ? t("players.you", { name: seat.name || t("name.you") }) : names.seat(s);
      return h("li", { class: ["player", `side-${v.sides[s]}`, v.turn === s && "has-turn", s === state.seat && "me"], "data-seat": s },
        h("span", { class: "player-name", title: who },
          h("span", { class: "swatch", "aria-hidden": "true" }),
          h("span", { class: "name-text" }, who)),
        h("span", { class: "player-meta" },
          presenceDot(seat),
          h("span", { class: "held" }, held)),
        h("span", { class: "chips" }, chips));
    }));
  }

  /** Whole seconds from now (the server's clock) to a due time in Unix ms, at least 0. */
  function secondsLeft(dueMs) {
    return Math.max(0, Math.ceil((dueMs - Date.now() - (state.client?.serverClockOffsetMs || 0)) / 1000));
  }

  /** Human seats whose player is away now (no connection), stood in for or not. */
  function awaySeats() {
    return state.seats.filter((x) => x.kind === "human" && x.taken && !x.connected);
  }

  /** Whether any seated person is connected (else the table waits for its people). */
  function someoneSeated() {
    return state.seats.some((x) => x.kind === "human" && x.connected);
  }

  /**
   * On the felt: who is away and what happens to their seat — the computer takes it over in
   * so many seconds (the server's `takeover_at`), it plays for them now, or, with nobody
   * at the table, the game waits (docs/protocol.md, "presence").
   */
  function awayNotice(v, names) {
    if (v.phase === "game_over" || state.roomStatus !== "playing") return null;
    const away = awaySeats();
    if (!away.length) return null;
    const lines = [];
    if (!someoneSeated()) {
      lines.push(h("p", { "data-away": "waiting" }, icon("away"), t("away.table_waits")));
    } else {
      for (const seat of away) {
        const params = { who: names.seat(seat.seat), form: names.form(seat.seat) };
        let text;
        let left = null;
        if (seat.computer_standin) text = t("away.standin", params);
        else if (seat.takeover_at) {
          left = secondsLeft(seat.takeover_at);
          text = left > 0 ? t("away.takeover_in", { ...params, time: t("away.seconds", { n: left }) })
            : t("away.takeover_now", params);
        } else text = t("away.away", params);
        lines.push(h("p", { "data-away-seat": seat.seat, "data-left": left }, icon("away"), h("span", {}, text)));
      }
    }
    return h("div", { class: "away-notice", id: "away-notice" }, lines);
  }

  /** Other seats' turn clocks, under the status line: "Anna: 25 s to move". */
  function othersClocks(v, names) {
    const out = [];
    for (const [key, due] of Object.entries(v.turn_clock || {})) {
      const s = Number(key);
      if (s === state.seat) continue;
      const left = secondsLeft(due);
      out.push(h("span", { class: ["turn-timer", "other", left <= CLOCK_URGENT && "urgent"], "data-clock-seat": s },
        icon("clock"), t("clock.other", { who: names.seat(s), n: left })));
    }
    return out.length ? h("p", { class: "clocks-line" }, out) : null;
  }

  /** My turn clock, right above my cards: big, and said aloud once when time runs short. */
  function myClock(v) {
    const due = v.turn_clock?.[String(state.seat)];
    if (!due) return null;
    const left = secondsLeft(due);
    const urgent = left <= CLOCK_URGENT;
    return h("div", { class: ["turn-timer", "mine", urgent && "urgent"], id: "my-clock", "data-clock-seat": state.seat },
      icon("clock"),
      // Not a live region: read where it is, not every second; the status below is said
      // once, when the time turns short.
      h("span", { class: "turn-timer-text" }, t("clock.mine", { n: left })),
      h("span", { class: "sr-only", role: "status" }, urgent ? t("clock.short", { n: CLOCK_URGENT }) : ""));
  }

  /** The match score on the felt, when the room plays a match (docs/rules.md §8): games
   * won per side, the match's length and the game points. */
  function matchBar(v, names) {
    if (!v.match) return null;
    return h("p", { class: "match-score", id: "match-score", "data-key": "match-score",
      "data-over": v.match.over ? "true" : "false", "data-games": v.match.games.length },
    h("strong", {}, matchScore(v.match, names)), " · ", t("match.points", { points: v.match.points.join("–") }));
  }

  /** The scores in one line, for narrow screens where the board is below the table. */
  function scoreStrip(v, names) {
    const sides = [...new Set(v.sides)];
    return h("p", { class: "score-strip", "aria-hidden": "true" },
      sides.map((side) => h("span", { class: "strip-side" }, h("span", { class: "strip-name" }, names.side(side)), " ",
        h("strong", {}, String(v.scores[side])))),
      h("span", { class: "muted" }, t("options.to", { n: v.target })));
  }

  function statusLine(v, names) {
    let text;
    const me = state.seat;
    const acts = legal();
    if (reviewing()) text = t("status.review");
    else if (v.phase === "discard") {
      const discards = acts.filter((a) => a.type === "discard");
      text = discards.length
        ? t("status.choose", { n: discards[0].cards.length, whose: names.whose(v.dealer, "crib") })
        : t("status.waiting_discard", { who: waitingNames(v, names) });
    } else if (v.phase === "play") {
      text = v.turn === me ? t("status.your_turn", { count: v.count }) : t("status.to_play", { who: names.seat(v.turn), count: v.count });
    } else if (v.phase === "show") {
      const p = v.show.pending;
      if (!p) text = t("status.show");
      else if (p.announced === null) {
        text = p.seat === me ? t(`status.announce_${p.kind}`) : t(`status.counting_${p.kind}`, { who: names.seat(p.seat), form: names.form(p.seat) });
      } else if (acts.some((a) => a.type === "answer")) {
        text = t(`status.answer_${p.kind}`, { who: names.seat(p.seat), form: names.form(p.seat), n: p.announced });
      } else text = t("status.waiting_answers", { n: p.announced });
    } else if (v.phase === "game_over") {
      text = gameOverLines(v.result, names)[v.result.lowball ? 1 : 0] || t("status.game_over");
    }
    return h("p", { class: "status", role: "status", "aria-live": "polite", id: "status" }, text);
  }

  function waitingNames(v, names) {
    const left = v.discarded.map((d, s) => (d ? -1 : s)).filter((s) => s >= 0);
    return formatList(left.map((s) => names.object(s)));
  }

  /** The cut for deal, for everyone, all through the first deal. */
  function cutForDeal(v, names) {
    const cut = state.story.cut();
    if (!cut || v.deal_number !== 1 || v.phase === "game_over") return null;
    if (cut.reason !== "cut") {
      return h("p", { class: "cut-for-deal muted" }, logLine(cut, names));
    }
    return h("figure", { class: "cut-for-deal", "aria-labelledby": "cut-h" },
      h("figcaption", { id: "cut-h" }, t("cut.title")),
      h("ol", { class: "cut-rounds" }, cut.cuts.map((round) => h("li", {},
        round.map((c) => h("span", { class: "cut-card" },
          cardEl(c.card, { small: true, note: names.seat(c.seat) }), h("span", { class: "cut-who" }, names.seat(c.seat))))))),
      h("p", { class: "cut-result" }, t("cut.deals", { who: names.seat(cut.dealer), form: names.form(cut.dealer) })));
  }

  function playArea(v, names) {
    const pile = v.pile || [];
    const counts = countsOfDeal(state.story.currentDeal());
    const earlier = counts.filter((c) => c.closed);
    return h("div", { class: "play-area" },
      h("div", { class: "starter-crib" },
        h("figure", { class: "starter" },
          v.starter ? cardEl(v.starter, { note: t("table.starter_note") }) : h("span", { class: "card placeholder", "aria-hidden": "true" }),
          h("figcaption", {}, v.starter ? t("table.starter") : t("table.no_starter"))),
        h("figure", { class: "crib" },
          h("span", { class: "crib-cards" }, Array.from({ length: Math.max(v.crib_size, 1) }, (_, i) =>
            i < v.crib_size ? cardBack() : h("span", { class: "card small placeholder", "aria-hidden": "true" }))),
          h("figcaption", {}, t("table.crib_of", { whose: capitalize(names.whose(v.dealer, "crib")), n: v.crib_size })))),
      v.phase === "play" || pile.length ? h("div", { class: "count-box" },
        h("div", { class: "count" },
          h("span", { class: "count-label", id: "count-label" }, t("table.count")),
          h("strong", { id: "count", "aria-labelledby": "count-label count" }, String(v.count))),
        h("ol", { class: "pile", "aria-label": t("table.pile") }, pile.map((p) =>
          h("li", {}, cardEl(p.card, { small: true, note: names.seat(p.seat) }), h("span", { class: "pile-who" }, names.seat(p.seat)))))) : null,
      earlier.length && v.phase === "play" ? h("div", { class: "earlier" },
        h("span", { class: "earlier-label" }, t("table.earlier")),
        h("ol", { class: "earlier-counts" }, earlier.map((c) => h("li", {},
          c.cards.map((p) => cardEl(p.card, { small: true, note: names.seat(p.seat) })),
          h("span", { class: "earlier-count" }, t("table.count_reached", { n: c.count })))))) : null,
      recentLines(names));
  }

  /** The last few lines of the play, right on the table. */
  function recentLines(names) {
    const kinds = new Set(["peg", "go", "play", "count_reset", "starter"]);
    const recent = state.story.currentDeal().filter((e) => kinds.has(e.event.type)).slice(-4);
    if (!recent.length || state.view.phase === "discard") return null;
    return h("ul", { class: "recent", "aria-hidden": "true" }, recent.map((e) =>
      h("li", { class: `log-${e.event.type}` }, logLine(e.event, names))));
  }

  // ----------------------------------------------------- my hand and my actions --------
  function myArea(v, names) {
    const me = state.seat;
    if (me === null) return h("div", { class: "my-area" }, h("p", { class: "muted watching" }, t("table.watching"), sitWhileWatching()));
    const acts = legal();
    const hintCards = hintedCards();
    let cards;
    const actions = [];
    const discards = acts.filter((a) => a.type === "discard");
    const plays = new Set(acts.filter((a) => a.type === "play").map((a) => a.card));
    if (discards.length) {
      // Pick cards for the crib: cards toggle; "lay away" once they are a legal discard.
      const need = discards[0].cards.length;
      cards = sortCards(v.hand).map((c) => cardEl(c, {
        selected: state.selected.has(c), hint: hintCards.has(c),
        onclick: () => {
          if (state.selected.has(c)) state.selected.delete(c);
          else {
            if (state.selected.size >= need) state.selected.delete([...state.selected][0]);
            state.selected.add(c);
          }
          render();
        },
      }));
      const chosen = discards.find((a) => sameCards(a.cards, [...state.selected]));
      actions.push(h("button", {
        type: "button", class: "primary", id: "send-crib", "data-key": "send-crib", disabled: !chosen,
        onclick: () => {
          if (!chosen) return;
          act(chosen);
          state.selected.clear();
          // Keep keyboard users in the hand (the button goes away), not back at the page top.
          render();
          root.querySelector('[data-focus-region="hand"]')?.focus();
        },
      }, chosen ? t("hand.lay_away", { cards: cardsShort(chosen.cards) }) : t("hand.pick", { n: need })));
    } else if (v.phase === "play" && v.turn === me) {
      // My turn: every card is a button; the server's legal plays are enabled.
      cards = sortCards(v.hand).map((c) => cardEl(c, {
        disabled: !plays.has(c), hint: hintCards.has(c), note: plays.has(c) ? t("hand.playable") : "",
        onclick: () => act({ type: "play", card: c }),
      }));
    } else {
      cards = sortCards(heldCards(v)).map((c) => cardEl(c));
    }
    const rematch = acts.find((a) => a.type === "rematch");
    if (rematch) {
      actions.push(h("button", { type: "button", class: "primary", id: "rematch", "data-key": "rematch",
        onclick: () => act(rematch) },
      // In a match: the match's next game, or once it is over a new match (docs/rules.md §8.4).
      t(v.match ? (v.match.over ? "match.new_match" : "match.next_game") : "hand.rematch")));
    }
    if (v.phase === "game_over") actions.push(...replayButtons(), gradedLink(v));
    if (hintsAllowed() && myMove()) {
      actions.push(h("button", { type: "button", id: "hint", "data-key": "hint", onclick: askHint }, t("hint.button")));
    }
    const crib = v.my_discards?.length ? h("p", { class: "muted my-crib" }, t("hand.in_crib", { cards: cardsShort(sortCards(v.my_discards)) })) : null;
    return h("div", { class: "my-area" },
      h("h2", { class: "sr-only", id: "hand-h" }, t("hand.title")),
      myClock(v),
      h("div", { class: ["hand", v.phase === "play" && v.turn === me && "my-turn"], "data-focus-region": "hand",
        "data-key": "hand", tabindex: "-1", role: "group", "aria-labelledby": "hand-h" }, cards),
      crib,
      mugginsControls(v, names),
      actions.length ? h("div", { class: "actions" }, actions) : null,
      hintText());
  }

  function sitWhileWatching() {
    const open = state.seats.filter((s) => !s.taken && s.kind !== "computer");
    if (!open.length) return null;
    return h("span", {}, " ", ...open.map((s) => h("button", { type: "button", onclick: () => sit(s.seat), "data-key": `sit-${s.seat}` },
      t("table.sit_at", { n: s.seat + 1 }))));
  }

  function hintsAllowed() {
    return state.roomInfo?.hints === true;
  }

  async function askHint() {
    try {
      const answer = await state.client.hint();
      state.hint = answer.suggestion || null;
    } catch (err) {
      state.hint = { kind: "unavailable", text: err.code === "hints_disabled" ? t("hint.disabled") : t("hint.unavailable") };
    }
    render();
  }

  function hintedCards() {
    const best = state.hint?.best;
    if (!best) return new Set();
    if (best.type === "discard") return new Set(best.cards);
    if (best.type === "play") return new Set([best.card]);
    return new Set();
  }

  // A chance to win (0..1) in percent: whole percents, but one decimal below 1 % and above
  // 99 %, where whole percents would make different choices all read 0 or 100.
  function chanceText(p) {
    const pct = 100 * p;
    return formatNumber(pct, pct > 0 && pct < 100 && (pct < 1 || pct > 99) ? 1 : 0);
  }

  function hintText() {
    const hint = state.hint;
    if (!hint) return null;
    let body;
    if (hint.kind === "unavailable") body = hint.text;
    else if (hint.kind === "discard" && hint.best) {
      const top = (hint.choices || []).slice(0, 3);
      body = h("span", {}, t(hint.goal === "fewest" ? "hint.discard_fewest" : "hint.discard", { cards: cardsShort(sortCards(hint.best.cards)) }),
        top.length ? h("ol", { class: "hint-choices" }, top.map((c, i) =>
          h("li", {}, discardChoiceText(c, chanceText), " ",
            // One click picks the suggested cards; "lay away" still confirms.
            h("button", { type: "button", class: "link-button", "data-key": `hint-pick-${i}`,
              onclick: () => { state.selected = new Set(c.cards); render(); } },
              t(c.cards.length === 1 ? "hint.pick_one" : "hint.pick"))))) : null);
    } else if (hint.kind === "play" && hint.best) {
      // Why (describe.js playHintSentences): what the card pegs now and leaves the next
      // player, and what it is worth over the rest of the play or its chance to win.
      body = h("span", {}, t("hint.play", { card: cardShort(hint.best.card) }),
        playHintSentences(hint, state.view, chanceText).map((sentence) => [" ", sentence]));
    }
    else if (hint.kind === "announce") {
      body = h("span", { class: "hint-muggins" }, t(`hint.announce_${hint.counting === "crib" ? "crib" : "hand"}`),
        h("ul", { class: "hint-steps" }, t(hint.counting === "crib" ? "hint.count_steps_crib" : "hint.count_steps").map((step) => h("li", {}, step))));
    } else if (hint.kind === "answer") {
      body = h("span", { class: "hint-muggins" }, t("hint.answer", { n: hint.announced }),
        h("ul", { class: "hint-steps" }, t(hint.counting === "crib" ? "hint.count_steps_crib" : "hint.count_steps").map((step) => h("li", {}, step))));
    } else body = t("hint.nothing");
    return h("div", { class: "hint", role: "status" }, h("strong", {}, t("hint.label")), " ", body);
  }

  // ----------------------------------------------------------------- Muggins -----------
  function mugginsControls(v, names) {
    if (v.phase !== "show" || !v.show.pending || state.seat === null) return null;
    const p = v.show.pending;
    const acts = legal();
    const what = names.whose(p.seat, p.kind);
    const cards = h("div", { class: "pending-cards", role: "group", "aria-label": t("muggins.cards_label", { what }),
      "data-cards": p.cards.join(" "), "data-starter": v.starter, "data-kind": p.kind },
    sortCards(p.cards).map((c) => cardEl(c, { small: true })), h("span", { "aria-hidden": "true" }, " + "),
    v.starter ? cardEl(v.starter, { small: true, note: t("table.starter_note") }) : null);
    const announces = acts.filter((a) => a.type === "announce").map((a) => a.points);
    if (announces.length) {
      const min = Math.min(...announces);
      const max = Math.max(...announces);
      const send = (e) => {
        e.preventDefault();
        const n = Number(state.announce);
        if (state.announce === "" || !announces.includes(n)) {
          state.message = { kind: "error", text: t("muggins.bad_number", { min, max }) };
          render();
          return;
        }
        act({ type: "announce", points: n });
      };
      return h("form", { class: "muggins", onsubmit: send },
        h("p", {}, t("muggins.count_this", { what })), cards,
        h("label", { for: "announce" }, t("muggins.your_count")),
        h("input", { id: "announce", "data-key": "announce", type: "number", min, max, inputmode: "numeric",
          value: state.announce, required: true, oninput: (e) => { state.announce = e.target.value; } }),
        h("button", { type: "submit", class: "primary", "data-key": "announce-send", id: "announce-send" }, t("muggins.announce")));
    }
    const answers = acts.filter((a) => a.type === "answer");
    if (p.announced !== null && answers.length) {
      const left = state.answerDeadline ? Math.max(0, Math.ceil((state.answerDeadline - Date.now()) / 1000)) : null;
      const button = (call, cls) => {
        const action = answers.find((a) => a.call === call);
        return action ? h("button", { type: "button", class: cls, id: `answer-${call}`, "data-key": `answer-${call}`,
          onclick: () => act(action) }, t(`muggins.call_${call}`)) : null;
      };
      return h("div", { class: "muggins", role: "group", "aria-labelledby": "answer-h", "data-announced": p.announced },
        h("p", { id: "answer-h" }, t(`muggins.announced_${p.kind}`, { who: names.seat(p.seat), form: names.form(p.seat), n: p.announced })), cards,
        h("div", { class: "actions" }, button("accept", "primary"), button("muggins", ""), button("overcount", "")),
        h("p", { class: "muted countdown" }, left !== null ? t("muggins.left", { n: left })
          // After a reload the announcement's time is unknown (the snapshot has no deadline).
          : t("muggins.window", { n: state.roomInfo.answer_window })));
    }
    return h("div", { class: "muggins" }, h("p", { class: "muted" },
      p.announced === null ? t(`muggins.waiting_${p.kind}`, { who: names.object(p.seat), whose: what })
        : t("muggins.waiting_answers", { who: names.seat(p.seat), form: names.form(p.seat), n: p.announced })), cards);
  }

  // ------------------------------------------------------------------- the show --------
  /** The show to draw: this deal's (while it is counted) or the last deal's, with its deal
   * number (view.last_show is always the deal before view.deal_number). */
  function showSource(v) {
    if (v.phase === "show" || v.show?.counted?.length) return { entries: v.show?.counted || [], deal: v.deal_number, current: true };
    if (v.last_show?.length) return { entries: v.last_show, deal: v.deal_number - 1, current: false };
    return null;
  }

  function ackKey() {
    return `${state.view?.game_number}/${state.view?.deal_number - 1}`;
  }

  /** The last show stays on the felt until this player has seen it ("Next deal"): a new
   * deal's cards wait behind it. Only for a seat that has not laid away yet. */
  function reviewing() {
    const v = state.view;
    if (!v || state.seat === null || v.phase !== "discard" || !v.last_show?.length) return false;
    if (v.discarded[state.seat]) return false;
    return loadRoom(roomId).showSeen !== ackKey();
  }

  function showReview(v, names) {
    const deal = v.deal_number - 1;
    return h("section", { class: "show-review", "aria-labelledby": "review-h", "data-deal": deal },
      h("h2", { id: "review-h" }, t("show.title_deal", { n: deal })),
      h("ol", { class: "show-list" }, v.last_show.map((e) => showEntry(e, v, names))),
      h("div", { class: "actions" },
        h("button", {
          type: "button", class: "primary", id: "next-deal", "data-key": "next-deal",
          onclick: () => {
            updateRoom(roomId, { showSeen: ackKey() });
            render();
            root.querySelector('[data-focus-region="hand"]')?.focus();
          },
        }, t("show.next_deal", { n: v.deal_number }))));
  }

  function showPanel(v, names) {
    const source = showSource(v);
    if (!source) {
      return [h("h2", { id: "show-h" }, t("show.title")), h("p", { class: "muted" }, t("show.empty"))];
    }
    const content = source.entries.length
      ? h("ol", { class: "show-list" }, source.entries.map((e) => showEntry(e, v, names)))
      : h("p", { class: "muted" }, t("show.counting"));
    return [h("h2", { id: "show-h", "data-deal": source.deal }, t("show.title_deal", { n: source.deal })), content];
  }

  function showEntry(e, v, names) {
    const label = capitalize(names.whose(e.seat, e.kind));
    let muggins = null;
    if (e.announced !== undefined && e.announced !== null) {
      const called = e.call && e.call !== "accept" && e.call !== "timeout";
      muggins = h("p", { class: "muted show-muggins" }, called
        ? t(e.correct ? "show.announced_called_right" : "show.announced_called_wrong", { n: e.announced, call: t(`call.${e.call}`), pegged: e.pegged })
        : t("show.announced", { n: e.announced, pegged: e.pegged }));
    }
    const backup = v.options.backup10 && e.total === 0 ? h("p", { class: "backup-note" }, t("show.backup_note")) : null;
    return h("li", { class: ["show-entry", e.total === 0 && "zero"], "data-seat": e.seat, "data-kind": e.kind },
      h("div", { class: "show-cards" }, sortCards(e.cards).map((c) => cardEl(c, { small: true })),
        h("span", { class: "plus", "aria-hidden": "true" }, "+"), cardEl(e.starter, { small: true, note: t("table.starter_note") })),
      h("div", { class: "show-words" },
        h("div", { class: "show-head" },
          h("span", { class: "show-who" }, label),
          h("span", { class: "show-total" }, h("span", { class: "sr-only" }, t("show.total_sr")), String(e.total))),
        h("p", { class: "say" }, e.total ? `${capitalize(sayShow(e.items))}.` : t("say.nineteen_line")),
        muggins, backup));
  }

  // ------------------------------------------------------------ the play-by-play -------
  /** Lines for events: [{at, text, kind}], `at` the event's index in `events`. */
  function storyLines(names, events) {
    const out = [];
    events.forEach(({ event }, at) => {
      const text = logLine(event, names);
      if (text) out.push({ at, text, kind: event.type });
    });
    return out;
  }

  function logPanel(names) {
    const story = state.story;
    const events = story.events();
    const lines = storyLines(names, events);
    // The page's own lines (presence) go where they happened (Story.localPosition); the
    // sort is stable, so lines at one place keep their order.
    for (const l of story.local) lines.push({ at: story.localPosition(l, events), text: story.localText(l), kind: l.kind });
    lines.sort((a, b) => a.at - b.at);
    const shown = lines.slice(-LOG_LINES);
    return h("section", { class: "panel log-panel", "aria-labelledby": "log-h" },
      h("h2", { id: "log-h" }, t("log.title")),
      story.loading ? h("p", { class: "muted story-loading" }, t("log.loading")) : null,
      story.failed ? h("p", { class: "muted" }, t("log.failed")) : null,
      h("div", { class: "log", role: "log", tabindex: "0", "aria-labelledby": "log-h", "data-key": "log" },
        h("ol", {}, shown.map((l) => h("li", { class: `log-${l.kind}` }, l.text)))),
      h("div", { class: "actions" },
        h("button", {
          type: "button", id: "whole-game", "data-key": "whole-game", "aria-expanded": String(state.wholeGame),
          "aria-controls": "whole-game-view", onclick: () => { state.wholeGame = !state.wholeGame; render(); },
        }, state.wholeGame ? t("story.hide") : t("story.show")),
        // Someone watching gets the link to the graded game too (a player has it by the hand).
        state.seat === null && state.view && state.view.phase === "game_over" ? gradedLink(state.view) : null),
      state.wholeGame ? wholeGame(names) : null);
  }

  /** The whole game, deal by deal: who dealt, every line, and each show laid out. */
  function wholeGame(names) {
    const v = state.view;
    const deals = state.story.byDeal();
    return h("div", { class: "whole-game", id: "whole-game-view" },
      h("h3", {}, t("story.title", { n: v.game_number })),
      deals.map((d) => {
        const shows = d.events.filter((e) => e.event.type === "show_hand").map((e) => {
          const counted = { ...e.event, pegged: e.event.total };
          return showEntry(counted, v, names);
        });
        const lines = storyLines(names, d.events.filter((e) => e.event.type !== "show_hand"));
        return h("section", { class: "story-deal", "data-deal": d.deal },
          h("h4", {}, d.deal === 0 ? t("story.start") : t("story.deal", { n: d.deal, who: names.seat(d.dealer), form: names.form(d.dealer) })),
          h("ol", { class: "story-lines" }, lines.map((l) => h("li", { class: `log-${l.kind}` }, l.text))),
          shows.length ? h("ol", { class: "show-list" }, shows) : null);
      }));
  }

  // ------------------------------------------------------------------ replay ----------
  function replayButtons() {
    return [
      h("button", { type: "button", id: "download-replay", "data-key": "download-replay", disabled: state.replayBusy,
        onclick: async () => {
          state.replayBusy = true;
          render();
          try {
            downloadReplay(await fetchReplay(state.client, state.seats, state.view));
          } catch (err) {
            state.message = { kind: "error", text: codeText(err.code) };
          }
          state.replayBusy = false;
          render();
        } }, t("replay.download")),
      h("button", { type: "button", id: "watch-replay", "data-key": "watch-replay", disabled: state.replayBusy,
        onclick: async () => {
          state.replayBusy = true;
          try {
            state.replay = { data: await fetchReplay(state.client, state.seats, state.view), step: 0 };
          } catch (err) {
            state.message = { kind: "error", text: codeText(err.code) };
          }
          state.replayBusy = false;
          render();
        } }, t("replay.watch")),
    ];
  }

  // At game over, a link to the game in the archive (/replay/<id>), where the grading of
  // every choice is: the id comes from the room's summary (GET /api/rooms/{id}, `game`),
  // asked once per game.
  function gradedLink(v) {
    const known = state.archived;
    if (known && known.number === v.game_number) {
      return h("a", { href: `/replay/${encodeURIComponent(known.id)}`, id: "graded-replay",
        class: "graded-link", "data-key": "graded-replay" }, t("replay.graded"));
    }
    if (state.archivedAsked !== v.game_number) {
      state.archivedAsked = v.game_number;
      archivedId(v.game_number);
    }
    return null;
  }

  // A read that fails (the network, a refusal such as too many reads) is tried again a
  // few times, later each time, while the table still shows that game's end; after the
  // last there is no link, and the replay buttons still work.
  async function archivedId(number, attempt = 0) {
    let summary = null;
    try {
      const res = await fetch(`/api/rooms/${encodeURIComponent(roomId)}`);
      summary = res.ok ? await res.json() : null;
    } catch {
      summary = null;
    }
    const still = () => state.view && state.view.game_number === number && state.view.phase === "game_over";
    if (summary && summary.game) {
      if (state.view && state.view.game_number === number) {
        state.archived = { number, id: summary.game };
        render();
      }
    } else if (attempt < ARCHIVED_RETRY_MS.length) {
      setTimeout(() => { if (still()) archivedId(number, attempt + 1); }, ARCHIVED_RETRY_MS[attempt]);
    }
  }

  function replayPage() {
    return h("div", {}, header(),
      h("main", { class: "replay-page", id: "replay" },
        h("p", {}, h("button", { type: "button", id: "back-to-table", "data-key": "back-to-table",
          onclick: () => { state.replay = null; render(); } }, t("replay.back"))),
        replayPanel(state.replay, render)));
  }

  // ------------------------------------------------------------------- start ---------
  onLanguageChange(() => render());
  // The board has a layout of its own on a phone: draw again when the width crosses it.
  window.matchMedia?.(COMPACT_QUERY).addEventListener?.("change", () => render());
  const record = loadRoom(roomId);
  if (record.seat !== null && record.seat !== undefined && record.seatToken) {
    connect(record.seat, record.seatToken); // reload / come back: resume the seat
  } else if (record.autoSit !== undefined && record.autoSit !== null
      && (state.name.trim() || loadPlayer())) { // a player sits under the player's own name
    updateRoom(roomId, { autoSit: null }); // the creator sits at once, once
    connect(record.autoSit, null);
  } else {
    showLobby();
  }
}

/**
 * The cards of this seat's hand row when it has no card to pick: while the cards are dealt
 * and played, those still held; in the show, the four kept (the hand being counted). After
 * the game, the four kept if the game ended in the show, else those still held — a game
 * can end mid-play, and the cards already laid are on the table, not in the hand.
 * `v` is the seat's view (docs/protocol.md); returns card codes.
 */
export function heldCards(v) {
  if (!v.kept?.length || v.phase === "discard" || v.phase === "play") return v.hand;
  if (v.phase === "show") return v.kept;
  const showStarted = Boolean(v.show?.counted?.length || v.show?.pending);
  return showStarted ? v.kept : v.hand;
}

function sameCards(a, b) {
  return a.length === b.length && a.every((c) => b.includes(c));
}

/**
 * The room's settings beyond the engine options (docs/protocol.md `room_settings`, in
 * `room_created`, every snapshot and the room summary): whether hints are allowed, the
 * Muggins answer window and the takeover grace, in seconds. Missing (an older server):
 * no hints offered, the default window.
 */
function roomSettings(msg) {
  const info = msg?.room_settings && typeof msg.room_settings === "object" ? msg.room_settings : {};
  return {
    hints: info.hints === true,
    answer_window: Number(info.answer_window) || DEFAULT_ANSWER_WINDOW,
    takeover_grace: Number(info.takeover_grace) || null,
    rated: info.rated === true,
    chat: CHAT_MODES.includes(info.chat) ? info.chat : null, // table talk: off, presets, free
  };
}

/** "Hints allowed · 15 s to answer a count · the computer plays for anyone away over 60 s". */
function describeSettings(info, options = {}) {
  const parts = [info.hints ? t("settings.hints") : t("settings.no_hints")];
  if (info.rated) parts.unshift(t("settings.rated"));
  if (options.muggins && !options.lowball) parts.push(t("settings.answer_window", { n: info.answer_window }));
  if (info.takeover_grace) parts.push(t("settings.takeover", { time: seconds(info.takeover_grace) }));
  if (info.chat) parts.push(t(`settings.chat_${info.chat}`));
  return parts.join(" · ");
}

function seconds(n) {
  if (n >= 120 && n % 60 === 0) return t("time.minutes", { n: n / 60 });
  return n === 60 ? t("time.a_minute") : t("time.seconds", { n });
}

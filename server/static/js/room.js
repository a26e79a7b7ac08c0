// The room page, /r/<room>: the lobby (type a name, take a free seat or watch), the waiting
// room, and the table itself. Everything on the table is drawn from the seat's `view`
// (docs/rules.md "The view") plus the room's seats; events only add log lines and the
// lines under the board. The page re-renders whole on every change (the DOM is small) and
// keeps keyboard focus across renders (dom.js).
import { board } from "./board.js";
import { cardBack, cardEl, cardShort, cardValue, cardsShort, sortCards } from "./cards.js";
import {
  backupLine, describeOptions, gameOverLines, logLine, makeNames, sayShow,
} from "./describe.js";
import { h, replaceKeepingFocus } from "./dom.js";
import { RoomConnection } from "./net.js";
import { loadName, loadRoom, saveName, updateRoom } from "./storage.js";

const LOG_LIMIT = 80;
const LINES_LIMIT = 40;
const LOBBY_POLL_MS = 3000;
const DEFAULT_ANSWER_WINDOW = 15;
/** Reject codes of a Muggins answer that lost a race (docs/protocol.md): "too late". */
const TOO_LATE = new Set([
  "stale_answer", "nothing_to_answer", "already_answered", "wrong_phase", "not_an_opponent", "game_over",
]);

export function roomPage(root, roomId) {
  const stored = loadRoom(roomId);
  const state = {
    mode: "loading", // loading | lobby | missing | table
    summary: null, // GET /api/rooms/{id}, for the lobby
    name: loadName(),
    conn: null,
    connStatus: "connecting",
    seat: null, // my seat, null when watching
    seats: [],
    roomStatus: "waiting",
    options: {},
    roomInfo: roomSettings(stored), // room_settings: hints, answer window, takeover grace
    view: null,
    log: [],
    lines: stored.lines || [],
    selected: new Set(),
    hint: null,
    message: null,
    announce: "",
    answerDeadline: null,
    creatorToken: stored.creatorToken || null,
    computerLevel: {},
    copied: false,
  };
  let lobbyTimer = null;
  let tickTimer = null;

  // ---------------------------------------------------------------- connection ---------
  function connect(seat, seatToken) {
    state.conn?.close();
    const record = loadRoom(roomId);
    state.mode = "table";
    state.seat = seat;
    state.conn = new RoomConnection({
      room: roomId,
      name: state.name.trim() || "Guest",
      playerToken: record.playerToken,
      seat,
      seatToken,
      onmessage,
      onstatus: (s) => { state.connStatus = s; state.inFlight = null; render(); },
    });
    state.conn.connect();
    stopLobbyPolling();
    render();
  }

  function onmessage(msg, conn) {
    switch (msg.type) {
      case "welcome":
        updateRoom(roomId, { playerToken: msg.player_token });
        return;
      case "snapshot":
        onSnapshot(msg, conn);
        break;
      case "update":
        onUpdate(msg, conn);
        break;
      case "presence":
        onPresence(msg);
        break;
      case "ack":
        if (state.inFlight?.id === msg.action_id) state.inFlight = null;
        break;
      case "reject":
        if (state.inFlight?.id === msg.action_id) state.inFlight = null;
        state.message = TOO_LATE.has(msg.code) && state.lastAction?.type === "answer"
          ? { kind: "info", text: "Too late — that count was already settled." }
          : { kind: "error", text: `Not allowed: ${msg.message}` };
        break;
      case "error":
        onError(msg);
        break;
      case "hint":
        state.hint = msg.suggestion || null;
        break;
      default:
        return;
    }
    render();
  }

  function onSnapshot(msg, conn) {
    state.seat = msg.seat;
    state.seats = msg.seats;
    state.roomStatus = msg.status;
    state.options = msg.options || {};
    state.roomInfo = roomSettings(msg);
    state.view = conn.view;
    state.hint = null;
    if (msg.seat !== null && msg.seat !== undefined) {
      updateRoom(roomId, { seat: msg.seat, seatToken: conn.seatToken });
    }
    sendPendingComputer(conn);
    if (!conn.greeted) {
      conn.greeted = true;
      addLog(msg.seat === null ? "You are watching this table." : `You are at seat ${msg.seat + 1}.`, "presence");
    }
    // After a reload, the game-over lines come from the view (the event was before).
    if (state.view?.result) addGameOverLines(state.view.result, state.view.game_number);
  }

  function onUpdate(msg, conn) {
    const before = state.view;
    state.view = conn.view;
    state.roomStatus = msg.status;
    if (msg.seats) state.seats = msg.seats;
    if (!before || before.phase !== state.view?.phase || before.turn !== state.view?.turn ||
        before.deal_number !== state.view?.deal_number) {
      state.hint = null;
    }
    if (state.view && before && before.deal_number !== state.view.deal_number) state.selected.clear();
    const names = currentNames();
    for (const ev of msg.events) {
      const line = logLine(ev, names);
      if (line) addLog(line, ev.type);
      if (ev.type === "backup") {
        addLine({ kind: "backup", game: state.view?.game_number, text: backupLine(ev, names) });
      } else if (ev.type === "game_over") {
        addGameOverLines(ev, state.view?.game_number);
      } else if (ev.type === "announce") {
        const window = Number(state.roomInfo.answer_window || DEFAULT_ANSWER_WINDOW);
        state.answerDeadline = Date.now() + window * 1000;
        state.announce = "";
      } else if (ev.type === "muggins_result") {
        state.answerDeadline = null;
      }
    }
  }

  function onPresence(msg) {
    const seat = state.seats[msg.seat];
    if (!seat) return;
    const was = seat.connected;
    seat.connected = msg.connected;
    // The stand-in's start and end also come as a versioned update (its `seats` and a
    // `computer_standin` event, logged there); presence only keeps the dot current.
    if (msg.computer_standin !== undefined) seat.computer_standin = Boolean(msg.computer_standin);
    if (msg.name) seat.name = msg.name;
    const name = msg.seat === state.seat ? "You" : seat.name || `Seat ${msg.seat + 1}`;
    if (was !== msg.connected) addLog(`${name} ${msg.connected ? "connected" : "disconnected"}.`, "presence");
  }

  function onError(msg) {
    if (msg.ref === "join" || msg.code === "room_not_found") {
      if (msg.code === "room_not_found") {
        state.conn?.close();
        state.mode = "missing";
        return;
      }
      if (!["seat_taken", "bad_token", "bad_seat"].includes(msg.code)) {
        // A passing failure (busy, internal): keep the seat and try again shortly.
        state.message = { kind: "error", text: `${msg.message} — trying again…` };
        setTimeout(() => state.conn?.ws?.close(), 1000);
        return;
      }
      // The stored seat is not ours any more (or someone took the seat first).
      updateRoom(roomId, { seat: null, seatToken: null });
      state.conn?.close();
      state.conn = null;
      state.message = {
        kind: "error",
        text: msg.code === "seat_taken" ? "That seat was just taken — pick another." : msg.message,
      };
      showLobby();
      return;
    }
    if (msg.ref === "set_computer" || (msg.message || "").includes("'set_computer'")) {
      state.message = { kind: "error", text: `Could not give the seat to a computer: ${
        msg.code === "bad_message" ? "this server cannot seat computer players yet." : msg.message}` };
      return;
    }
    if (msg.ref === "hint") {
      state.hint = { kind: "unavailable", text: msg.code === "hints_disabled" ? "Hints are off at this table." : "No hint available right now." };
      return;
    }
    state.message = { kind: "error", text: msg.message || msg.code };
  }

  function currentNames() {
    return makeNames(state.seats, state.view, state.seat);
  }

  function addLog(text, kind) {
    state.log.push({ text, kind });
    if (state.log.length > LOG_LIMIT) state.log.splice(0, state.log.length - LOG_LIMIT);
  }

  function addLine(line) {
    state.lines.push(line);
    if (state.lines.length > LINES_LIMIT) state.lines.splice(0, state.lines.length - LINES_LIMIT);
    updateRoom(roomId, { lines: state.lines });
  }

  function addGameOverLines(result, game) {
    if (state.lines.some((l) => l.kind === "over" && l.game === game)) return;
    for (const text of gameOverLines(result, currentNames())) addLine({ kind: "over", game, text });
  }

  function act(action) {
    // One action at a time: a double click must not send the same card twice.
    if (state.inFlight && Date.now() - state.inFlight.at < 5000) return;
    state.message = null;
    state.lastAction = action;
    const id = state.conn?.act(action);
    if (id) state.inFlight = { id, at: Date.now() };
    else {
      state.message = { kind: "error", text: "Not connected — reconnecting…" };
      render();
    }
  }

  // ---------------------------------------------------------------- lobby --------------
  async function loadSummary() {
    try {
      const res = await fetch(`/api/rooms/${encodeURIComponent(roomId)}`);
      if (res.status === 404) {
        state.mode = "missing";
        stopLobbyPolling();
      } else if (res.ok) {
        state.summary = await res.json();
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
      state.message = { kind: "error", text: "Type your name first — it is what the other players see." };
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
    const msg = { type: "set_computer", room: roomId, seat, level, creator_token: state.creatorToken };
    state.message = null;
    if (state.conn?.joined && state.conn.send(msg)) return;
    // Not connected yet (still in the lobby): watch the table and send it once joined.
    state.pendingComputer = msg;
    if (!state.conn) watch();
  }

  function sendPendingComputer(conn) {
    if (state.pendingComputer && conn.send(state.pendingComputer)) state.pendingComputer = null;
  }

  // ---------------------------------------------------------------- rendering ----------
  function render() {
    let page;
    if (state.mode === "loading") page = h("main", { class: "center" }, h("p", {}, "Loading…"));
    else if (state.mode === "missing") page = missingPage();
    else if (state.mode === "lobby") page = lobbyPage();
    else page = tablePage();
    const log = root.querySelector(".log");
    const atBottom = !log || log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    replaceKeepingFocus(root, page);
    document.title = pageTitle();
    // Keep the play-by-play scrolled to the newest line, unless the reader scrolled up.
    const newLog = root.querySelector(".log");
    if (newLog && atBottom) newLog.scrollTop = newLog.scrollHeight;
    // A running Muggins answer window or turn clock: redraw every second for the countdown.
    const clocks = Object.values(state.view?.turn_clock || {});
    const ticking = (state.answerDeadline && state.answerDeadline > Date.now()) || clocks.length > 0;
    if (ticking && !tickTimer) tickTimer = setInterval(render, 1000);
    if (!ticking && tickTimer) { clearInterval(tickTimer); tickTimer = null; }
  }

  /** The tab's title says when it is this player's move, for people in another tab. */
  function pageTitle() {
    const v = state.view;
    if (state.mode === "table" && v && state.seat !== null && myMove(v)) return "Your move — Cribbage";
    if (v?.phase === "game_over") return "Game over — Cribbage";
    return "Cribbage";
  }

  function missingPage() {
    return h("main", { class: "center" },
      h("h1", {}, "No such table"),
      h("p", {}, "This link does not lead to a table (tables close after a day without play)."),
      h("p", {}, h("a", { href: "/" }, "Start a new table")));
  }

  function shareBox(title = "Share link") {
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
          state.copied ? "Copied" : "Copy")),
      h("span", { class: "sr-only", role: "status" }, state.copied ? "Link copied" : ""));
  }

  function messageEl() {
    if (!state.message) return null;
    return h("p", { class: ["message", state.message.kind], role: "alert" }, state.message.text);
  }

  function lobbyPage() {
    const s = state.summary;
    const seats = s?.seats || [];
    const open = seats.filter((x) => !x.taken && x.kind !== "computer");
    return h("main", { class: "lobby" },
      h("h1", {}, "Cribbage table"),
      s ? h("p", { class: "lede" }, describeOptions(s.options), " · ",
        s.status === "waiting" ? `${plural(open.length, "free seat")}` : s.status === "game_over" ? "game over" : "playing") : h("p", {}, "Loading…"),
      s ? h("p", { class: "muted settings-desc" }, describeSettings(roomSettings(s), s.options)) : null,
      shareBox(),
      h("section", { class: "panel" },
        h("div", { class: "field" },
          h("label", { for: "lobby-name" }, "Your name"),
          h("input", {
            id: "lobby-name", "data-key": "lobby-name", value: state.name, maxlength: 32, autocomplete: "nickname",
            oninput: (e) => { state.name = e.target.value; },
            onkeydown: (e) => { if (e.key === "Enter" && open.length) sit(open[0].seat); },
          })),
        messageEl(),
        h("h2", {}, "Seats"),
        h("ul", { class: "seat-list" }, seats.map((seat) => h("li", {},
          h("span", { class: "seat-label" }, `Seat ${seat.seat + 1}`),
          seat.kind === "computer"
            ? h("span", {}, `${seat.name || "Computer"} (computer)`)
            : seat.taken
              ? h("span", {}, seat.name, seat.connected ? "" : " (away)")
              : h("button", { type: "button", class: "primary", onclick: () => sit(seat.seat), "data-key": `sit-${seat.seat}`,
                "data-seat": seat.seat }, "Sit here"),
          !seat.taken && seat.kind !== "computer" && state.creatorToken ? computerPicker(seat.seat) : null))),
        h("p", {}, h("button", { type: "button", onclick: watch, "data-key": "watch", id: "watch" }, "Just watch"))),
      h("p", {}, h("a", { href: "/" }, "Start a different table")));
  }

  function computerPicker(seat) {
    return h("span", { class: "computer-picker" },
      h("label", { class: "sr-only", for: `level-${seat}` }, `Computer level for seat ${seat + 1}`),
      h("select", {
        id: `level-${seat}`, "data-key": `level-${seat}`,
        onchange: (e) => { state.computerLevel[seat] = e.target.value; },
      },
      h("option", { value: "standard", selected: (state.computerLevel[seat] || "standard") === "standard" }, "standard"),
      h("option", { value: "easy", selected: state.computerLevel[seat] === "easy" }, "easy")),
      h("button", { type: "button", onclick: () => giveToComputer(seat), "data-key": `computer-${seat}` }, "Give to computer"));
  }

  // ------------------------------------------------------------------ the table --------
  function tablePage() {
    const v = state.view;
    const names = currentNames();
    const attrs = {
      id: "table", class: "table-page",
      "data-status": state.roomStatus, "data-phase": v?.phase || "waiting",
      "data-seat": state.seat ?? "", "data-turn": v?.turn ?? "", "data-game": v?.game_number ?? "",
      "data-deal": v?.deal_number ?? "", "data-version": state.conn?.version ?? -1,
      "data-conn": state.connStatus,
    };
    return h("main", attrs,
      topBar(),
      v ? null : waitingRoom(),
      v ? h("div", { class: "table-grid" },
        h("section", { class: "panel board-panel", "aria-labelledby": "board-h" },
          h("h2", { id: "board-h" }, "Board"),
          board(v, names, { lowball: v.options.lowball }),
          linesUnderBoard(),
          playersList(v, names),
          // The link stays at hand during the game: others can watch (or take a seat
          // freed later) — one copy of it on the page, here or in the waiting room.
          shareBox(state.seats.some((x) => !x.taken) ? "Share link" : "Link to watch this table")),
        h("section", { class: "panel felt", "aria-labelledby": "felt-h" },
          h("h2", { id: "felt-h", class: "sr-only" }, "The table"),
          scoreStrip(v, names),
          statusLine(v, names),
          messageEl(),
          playArea(v, names),
          myArea(v, names)),
        h("section", { class: "panel show-panel", "aria-labelledby": "show-h" }, showPanel(v, names)),
        h("section", { class: "panel log-panel", "aria-labelledby": "log-h" },
          h("h2", { id: "log-h" }, "Play by play"),
          h("ol", { class: "log", role: "log", "aria-live": "polite" },
            state.log.slice(-30).map((l) => h("li", { class: `log-${l.kind}` }, l.text))))) : null);
  }

  function topBar() {
    const conn = {
      connecting: "Connecting…", open: "Connected", retrying: "Reconnecting…", closed: "Offline",
    }[state.connStatus] || state.connStatus;
    return h("header", { class: "topbar" },
      h("a", { href: "/", class: "brand" }, "Cribbage"),
      h("span", { class: "options-desc" }, describeOptions(state.view?.options || state.options)),
      h("span", { class: ["conn", `conn-${state.connStatus}`], role: "status" }, conn));
  }

  function waitingRoom() {
    const open = state.seats.filter((s) => !s.taken);
    return h("section", { class: "panel waiting" },
      h("h1", {}, "Waiting for players"),
      h("p", {}, state.seats.length
        ? `The game starts when every seat is taken — ${plural(open.length, "seat")} to go. Send the link:`
        : "Connecting to the table…"),
      h("p", { class: "muted settings-desc" }, describeSettings(state.roomInfo, state.options)),
      shareBox(),
      messageEl(),
      h("ul", { class: "seat-list" }, state.seats.map((seat) => h("li", { "data-seat": seat.seat },
        h("span", { class: "seat-label" }, `Seat ${seat.seat + 1}`,
          state.options.partnerships ? ` · team ${seat.seat % 2 ? "B" : "A"}` : ""),
        seat.taken || seat.kind === "computer"
          ? h("span", {}, seat.seat === state.seat ? `${seat.name} (you)` : seat.name || "Computer", presenceDot(seat))
          : state.seat === null
            ? h("button", { type: "button", class: "primary", onclick: () => sit(seat.seat), "data-key": `sit-${seat.seat}` }, "Sit here")
            : h("span", { class: "muted" }, "free"),
        !seat.taken && seat.kind !== "computer" && state.creatorToken ? computerPicker(seat.seat) : null))),
      state.seat === null && open.length ? h("div", { class: "field" },
        h("label", { for: "lobby-name" }, "Your name (to sit)"),
        h("input", { id: "lobby-name", "data-key": "lobby-name", value: state.name, maxlength: 32,
          oninput: (e) => { state.name = e.target.value; } })) : null);
  }

  function presenceDot(seat) {
    const computer = seat.kind === "computer";
    const standin = !computer && seat.computer_standin;
    const text = computer ? `computer${seat.level ? ` · ${seat.level}` : ""}`
      : standin ? "away — the computer plays for them"
        : seat.connected ? "online" : "away";
    return h("span", { class: ["presence", computer ? "bot" : standin ? "standin" : seat.connected ? "on" : "off"],
      "data-presence": computer ? "computer" : standin ? "standin" : seat.connected ? "on" : "off" },
    h("span", { class: "dot", "aria-hidden": "true" }), text);
  }

  function linesUnderBoard() {
    const game = state.view?.game_number;
    // Lines of the current game, plus the previous game's result while a rematch starts.
    const lines = state.lines.filter((l) => l.game === game || (l.kind === "over" && l.game === game - 1 && state.view.deal_number === 1));
    if (!lines.length) return null;
    return h("ul", { class: "board-lines", "aria-label": "Back-up and game results" },
      lines.map((l) => h("li", { class: `line-${l.kind}` }, l.text)));
  }

  function playersList(v, names) {
    return h("ul", { class: "players", "aria-label": "Players" }, state.seats.map((seat) => {
      const s = seat.seat;
      const chips = [];
      if (v.dealer === s) chips.push(h("span", { class: "chip dealer" }, "dealer"));
      if (v.turn === s && v.phase !== "game_over") chips.push(h("span", { class: "chip turn" }, v.phase === "show" ? "to announce" : "to play"));
      if (v.phase === "discard" && v.discarded[s]) chips.push(h("span", { class: "chip done" }, "crib ✓"));
      if (v.go?.[s]) chips.push(h("span", { class: "chip go" }, "go"));
      const due = v.turn_clock?.[String(s)];
      if (due) {
        const left = Math.max(0, Math.ceil((due - Date.now()) / 1000));
        chips.push(h("span", {
          class: ["chip clock", left <= 10 && "urgent"], "data-clock-seat": s,
          title: "Time left for this move; then the computer plays it",
        }, `⏱ ${left} s`));
      }
      const partners = v.options.partnerships ? ` · team ${v.sides[s] === 0 ? "A" : "B"}` : "";
      return h("li", { class: ["player", v.turn === s && "has-turn", s === state.seat && "me"], "data-seat": s },
        h("span", { class: "player-name" }, names.seat(s) === "You" ? `${seat.name || "You"} (you)` : names.seat(s)),
        h("span", { class: "player-meta" },
          presenceDot(seat),
          h("span", { class: "held" }, `${plural(v.hand_sizes[s], "card")}${partners}`)),
        h("span", { class: "chips" }, chips));
    }));
  }

  /** The scores in one line, for narrow screens where the board is below the table. */
  function scoreStrip(v, names) {
    const sides = [...new Set(v.sides)];
    return h("p", { class: "score-strip", "aria-hidden": "true" },
      sides.map((side) => h("span", {}, `${names.side(side)} `, h("strong", {}, String(v.scores[side])))),
      h("span", { class: "muted" }, `to ${v.target}`));
  }

  function statusLine(v, names) {
    let text;
    const me = state.seat;
    const need = v.players === 2 ? 2 : 1;
    if (v.phase === "discard") {
      const crib = `${names.possessive(v.dealer).replace("Your", "your")} crib`;
      text = me !== null && !v.discarded[me]
        ? `Choose ${plural(need, "card")} for ${crib}.`
        : `Waiting for ${waitingNames(v, names)} to discard.`;
    } else if (v.phase === "play") {
      text = v.turn === me ? `Your turn — the count is ${v.count}.` : `${names.seat(v.turn)} to play — the count is ${v.count}.`;
    } else if (v.phase === "show") {
      const p = v.show.pending;
      if (!p) text = "The show.";
      else if (p.announced === null) text = p.seat === me ? `Announce your count for your ${p.kind}.` : `${names.seat(p.seat)} is counting the ${p.kind}.`;
      else text = p.awaiting.includes(me) ? `${names.seat(p.seat)} announces ${p.announced}. Accept, or call?` : `Waiting for answers to ${p.announced}.`;
    } else if (v.phase === "game_over") {
      text = gameOverLines(v.result, names)[v.result.lowball ? 1 : 0] || "Game over.";
    }
    return h("p", { class: "status", role: "status", "aria-live": "polite", id: "status" }, text);
  }

  function waitingNames(v, names) {
    const left = v.discarded.map((d, s) => (d ? -1 : s)).filter((s) => s >= 0);
    return left.map((s) => names.seat(s)).join(", ").replace("You", "you");
  }

  function playArea(v, names) {
    const pile = v.pile || [];
    const earlier = (v.played || []).slice(0, Math.max(0, (v.played || []).length - pile.length));
    return h("div", { class: "play-area" },
      h("div", { class: "starter-crib" },
        h("figure", { class: "starter" },
          v.starter ? cardEl(v.starter, { extraLabel: "the starter" }) : h("span", { class: "card placeholder", "aria-hidden": "true" }),
          h("figcaption", {}, v.starter ? "Starter" : "Starter: not cut yet")),
        h("figure", { class: "crib" },
          h("span", { class: "crib-cards" }, Array.from({ length: Math.max(v.crib_size, 1) }, (_, i) =>
            i < v.crib_size ? cardBack() : h("span", { class: "card small placeholder", "aria-hidden": "true" }))),
          h("figcaption", {}, `${names.possessive(v.dealer)} crib · ${v.crib_size}/4`))),
      v.phase === "play" || pile.length ? h("div", { class: "count-box" },
        h("div", { class: "count", "aria-label": `Count ${v.count}` },
          h("span", { class: "count-label" }, "Count"), h("strong", { id: "count" }, String(v.count))),
        h("ol", { class: "pile", "aria-label": "Cards of the current count" }, pile.map((p) =>
          h("li", {}, cardEl(p.card, { small: true }), h("span", { class: "pile-who" }, names.seat(p.seat)))))) : null,
      earlier.length ? h("p", { class: "earlier muted" }, "Earlier this deal: ",
        earlier.map((p) => `${names.seat(p.seat)} ${cardShort(p.card)}`).join(", ")) : null,
      recentPegs());
  }

  /** The last few play-by-play lines of the current deal, right on the table. */
  function recentPegs() {
    const recent = state.log.slice(-4).filter((l) => ["peg", "go", "play", "count_reset", "starter"].includes(l.kind));
    if (!recent.length) return null;
    return h("ul", { class: "recent", "aria-hidden": "true" }, recent.map((l) => h("li", { class: `log-${l.kind}` }, l.text)));
  }

  // ----------------------------------------------------- my hand and my actions --------
  function myArea(v, names) {
    const me = state.seat;
    if (me === null) return h("p", { class: "muted watching" }, "You are watching.", sitWhileWatching());
    const need = v.players === 2 ? 2 : 1;
    const hintCards = hintedCards(v);
    let cards;
    const actions = [];
    if (v.phase === "discard" && !v.discarded[me]) {
      // Pick cards for the crib: cards toggle, "Send to crib" when the number is right.
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
      const ready = state.selected.size === need && [...state.selected].every((c) => v.hand.includes(c));
      actions.push(h("button", {
        type: "button", class: "primary", id: "send-crib", "data-key": "send-crib", disabled: !ready,
        onclick: () => {
          act({ type: "discard", cards: [...state.selected] });
          state.selected.clear();
          // Keep keyboard users in the hand (the button goes away), not back at the page top.
          render();
          root.querySelector('[data-focus-region="hand"]')?.focus();
        },
      }, ready ? `Lay ${cardsShort([...state.selected])} away` : `Pick ${plural(need, "card")} for the crib`));
    } else if (v.phase === "play" && v.turn === me) {
      // My turn: every card is a button, and only those that keep the count at 31 or
      // under are enabled (the engine never gives the turn to a seat with none).
      cards = sortCards(v.hand).map((c) => {
        const legal = v.count + cardValue(c) <= 31;
        return cardEl(c, {
          disabled: !legal, hint: hintCards.has(c), extraLabel: legal ? "playable" : "",
          onclick: () => act({ type: "play", card: c }),
        });
      });
    } else {
      // Not my move: the cards still held (in the show and after the game, the four kept).
      const shown = ["discard", "play"].includes(v.phase) || !v.kept.length ? v.hand : v.kept;
      cards = sortCards(shown).map((c) => cardEl(c));
    }
    if (v.phase === "game_over") {
      actions.push(h("button", { type: "button", class: "primary", id: "rematch", "data-key": "rematch",
        onclick: () => act({ type: "rematch" }) }, "Play again"));
    }
    if (hintsAllowed() && myMove(v)) {
      actions.push(h("button", { type: "button", id: "hint", "data-key": "hint",
        onclick: () => state.conn?.send({ type: "hint" }) }, "Hint"));
    }
    const crib = v.my_discards?.length ? h("p", { class: "muted my-crib" },
      `In the crib from you: ${cardsShort(v.my_discards)}`) : null;
    return h("div", { class: "my-area" },
      h("h2", { class: "sr-only" }, "Your hand"),
      h("div", { class: ["hand", v.phase === "play" && v.turn === me && "my-turn"], "data-focus-region": "hand",
        "data-key": "hand", tabindex: "-1", role: "group", "aria-label": "Your hand" }, cards),
      crib,
      mugginsControls(v, names),
      actions.length ? h("div", { class: "actions" }, actions) : null,
      hintText(v));
  }

  function sitWhileWatching() {
    const open = state.seats.filter((s) => !s.taken && s.kind !== "computer");
    if (!open.length) return null;
    return h("span", {}, " ", ...open.map((s) => h("button", { type: "button", onclick: () => sit(s.seat), "data-key": `sit-${s.seat}` },
      `Sit at seat ${s.seat + 1}`)));
  }

  function hintsAllowed() {
    return state.roomInfo?.hints === true;
  }

  /** Whether this seat has something to do now (for the hint button). */
  function myMove(v) {
    const me = state.seat;
    if (me === null) return false;
    if (v.phase === "discard") return !v.discarded[me];
    if (v.phase === "play") return v.turn === me;
    if (v.phase === "show") {
      const p = v.show.pending;
      return Boolean(p && ((p.seat === me && p.announced === null) || (p.announced !== null && p.awaiting.includes(me))));
    }
    return false;
  }

  function hintedCards(v) {
    const best = state.hint?.best;
    if (!best) return new Set();
    if (best.type === "discard") return new Set(best.cards);
    if (best.type === "play") return new Set([best.card]);
    return new Set();
  }

  function hintText() {
    const hint = state.hint;
    if (!hint) return null;
    let body;
    if (hint.kind === "unavailable") body = hint.text;
    else if (hint.kind === "discard") {
      const top = (hint.choices || []).slice(0, 3);
      body = h("span", {}, `Lay away ${cardsShort(hint.best.cards)}.`,
        top.length ? h("ol", { class: "hint-choices" }, top.map((c, i) =>
          h("li", {}, `${cardsShort(c.cards)}: about ${Number(c.expected).toFixed(1)} points `,
            // One click picks the suggested cards; "lay away" still confirms.
            h("button", { type: "button", class: "link-button", "data-key": `hint-pick-${i}`,
              onclick: () => { state.selected = new Set(c.cards); render(); } }, "pick these")))) : null);
    } else if (hint.kind === "play") body = `Play ${cardShort(hint.best.card)}.`;
    else if (hint.kind === "announce") body = `The true count is ${hint.true_count}.`;
    else if (hint.kind === "answer") body = `The true count is ${hint.true_count}: ${hint.call}.`;
    else body = "Nothing to suggest.";
    return h("div", { class: "hint", role: "status" }, h("strong", {}, "Hint: "), body);
  }

  // ----------------------------------------------------------------- Muggins -----------
  function mugginsControls(v, names) {
    if (v.phase !== "show" || !v.show.pending || state.seat === null) return null;
    const p = v.show.pending;
    const me = state.seat;
    const what = `${names.possessive(p.seat).replace("Your", "your")} ${p.kind}`;
    const cards = h("div", { class: "pending-cards", "aria-label": `${what} with the starter`,
      "data-cards": p.cards.join(" "), "data-starter": v.starter, "data-kind": p.kind },
      sortCards(p.cards).map((c) => cardEl(c, { small: true })), " + ", v.starter ? cardEl(v.starter, { small: true, extraLabel: "starter" }) : null);
    if (p.seat === me && p.announced === null) {
      const send = (e) => {
        e.preventDefault();
        const n = Number(state.announce);
        if (!Number.isInteger(n) || n < 0 || n > 29) {
          state.message = { kind: "error", text: "A count is a whole number from 0 to 29." };
          render();
          return;
        }
        act({ type: "announce", points: n });
      };
      return h("form", { class: "muggins", onsubmit: send },
        h("p", {}, `Count ${what}:`), cards,
        h("label", { for: "announce" }, "Your count"),
        h("input", { id: "announce", "data-key": "announce", type: "number", min: 0, max: 29, inputmode: "numeric",
          value: state.announce, required: true, oninput: (e) => { state.announce = e.target.value; } }),
        h("button", { type: "submit", class: "primary", "data-key": "announce-send", id: "announce-send" }, "Announce"));
    }
    if (p.announced !== null && p.awaiting.includes(me)) {
      const left = state.answerDeadline ? Math.max(0, Math.ceil((state.answerDeadline - Date.now()) / 1000)) : null;
      // The ref names the announcement answered: a late click never lands on the next one.
      const answer = (call) => act(p.ref === undefined || p.ref === null ? { type: "answer", call } : { type: "answer", call, ref: p.ref });
      return h("div", { class: "muggins", role: "group", "aria-label": "Answer the announcement",
        "data-announced": p.announced },
        h("p", {}, `${names.seat(p.seat)} announces ${p.announced} for ${what}.`), cards,
        h("div", { class: "actions" },
          h("button", { type: "button", class: "primary", id: "answer-accept", "data-key": "answer-accept", onclick: () => answer("accept") }, "Accept"),
          h("button", { type: "button", id: "answer-muggins", "data-key": "answer-muggins", onclick: () => answer("muggins") }, "Muggins! (too low)"),
          h("button", { type: "button", id: "answer-overcount", "data-key": "answer-overcount", onclick: () => answer("overcount") }, "Overcount (too high)")),
        h("p", { class: "muted countdown" }, left !== null ? `${left} s to answer; silence accepts.`
          // After a reload the announcement's time is unknown (the snapshot has no deadline).
          : `Answer within ${state.roomInfo.answer_window} s of the announcement; silence accepts.`));
    }
    return h("div", { class: "muggins" }, h("p", { class: "muted" },
      p.announced === null ? `Waiting for ${names.seat(p.seat)} to announce ${what}.` : `${names.seat(p.seat)} announced ${p.announced}; waiting for answers.`), cards);
  }

  // ------------------------------------------------------------------- the show --------
  function showPanel(v, names) {
    const current = v.show?.counted || [];
    const entries = current.length ? current : v.last_show || [];
    const title = current.length || v.phase === "show" ? `The show — deal ${v.deal_number}` : `The show — deal ${v.deal_number - 1}`;
    const content = entries.length ? h("ol", { class: "show-list" }, entries.map((e) => showEntry(e, v, names)))
      : h("p", { class: "muted" }, "Hands and the crib are counted here after the play.");
    return [h("h2", { id: "show-h" }, entries.length ? title : "The show"), content];
  }

  function showEntry(e, v, names) {
    const label = `${names.possessive(e.seat)} ${e.kind}`;
    const muggins = e.announced !== undefined && e.announced !== null
      ? h("p", { class: "muted" }, `Announced ${e.announced}${e.call && e.call !== "accept" && e.call !== "timeout" ? ` — ${e.call} called${e.correct ? " rightly" : " wrongly"}` : ""}; pegged ${e.pegged}.`)
      : null;
    const backup = v.options.backup10 && e.total === 0 ? h("p", { class: "backup-note" }, "Scored nothing: Back-up 10 moves its owner back (see the line under the board).") : null;
    return h("li", { class: ["show-entry", e.total === 0 && "zero"] },
      h("div", { class: "show-head" },
        h("span", { class: "show-who" }, label),
        h("span", { class: "show-total", "aria-label": `${e.total} points` }, String(e.total))),
      h("div", { class: "show-cards" }, sortCards(e.cards).map((c) => cardEl(c, { small: true })),
        h("span", { class: "plus", "aria-hidden": "true" }, "+"), cardEl(e.starter, { small: true, extraLabel: "starter" })),
      h("p", { class: "say" }, e.total ? `${capitalize(sayShow(e.items))}.` : "Nineteen: not a point."),
      muggins, backup);
  }

  // ------------------------------------------------------------------- start ---------
  const record = loadRoom(roomId);
  if (record.seat !== null && record.seat !== undefined && record.seatToken) {
    connect(record.seat, record.seatToken); // reload / come back: resume the seat
  } else if (record.autoSit !== undefined && record.autoSit !== null && state.name.trim()) {
    updateRoom(roomId, { autoSit: null }); // the creator sits at once, once
    connect(record.autoSit, null);
  } else {
    showLobby();
  }
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
  };
}

/** "Hints allowed · 15 s to answer a count · the computer plays for anyone away over 60 s". */
function describeSettings(info, options = {}) {
  const parts = [info.hints ? "Hints allowed" : "No hints"];
  if (options.muggins) parts.push(`${info.answer_window} s to answer a count`);
  if (info.takeover_grace) parts.push(`the computer plays for anyone away over ${seconds(info.takeover_grace)}`);
  return parts.join(" · ");
}

function seconds(n) {
  if (n >= 120 && n % 60 === 0) return `${n / 60} minutes`;
  return n === 60 ? "a minute" : `${n} s`;
}

const capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

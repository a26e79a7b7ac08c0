// "Play now" (quick match, docs/protocol.md "Quick match"): the waiting screen. It opens a
// connection with this browser's player, sends queue_join for the chosen table, shows how
// many wait for that table (queue_status) with a Cancel button and, after a while, the
// offer to play the computer; on `matched` it keeps the seat and its token for the room
// (storage.js) and goes straight to the table, /r/<room>, which resumes the seat. A dropped
// connection that comes back queues again (the server gives a match made meanwhile).
import { CribbageClient } from "../vendor/cribbage-client/index.js";
import { codeText } from "./describe.js";
import { h, replaceKeepingFocus } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { topBar } from "./layout.js";
import { loadPlayer } from "./player.js";
import { updateRoom } from "./storage.js";

function wsUrl() {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
}

/** The table in words, e.g. "2 players, 121 holes, Rated game". */
export function tableText(table) {
  const parts = [
    table.partnerships ? t("options.partnerships") : t("options.players", { n: table.players }),
    t("start.holes", { n: table.target || 121 }),
  ];
  if (table.rated) parts.push(t("start.rated"));
  return parts.join(", ");
}

/**
 * Show the waiting screen in `root` and wait for `table` as `name`.
 * `onBack()`: the start page again (after Cancel, or from a wait that ended).
 */
export function waitingPage(root, table, name, onBack) {
  const state = { status: null, error: null, ended: null, busy: false };
  const client = new CribbageClient({ url: wsUrl(), name, player: loadPlayer(), client: "web/2" });
  let leaving = false;
  let off = null;

  function finish() {
    leaving = true;
    off?.();
    client.close();
  }

  client.on("welcome", () => { if (!leaving) client.queueJoin(table); });
  client.on("queue_status", (frame) => { state.status = frame; state.busy = false; render(); });
  client.on("matched", (frame) => {
    finish();
    updateRoom(frame.room, { seat: frame.seat, seatToken: frame.seat_token, playerToken: client.playerToken });
    location.assign(`/r/${encodeURIComponent(frame.room)}`);
  });
  client.on("queue_left", (frame) => {
    if (frame.reason === "cancelled") {
      finish();
      onBack();
      return;
    }
    state.ended = frame.reason;
    finish();
    render();
  });
  client.on("error", (e) => {
    if (leaving) return;
    state.busy = false;
    state.error = codeText(e.code, e.message);
    render();
  });

  function cancel() {
    state.busy = true;
    render();
    if (!client.queueLeave()) { finish(); onBack(); }
  }

  function playComputer() {
    state.busy = true;
    render();
    client.queueAcceptComputer();
  }

  function render() {
    document.title = `${t("quick.waiting_title")} — ${t("title.page")}`;
    const s = state.status;
    const body = [h("h1", {}, t("quick.waiting_title")),
      h("p", { class: "lede" }, t("quick.table_is", { table: tableText(table) }))];
    if (state.ended) {
      body.push(h("p", { class: "error", role: "alert" }, t(`quick.left_${state.ended}`)),
        h("button", { type: "button", class: "primary", "data-key": "quick-back", onclick: () => onBack() },
          t("quick.back")));
    } else {
      body.push(h("p", { class: "quick-count", role: "status", "data-key": "quick-count" },
        s ? t("quick.waiting_count", { n: s.waiting }) : t("quick.connecting")));
      if (s) body.push(h("p", { class: "muted" }, t("quick.waited", { n: Math.round(s.waited) })));
      if (state.error) body.push(h("p", { class: "error", role: "alert" }, state.error));
      if (s && s.computer_offer) {
        body.push(h("p", {}, t("quick.offer")),
          h("button", { type: "button", "data-key": "quick-computer", disabled: state.busy, onclick: playComputer },
            t("quick.play_computer")));
      }
      body.push(h("button", { type: "button", class: "primary", "data-key": "quick-cancel", onclick: cancel },
        t("quick.cancel")));
    }
    replaceKeepingFocus(root, h("div", {}, topBar(), h("main", { class: "start waiting" },
      h("section", { class: "panel" }, body))));
  }

  off = onLanguageChange(render);
  render();
  client.connect();
}

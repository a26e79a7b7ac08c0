// Table talk at the room page (issue 21, docs/protocol.md "Chat"): the room's messages, the
// preset phrases and the free text box, and per message Mute, Block and Report.
//
// A preset travels as its id and is shown in the READER's language (`chat.preset.<id>`), so
// a Dane and a Swede at one table read each other. Free text and names come from other
// people: they go into the page as text nodes only (dom.js `h` makes text nodes of strings;
// nothing here writes markup or makes a link), each in its own direction-isolated element
// (`<bdi>`, `dir="auto"`) so a right-to-left name cannot reorder the line, and long words
// wrap (app.css, overflow-wrap: anywhere) instead of widening the page.

import { codeText } from "./describe.js";
import { h } from "./dom.js";
import { lang, t } from "./i18n.js";

/** The preset ids, in the order they are offered (protocol/chat.py PRESETS). */
export const PRESETS = [
  "hello", "good_luck", "have_fun", "good_game", "well_played", "nice_hand", "nice_crib",
  "well_pegged", "lucky_starter", "nice_go", "thanks", "sorry", "oops", "wow", "thinking",
  "one_more", "brb", "back", "must_go", "bye",
];
export const CHAT_MODES = ["off", "presets", "free"];
const REASONS = ["abuse", "spam", "cheating", "other"];
/** Messages kept on the page (the server keeps the room's last ones; a snapshot brings them). */
const KEEP = 150;
/** The client messages whose errors the panel shows (the `ref` of an `error` frame). */
export const CHAT_REFS = new Set(["chat", "chat_mute", "chat_unmute", "chat_report"]);
/** The protocol's bound of free text (protocol.messages.ChatText); the server's own limit
 * (chat_max_chars) is told by `chat_too_long`. */
const MAX_TEXT = 1000;

/** What the page knows of the table's talk; `render` draws it (chatPanel). */
export class ChatState {
  constructor() {
    /** The room's messages this connection may read, oldest first (ChatMessage). */
    this.messages = [];
    /** null: the server said nothing of chat (an older server); false: off; true: on. */
    this.on = null;
    /** Muted players: id -> {name, blocked, alias} (alias: the name of an author whose
     * messages came without a player id, a private profile). */
    this.muted = new Map();
    this.menu = null; // the message id whose menu is open
    this.reporting = null; // {id, reason} while a report is written
    this.reported = new Set(); // message ids this page reported
    this.pending = null; // the message a chat_mute was sent about
    this.notice = null; // {kind: "info" | "error", text}
    this.mutesRead = false; // GET /api/players/me/mutes asked (room.js)
  }

  /** A snapshot's `chat`: a list (oldest first), null (chat off) or undefined (not told). */
  fromSnapshot(list) {
    if (list === undefined) return;
    this.on = Array.isArray(list);
    if (this.on) this.messages = list.slice(-KEEP);
    else this.messages = [];
  }

  /** A `chat` frame's message. */
  add(message) {
    if (!message || typeof message !== "object") return;
    this.on = true;
    if (this.messages.some((m) => m.id === message.id)) return;
    this.messages.push(message);
    this.messages.sort((a, b) => a.id - b.id);
    if (this.messages.length > KEEP) this.messages.splice(0, this.messages.length - KEEP);
  }

  /** `chat_hidden`: a moderator took a message away. */
  hide(id) {
    this.messages = this.messages.filter((m) => m.id !== id);
    if (this.menu === id) this.menu = null;
    if (this.reporting?.id === id) this.reporting = null;
  }

  /** `chat_muted`: the answer to a mute, block or unmute. */
  onMuted(frame) {
    const pending = this.pending;
    this.pending = null;
    const name = frame.name || pending?.name || t("chat.someone");
    // In a sentence, the name is isolated (FSI ... PDI): a right-to-left name cannot
    // reorder the words around it.
    const isolated = `\u2068${name}\u2069`;
    if (frame.muted || frame.blocked) {
      const alias = pending && pending.player === null ? pending.name : null;
      this.muted.set(frame.player, { name, blocked: Boolean(frame.blocked), alias });
      this.notice = { kind: "info", text: t(frame.blocked ? "chat.blocked_note" : "chat.muted_note", { name: isolated }) };
      this.menu = null;
      this.reporting = null;
    } else {
      this.muted.delete(frame.player);
      this.notice = { kind: "info", text: t("chat.unmuted_note", { name: isolated }) };
    }
  }

  /** The player's mutes from `GET /api/players/me/mutes` (`[{player, name}]`): the list of
   * players to unmute survives a reload. */
  knownMutes(mutes) {
    for (const m of mutes || []) {
      if (m && typeof m.player === "string" && !this.muted.has(m.player)) {
        this.muted.set(m.player, { name: m.name || t("chat.someone"), blocked: false, alias: null });
      }
    }
  }

  /** `chat_reported`: the report is filed. */
  onReported(frame) {
    this.reported.add(frame.message);
    this.reporting = null;
    this.menu = null;
    this.notice = { kind: "info", text: t("chat.reported") };
  }

  /** Whether a message's author is muted by this player. */
  isMuted(m) {
    if (m.player !== null && m.player !== undefined) return this.muted.has(m.player);
    for (const x of this.muted.values()) if (x.alias !== null && x.alias === m.name) return true;
    return false;
  }

  /** The messages to show: all but the muted authors'. */
  shown() {
    return this.messages.filter((m) => !this.isMuted(m));
  }
}

/** The text of a message for this reader: a preset in the reader's language, else the
 * writer's own words (a preset this page does not know shows as its id). */
export function messageText(m) {
  if (m.preset) {
    const text = t(`chat.preset.${m.preset}`);
    return text.startsWith("⟦") ? m.preset : text;
  }
  return m.text ?? "";
}

/**
 * The chat panel. `ctx`: {chat (ChatState), mode ("off" | "presets" | "free" | null),
 * me (this connection's player id or null), mySeat, watching (a spectator while a game is
 * on), canTalk (the connection presented a player), send(payload) -> bool, mute(m, block),
 * unmute(playerId), report(m, reason, note), render()}. Returns null when the server told
 * nothing of chat (an older server).
 */
export function chatPanel(ctx) {
  const { chat } = ctx;
  if (chat.on === null && ctx.mode === null) return null;
  const mode = chat.on === false ? "off" : ctx.mode || "free";
  const body = [];
  if (mode === "off") {
    body.push(h("p", { class: "muted chat-off", id: "chat-off" }, t("chat.off")));
  } else {
    const shown = chat.shown();
    body.push(h("div", { class: "chat-list", role: "log", "aria-live": "polite", "aria-labelledby": "chat-h",
      tabindex: "0", "data-key": "chat-list" },
    shown.length ? h("ol", {}, shown.map((m) => messageEl(m, ctx))) : h("p", { class: "muted chat-empty" }, t("chat.empty"))));
    // The open message's Mute / Block / Report, under the list (not inside the live log).
    const open = shown.find((m) => m.id === chat.menu && !own(m, ctx));
    if (open) body.push(menu(open, ctx, `chat-menu-${open.id}`));
    if (chat.notice) {
      body.push(h("p", { class: ["message", chat.notice.kind, "chat-notice"], id: "chat-notice",
        role: chat.notice.kind === "error" ? "alert" : "status" }, chat.notice.text));
    }
    body.push(controls(ctx, mode));
    body.push(mutedList(ctx));
  }
  return h("section", { class: "panel chat-panel", id: "chat", "aria-labelledby": "chat-h", "data-mode": mode },
    h("h2", { id: "chat-h" }, t("chat.title")), body);
}

function own(m, ctx) {
  if (m.player && ctx.me && m.player === ctx.me) return true;
  return ctx.mySeat !== null && ctx.mySeat !== undefined && m.seat === ctx.mySeat;
}

function messageEl(m, ctx) {
  const { chat } = ctx;
  const mine = own(m, ctx);
  const tag = m.seat === null || m.seat === undefined ? t("chat.spectator") : t("chat.seat", { n: m.seat + 1 });
  const open = chat.menu === m.id;
  const menuId = `chat-menu-${m.id}`;
  return h("li", {
    class: ["chat-msg", mine && "own", m.audience === "spectators" && "to-spectators"],
    "data-id": m.id, "data-audience": m.audience, "data-preset": m.preset || null, "data-seat": m.seat ?? "",
    "data-reported": chat.reported.has(m.id) ? "true" : null,
  },
  h("span", { class: "chat-head" },
    h("bdi", { class: "chat-name" }, m.name),
    " ", h("span", { class: "chat-tag" }, `(${tag})`),
    m.audience === "spectators" ? [" ", h("span", { class: "chat-audience", "data-audience": "spectators" }, t("chat.to_spectators"))] : null,
    h("span", { class: "chat-sep" }, ": ")),
  // A preset is in the reader's language; free text in the writer's, direction of its own.
  h("span", { class: "chat-text", dir: "auto", lang: m.preset ? lang() : null }, messageText(m)),
  mine ? null : h("button", {
    type: "button", class: "chat-more link-button", "data-key": `chat-more-${m.id}`,
    "aria-expanded": String(open), "aria-controls": open ? menuId : null,
    onclick: () => {
      chat.menu = open ? null : m.id;
      if (chat.reporting?.id !== m.id) chat.reporting = null;
      ctx.render();
    },
  }, t("chat.more"), h("span", { class: "sr-only" }, " ", t("chat.more_about", { name: m.name }))));
}

function menu(m, ctx, menuId) {
  const { chat } = ctx;
  const reporting = chat.reporting?.id === m.id ? chat.reporting : null;
  const items = h("div", { class: "chat-menu-actions" },
    h("button", { type: "button", "data-key": `chat-mute-${m.id}`, "data-action": "mute",
      onclick: () => ctx.mute(m, false) }, t("chat.mute")),
    h("button", { type: "button", "data-key": `chat-block-${m.id}`, "data-action": "block",
      onclick: () => ctx.mute(m, true) }, t("chat.block")),
    h("button", { type: "button", "data-key": `chat-report-${m.id}`, "data-action": "report",
      "aria-expanded": String(Boolean(reporting)), disabled: chat.reported.has(m.id),
      onclick: () => { chat.reporting = { id: m.id, reason: "abuse" }; ctx.render(); } }, t("chat.report")));
  return h("div", { class: "chat-menu", id: menuId, role: "group", "aria-label": t("chat.menu_label", { name: m.name }),
    "data-id": m.id },
  h("p", { class: "chat-quote" }, h("bdi", { class: "chat-name" }, m.name), ": ",
    h("span", { class: "chat-text", dir: "auto", lang: m.preset ? lang() : null }, messageText(m))),
  items, reporting ? reportForm(m, ctx, reporting) : null);
}

function reportForm(m, ctx, reporting) {
  const group = `report-reason-${m.id}`;
  const send = (e) => {
    e.preventDefault();
    const note = e.target.querySelector("input[name=report-note]")?.value.trim() || undefined;
    ctx.report(m, reporting.reason, note);
  };
  return h("form", { class: "chat-report", onsubmit: send, "data-key": `chat-report-form-${m.id}` },
    h("fieldset", {},
      h("legend", {}, t("chat.report_reason")),
      REASONS.map((r) => h("label", { class: "choice" },
        h("input", { type: "radio", name: group, value: r, checked: reporting.reason === r, "data-key": `${group}-${r}`,
          onchange: () => { reporting.reason = r; } }),
        h("span", {}, t(`chat.reason.${r}`))))),
    h("label", { for: `report-note-${m.id}` }, t("chat.report_note")),
    h("input", { id: `report-note-${m.id}`, name: "report-note", "data-key": `report-note-${m.id}`, maxlength: 200,
      autocomplete: "off" }),
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary", "data-key": `chat-report-send-${m.id}` }, t("chat.report_send")),
      h("button", { type: "button", "data-key": `chat-report-cancel-${m.id}`,
        onclick: () => { ctx.chat.reporting = null; ctx.render(); } }, t("chat.cancel"))));
}

function controls(ctx, mode) {
  if (!ctx.canTalk) return h("p", { class: "muted chat-needs-player" }, codeText("chat_needs_player"));
  const presets = h("div", { class: "chat-presets", role: "group", "aria-labelledby": "chat-presets-h" },
    h("span", { class: "chat-presets-label", id: "chat-presets-h" }, t("chat.presets")),
    PRESETS.map((id) => h("button", {
      type: "button", class: "chat-preset", "data-key": `chat-preset-${id}`, "data-preset": id,
      onclick: () => ctx.send({ preset: id }),
    }, t(`chat.preset.${id}`))));
  const out = [];
  if (ctx.watching) out.push(h("p", { class: "chat-spectators-note", id: "chat-spectators-note" }, t("chat.spectators_only")));
  if (mode === "presets") out.push(h("p", { class: "muted chat-presets-only" }, t("chat.presets_only")));
  if (mode === "free") {
    const submit = (e) => {
      e.preventDefault();
      const input = e.target.querySelector("#chat-text");
      const text = input.value.trim();
      if (!text) return;
      // Emptied before the page draws again (a redraw keeps what a box holds, dom.js); put
      // back when it could not be sent.
      const typed = input.value;
      input.value = "";
      if (!ctx.send({ text })) {
        const again = document.querySelector("#chat-text");
        if (again) again.value = typed;
      }
    };
    out.push(h("form", { class: "chat-form", onsubmit: submit },
      h("label", { for: "chat-text", class: "sr-only" }, t("chat.text_label")),
      h("input", { id: "chat-text", name: "chat-text", "data-key": "chat-text", dir: "auto", autocomplete: "off",
        maxlength: MAX_TEXT, placeholder: t("chat.text_label") }),
      h("button", { type: "submit", "data-key": "chat-send", id: "chat-send" }, t("chat.send"))));
  }
  out.push(presets);
  return h("div", { class: "chat-controls" }, out);
}

function mutedList(ctx) {
  const { chat } = ctx;
  if (!chat.muted.size) return null;
  return h("section", { class: "chat-muted", "aria-labelledby": "chat-muted-h" },
    h("h3", { id: "chat-muted-h" }, t("chat.muted_title")),
    h("ul", {}, [...chat.muted].map(([player, x]) => h("li", { "data-player": player },
      h("bdi", { class: "chat-name" }, x.name),
      x.blocked ? [" ", h("span", { class: "chat-tag" }, `(${t("chat.blocked_tag")})`)] : null, " ",
      // Unmuting a blocked player lets their messages through; the block itself is undone
      // on the player's page (social.js).
      x.blocked ? null : h("button", { type: "button", class: "link-button", "data-key": `chat-unmute-${player}`,
        onclick: () => ctx.unmute(player) }, t("chat.unmute"), h("span", { class: "sr-only" }, " ", t("chat.unmute_who", { name: x.name })))))));
}

// The lobby on the start page: the public tables waiting for players, followed live over
// the WebSocket (`lobby_subscribe`, then `lobby_update` frames: docs/protocol.md "Public
// tables and the lobby"). A free seat's button goes to the table's page (/r/<room>), which
// takes the seat with the ordinary join (the room record's autoSit, as for a table's creator).
import { CribbageClient } from "../vendor/cribbage-client/index.js";
import { h } from "./dom.js";
import { formatList, lang, t } from "./i18n.js";
import { loadPlayer } from "./player.js";
import { loadName, saveName, updateRoom } from "./storage.js";

function wsUrl() {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
}

/**
 * Follow the lobby; `onChange()` is called whenever what `lobby` holds changes.
 * Returns `{ tables (null until the first list), live, error, stop() }`.
 */
export function followLobby(onChange) {
  const lobby = { tables: null, live: false, error: null, stop: () => {} };
  const client = new CribbageClient({
    url: wsUrl(), name: loadName().trim() || t("name.guest"), player: loadPlayer(),
    language: lang(), client: "web/2 lobby",
  });
  client.on("lobby", ({ tables }) => { lobby.tables = tables; lobby.live = true; lobby.error = null; onChange(); });
  client.on("state", ({ state }) => {
    const live = state === "open" && lobby.tables !== null;
    if (live !== lobby.live) { lobby.live = live; onChange(); }
  });
  client.on("error", (e) => {
    if (e.ref === "lobby_subscribe" || e.fatal) { lobby.error = e.code; onChange(); }
  });
  client.lobbySubscribe();
  client.connect().catch(() => { /* the client reconnects by itself; `live` tells */ });
  lobby.stop = () => client.close();
  return lobby;
}

function description(table) {
  const o = table.options;
  const parts = [o.partnerships ? t("options.partnerships") : t("options.players", { n: o.players }),
    t("options.to", { n: o.target })];
  if (o.muggins && !o.lowball) parts.push(t("variant.muggins"));
  if (o.lowball) parts.push(t("variant.lowball"));
  if (o.backup10) parts.push(t("variant.backup10"));
  if (table.match > 1) parts.push(t("lobby.match", { n: table.match }));
  return parts.join(" · ");
}

function who(table) {
  const names = table.seats.filter((s) => s.kind !== "open").map((s) => s.name);
  return names.length ? formatList(names) : t("lobby.nobody");
}

function sit(table, seat) {
  const typed = document.getElementById("your-name")?.value?.trim();
  if (typed) saveName(typed);
  updateRoom(table.room, { autoSit: seat });
  location.assign(`/r/${encodeURIComponent(table.room)}`);
}

function seatItem(table, seat) {
  const label = t("seat.n", { n: seat.seat + 1 });
  if (seat.kind === "open") {
    return h("li", { class: "lobby-seat open" },
      h("button", {
        type: "button", class: "primary", "data-key": `sit-${table.room}-${seat.seat}`,
        "data-room": table.room, "data-seat": String(seat.seat),
        "aria-label": t("lobby.sit_label", { n: seat.seat + 1, table: `${description(table)}, ${who(table)}` }),
        onclick: () => sit(table, seat.seat),
      }, t("lobby.sit", { n: seat.seat + 1 })));
  }
  const name = seat.kind === "computer" ? t("start.seat_computer", { level: t(`level.${seat.level || "standard"}`) }) : seat.name;
  return h("li", { class: "lobby-seat" }, h("span", { class: "seat-label" }, label), " ",
    h("span", {}, name), seat.rating !== null && seat.rating !== undefined
      ? h("span", { class: "muted" }, ` (${t("lobby.rating", { n: seat.rating })})`) : null);
}

function tableItem(table) {
  return h("li", { class: "panel lobby-table", "data-room": table.room },
    h("p", { class: "lobby-head" },
      h("strong", {}, description(table)),
      table.rated ? h("span", { class: "badge" }, t("lobby.rated")) : null,
      h("span", { class: "muted", "data-language": table.language }, " ", t(`lobby.in_${table.language}`)),
      h("span", { class: "muted" }, " · ", t("lobby.seats_free", { n: table.seats_free }))),
    h("ul", { class: "lobby-seats" }, table.seats.map((s) => seatItem(table, s))));
}

/** The "Public tables" section for `lobby` (from followLobby). */
export function lobbySection(lobby) {
  let body;
  if (lobby.error) body = h("p", { class: "error", role: "alert" }, t(`code.${lobby.error}`));
  else if (lobby.tables === null) body = h("p", { class: "muted" }, t("lobby.loading"));
  else if (!lobby.tables.length) body = h("p", { class: "muted", "data-key": "lobby-empty" }, t("lobby.empty"));
  else body = h("ul", { class: "lobby-list", "data-key": "lobby-list" }, lobby.tables.map(tableItem));
  return h("section", { class: "lobby", "aria-labelledby": "lobby-title" },
    h("h2", { id: "lobby-title" }, t("lobby.public_title")),
    h("p", { class: "lede" }, t("lobby.lede")),
    lobby.tables !== null && !lobby.live && !lobby.error ? h("p", { class: "muted", role: "status" }, t("lobby.offline")) : null,
    body);
}

// The start page: "Play now" (quick match: choose the table, wait for players, quick.js),
// the public tables waiting for players (lobby.js), and the form that chooses a table
// (players, target, variants, computer seats, public or private and its language) and
// creates it with POST /api/rooms, then goes to its share link /r/<room>, where the creator
// sits at the first seat kept for a person.
import { codeText } from "./describe.js";
import { h, replaceKeepingFocus } from "./dom.js";
import { LANGUAGES, lang, onLanguageChange, t } from "./i18n.js";
import { topBar } from "./layout.js";
import { followLobby, lobbySection } from "./lobby.js";
import { loadPlayer, updateMe } from "./player.js";
import { waitingPage } from "./quick.js";
import { loadName, saveName, updateRoom } from "./storage.js";

const LAYOUTS = [
  { value: "2", label: () => t("options.players", { n: 2 }), players: 2, partnerships: false },
  { value: "3", label: () => t("options.players", { n: 3 }), players: 3, partnerships: false },
  { value: "4", label: () => t("options.players", { n: 4 }), players: 4, partnerships: false },
  { value: "4p", label: () => t("options.partnerships"), players: 4, partnerships: true },
];

const SEAT_CHOICES = [
  { value: "person", label: () => t("start.seat_person") },
  { value: "standard", label: () => t("start.seat_computer", { level: t("level.standard") }) },
  { value: "expert", label: () => t("start.seat_computer", { level: t("level.expert") }) },
  { value: "easy", label: () => t("start.seat_computer", { level: t("level.easy") }) },
];

// A single game, or a match: best of 3, 5 or 7 (room setting `match`, docs/rules.md §8).
const MATCHES = [
  { value: "1", label: () => t("start.match_single") },
  { value: "3", label: () => t("start.match_best_of", { n: 3 }) },
  { value: "5", label: () => t("start.match_best_of", { n: 5 }) },
  { value: "7", label: () => t("start.match_best_of", { n: 7 }) },
];

// Table talk (room setting `chat`, docs/protocol.md "Chat"): free text by default, set
// phrases only at a rated table (the server's defaults) unless chosen otherwise.
const CHAT_CHOICES = [
  { value: "free", label: () => t("start.chat_free") },
  { value: "presets", label: () => t("start.chat_presets") },
  { value: "off", label: () => t("start.chat_off") },
];

const TURN_CLOCKS = [
  { value: "", label: () => t("start.clock_off") },
  { value: "30", label: () => t("start.clock_seconds", { n: 30 }) },
  { value: "60", label: () => t("start.clock_seconds", { n: 60 }) },
  { value: "120", label: () => t("start.clock_minutes", { n: 2 }) },
];

export function startPage(root) {
  // Form state survives re-renders (changing the player count redraws the seat list).
  const state = {
    name: loadName(), layout: "2", target: "121", muggins: false, lowball: false,
    backup10: false, hints: true, turnSeconds: "", match: "1", seats: { 1: "person", 2: "person", 3: "person" },
    rated: false, public: false, language: null, chat: null, busy: false, error: null,
    quickLayout: "2", quickRated: false, quickError: null,
  };
  // The table's language follows the page's until one is chosen.
  const tableLanguage = () => state.language || lang();
  const lobby = followLobby(() => render());
  let offLanguage = null;
  // A rated table (docs/rules.md §9) seats players only: offered when this browser has one.
  const canRate = () => Boolean(loadPlayer());
  const rated = () => state.rated && canRate();
  // The chat setting follows the kind of table until one is chosen.
  const chatChoice = () => state.chat || (rated() ? "presets" : "free");

  const layout = () => LAYOUTS.find((l) => l.value === state.layout);

  async function submit(e) {
    e.preventDefault();
    const name = state.name.trim();
    if (!name) {
      state.error = t("error.name_first");
      render();
      root.querySelector("#your-name")?.focus();
      return;
    }
    saveName(name);
    state.busy = true;
    state.error = null;
    // The player is called by its own name at every table (docs/protocol.md, hello): the
    // name typed here becomes the player's.
    if (loadPlayer()) {
      try {
        await updateMe({ name });
      } catch (err) {
        if (err.code === "bad_name") {
          state.busy = false;
          state.error = err.message;
          render();
          root.querySelector("#your-name")?.focus();
          return;
        }
        /* the server is away: the table still takes the name in hello */
      }
    }
    const { players, partnerships } = layout();
    const computers = {};
    for (let s = 1; s < players; s += 1) {
      if (state.seats[s] !== "person") computers[String(s)] = state.seats[s];
    }
    // A rated game is the standard game to 121 with the turn clock on (60 s unless chosen).
    const body = rated() ? {
      options: { players, partnerships, target: 121, muggins: false, lowball: false, backup10: false },
      room: {
        hints: false, turn_seconds: Number(state.turnSeconds) || 60, rated: true, match: Number(state.match),
        public: state.public, language: tableLanguage(), chat: chatChoice(),
      },
      computers,
    } : {
      options: {
        players, partnerships, target: Number(state.target), muggins: state.muggins && !state.lowball,
        lowball: state.lowball, backup10: state.backup10,
      },
      // The answer window and the takeover grace are the server's defaults; the table
      // shows the effective values (room_settings).
      room: {
        hints: state.hints, turn_seconds: state.turnSeconds ? Number(state.turnSeconds) : null,
        match: Number(state.match), public: state.public, language: tableLanguage(), chat: chatChoice(),
      },
      computers,
    };
    state.busy = true;
    state.error = null;
    render();
    try {
      const res = await fetch("/api/rooms", {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
      });
      const data = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(data?.error?.code ? codeText(data.error.code) : t("start.http_error", { n: res.status }));
      // The creator token lets this browser later give an empty seat to a computer.
      updateRoom(data.room, {
        creatorToken: data.creator_token, autoSit: 0, room_settings: data.room_settings || null,
      });
      location.assign(`/r/${encodeURIComponent(data.room)}`);
    } catch (err) {
      state.busy = false;
      state.error = t("start.failed", { why: err.message });
      render();
    }
  }

  // "Play now": the name is the player's (as for a table made here), then the waiting
  // screen; Cancel comes back here.
  async function playNow() {
    const name = state.name.trim();
    if (!name) {
      state.quickError = t("error.name_first");
      render();
      root.querySelector("#quick-name")?.focus();
      return;
    }
    saveName(name);
    state.quickError = null;
    if (loadPlayer()) {
      try {
        await updateMe({ name });
      } catch (err) {
        if (err.code === "bad_name") {
          state.quickError = err.message;
          render();
          root.querySelector("#quick-name")?.focus();
          return;
        }
      }
    }
    const l = LAYOUTS.find((x) => x.value === state.quickLayout);
    const table = { players: l.players, partnerships: l.partnerships, rated: state.quickRated && canRate() };
    offLanguage?.();
    waitingPage(root, table, name, () => {
      offLanguage = onLanguageChange(render);
      render();
      root.querySelector("[data-key=play-now]")?.focus();
    });
  }

  function quickPanel() {
    return h("section", { class: "panel start-form quick", "aria-labelledby": "quick-title" },
      h("h2", { id: "quick-title" }, t("quick.title")),
      h("p", {}, t("quick.lede")),
      h("div", { class: "field" },
        h("label", { for: "quick-name" }, t("form.your_name")),
        h("input", {
          id: "quick-name", name: "quick-name", "data-key": "quick-name", value: state.name, maxlength: 32,
          autocomplete: "nickname", "aria-describedby": state.quickError ? "quick-error" : null,
          oninput: (e) => { state.name = e.target.value; },
        })),
      h("div", { class: "field" },
        h("label", { for: "quick-table" }, t("quick.table")),
        h("select", {
          id: "quick-table", name: "quick-table", "data-key": "quick-table",
          onchange: (e) => { state.quickLayout = e.target.value; },
        }, LAYOUTS.map((l) => h("option", { value: l.value, selected: state.quickLayout === l.value }, l.label())))),
      canRate() ? h("label", { class: "choice" },
        h("input", {
          type: "checkbox", id: "quick-rated", name: "quick-rated", "data-key": "quick-rated",
          checked: state.quickRated, onchange: (e) => { state.quickRated = e.target.checked; },
        }),
        h("span", {}, t("quick.rated"))) : null,
      state.quickError ? h("p", { class: "error", id: "quick-error", role: "alert" }, state.quickError) : null,
      h("button", { type: "button", class: "primary", "data-key": "play-now", onclick: playNow }, t("quick.play")));
  }

  // `disabled`: the choice cannot be made now (a rated table is played to 121).
  const radio = (group, value, label, help, disabled = false) =>
    h("label", { class: ["choice", disabled && "disabled"] },
      h("input", {
        type: "radio", name: group, value, checked: disabled ? false : state[group] === value,
        "data-key": `${group}-${value}`, disabled,
        onchange: () => { state[group] = value; render(); },
      }),
      h("span", {}, label, help ? h("small", {}, help) : null));

  // `off`: why the option cannot be chosen now (it is shown unticked and disabled, and the
  // reason is its description), or null.
  const check = (key, label, help, rules, off = null) =>
    h("div", { class: "choice-box" },
      h("label", { class: ["choice", off && "disabled"] },
        h("input", {
          type: "checkbox", checked: off ? false : state[key], "data-key": key, name: key, disabled: Boolean(off),
          "aria-describedby": off ? `${key}-off` : null,
          onchange: (e) => {
            state[key] = e.target.checked;
            // Lowball is played without Muggins (docs/rules.md §1.3): choosing it unticks Muggins.
            if (key === "lowball" && state.lowball) state.muggins = false;
            render();
          },
        }),
        h("span", {}, label, h("small", {}, help),
          off ? h("small", { class: "muggins-off", id: `${key}-off` }, off) : null)),
      rules ? h("a", { class: "choice-rules", href: `/rules/${rules}` }, t("start.rules_of", { variant: label })) : null);

  function seatRows() {
    const { players, partnerships } = layout();
    const rows = [h("li", {}, h("span", { class: "seat-label" }, t("seat.n", { n: 1 })), h("span", {}, t("start.seat_you")))];
    for (let s = 1; s < players; s += 1) {
      const id = `seat-${s}`;
      const note = partnerships ? ` ${s === 2 ? t("start.partner") : t("start.opponent")}` : "";
      rows.push(h("li", {},
        h("label", { class: "seat-label", for: id }, `${t("seat.n", { n: s + 1 })}${note}`),
        h("select", {
          id, name: id, "data-key": id,
          onchange: (e) => { state.seats[s] = e.target.value; },
        }, SEAT_CHOICES.map((c) => h("option", { value: c.value, selected: state.seats[s] === c.value }, c.label())))));
    }
    return rows;
  }

  function render() {
    document.title = t("title.page");
    replaceKeepingFocus(root, h("div", {}, topBar(), h("main", { class: "start" },
      h("h1", {}, t("start.title")),
      h("p", { class: "lede" }, t("start.lede")),
      quickPanel(),
      lobbySection(lobby),
      h("h2", {}, t("start.new_table")),
      h("form", { class: "panel start-form", onsubmit: submit, "aria-describedby": state.error ? "form-error" : null },
        h("div", { class: "field" },
          h("label", { for: "your-name" }, t("form.your_name")),
          h("input", {
            id: "your-name", name: "name", "data-key": "your-name", value: state.name, maxlength: 32,
            autocomplete: "nickname", required: true,
            oninput: (e) => { state.name = e.target.value; },
          })),
        h("fieldset", {},
          h("legend", {}, t("start.players")),
          h("div", { class: "choices" }, LAYOUTS.map((l) => radio("layout", l.value, l.label())))),
        h("fieldset", {},
          h("legend", {}, t("start.game_to")),
          h("div", { class: "choices" },
            radio("target", "121", t("start.holes", { n: 121 }), t("start.full_game")),
            radio("target", "61", t("start.holes", { n: 61 }), t("start.short_game"), rated()))),
        h("fieldset", {},
          h("legend", {}, t("start.variants")),
          h("div", { class: "choices" },
            check("muggins", t("variant.muggins"), t("start.muggins_help"), "muggins",
              rated() ? t("start.rated_standard") : state.lowball ? t("start.lowball_muggins") : null),
            check("lowball", t("variant.lowball"), t("start.lowball_help"), "lowball",
              rated() ? t("start.rated_standard") : null),
            check("backup10", t("variant.backup10"), t("start.backup10_help"), "backup10",
              rated() ? t("start.rated_standard") : null),
            check("hints", t("start.hints"), t("start.hints_help"), null,
              rated() ? t("start.rated_no_hints") : null)),
          h("p", { class: "note" }, h("a", { href: "/rules/standard" }, t("start.rules_standard")))),
        canRate() ? h("fieldset", {},
          h("legend", {}, t("start.rated_legend")),
          h("div", { class: "choices" }, check("rated", t("start.rated"), t("start.rated_help")))) : null,
        h("div", { class: "field" },
          h("label", { for: "turn-clock" }, t("start.turn_clock")),
          h("select", {
            id: "turn-clock", name: "turn-clock", "data-key": "turn-clock",
            "aria-describedby": "turn-clock-help",
            onchange: (e) => { state.turnSeconds = e.target.value; },
          }, (rated() ? TURN_CLOCKS.filter((c) => c.value) : TURN_CLOCKS).map((c) => h("option", {
            value: c.value, selected: (rated() ? state.turnSeconds || "60" : state.turnSeconds) === c.value,
          }, c.label()))),
          h("small", { id: "turn-clock-help" }, t("start.turn_clock_help"))),
        h("div", { class: "field" },
          h("label", { for: "match" }, t("start.match")),
          h("select", {
            id: "match", name: "match", "data-key": "match", "aria-describedby": "match-help",
            onchange: (e) => { state.match = e.target.value; },
          }, MATCHES.map((m) => h("option", { value: m.value, selected: state.match === m.value }, m.label()))),
          h("small", { id: "match-help" }, t("start.match_help"))),
        h("div", { class: "field" },
          h("label", { for: "chat-mode" }, t("start.chat")),
          h("select", {
            id: "chat-mode", name: "chat-mode", "data-key": "chat-mode", "aria-describedby": "chat-mode-help",
            onchange: (e) => { state.chat = e.target.value; },
          }, CHAT_CHOICES.map((c) => h("option", { value: c.value, selected: chatChoice() === c.value }, c.label()))),
          h("small", { id: "chat-mode-help" }, t("start.chat_help"))),
        h("fieldset", {},
          h("legend", {}, t("start.public_legend")),
          h("div", { class: "choices" }, check("public", t("start.public"), t("start.public_help"))),
          h("div", { class: "field" },
            h("label", { for: "table-language" }, t("start.table_language")),
            h("select", {
              id: "table-language", name: "table-language", "data-key": "table-language",
              "aria-describedby": "table-language-help",
              onchange: (e) => { state.language = e.target.value; },
            }, LANGUAGES.map((l) => h("option", { value: l.code, lang: l.code, selected: tableLanguage() === l.code }, l.name))),
            h("small", { id: "table-language-help" }, t("start.table_language_help")))),
        h("fieldset", {},
          h("legend", {}, t("start.seats")),
          h("ul", { class: "seat-choices" }, seatRows())),
        state.error ? h("p", { class: "error", id: "form-error", role: "alert" }, state.error) : null,
        h("button", { type: "submit", class: "primary", disabled: state.busy, "data-key": "create" },
          state.busy ? t("start.starting") : t("start.create"))),
      h("p", { class: "muted you-note" }, t("start.you_note"), " ",
        h("a", { href: "/you", "data-key": "start-you" }, t("start.you_link"))),
      h("p", { class: "muted" }, h("a", { href: "/replay" }, t("start.replay_link"))))));
  }

  offLanguage = onLanguageChange(render);
  render();
}

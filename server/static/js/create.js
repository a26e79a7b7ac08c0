// The start page: choose the table (players, target, variants, computer seats) and create
// it with POST /api/rooms, then go to its share link /r/<room>, where the creator sits at
// the first seat kept for a person.
import { h, replaceKeepingFocus } from "./dom.js";
import { loadName, saveName, updateRoom } from "./storage.js";

const LAYOUTS = [
  { value: "2", label: "2 players", players: 2, partnerships: false },
  { value: "3", label: "3 players", players: 3, partnerships: false },
  { value: "4", label: "4 players", players: 4, partnerships: false },
  { value: "4p", label: "4 in partnerships", players: 4, partnerships: true },
];

const SEAT_CHOICES = [
  { value: "person", label: "A person (share the link)" },
  { value: "standard", label: "Computer — standard" },
  { value: "easy", label: "Computer — easy" },
];

const TURN_CLOCKS = [
  { value: "", label: "Off" },
  { value: "30", label: "30 seconds a move" },
  { value: "60", label: "60 seconds a move" },
  { value: "120", label: "2 minutes a move" },
];

export function startPage(root) {
  // Form state survives re-renders (changing the player count redraws the seat list).
  const state = {
    name: loadName(), layout: "2", target: "121", muggins: false, lowball: false,
    backup10: false, hints: true, turnSeconds: "", seats: { 1: "person", 2: "person", 3: "person" },
    busy: false, error: null,
  };

  const layout = () => LAYOUTS.find((l) => l.value === state.layout);

  async function submit(e) {
    e.preventDefault();
    const name = state.name.trim();
    if (!name) {
      state.error = "Type your name first — it is what the other players see.";
      render();
      root.querySelector("#your-name")?.focus();
      return;
    }
    saveName(name);
    const { players, partnerships } = layout();
    const computers = {};
    for (let s = 1; s < players; s += 1) {
      if (state.seats[s] !== "person") computers[String(s)] = state.seats[s];
    }
    const body = {
      options: {
        players, partnerships, target: Number(state.target), muggins: state.muggins,
        lowball: state.lowball, backup10: state.backup10,
      },
      // The answer window and the takeover grace are the server's defaults; the table
      // shows the effective values (room_settings).
      room: { hints: state.hints, turn_seconds: state.turnSeconds ? Number(state.turnSeconds) : null },
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
      if (!res.ok) throw new Error(data?.error?.message || `the server said ${res.status}`);
      // The creator token lets this browser later give an empty seat to a computer.
      updateRoom(data.room, {
        creatorToken: data.creator_token, autoSit: 0, room_settings: data.room_settings || null,
      });
      location.assign(`/r/${encodeURIComponent(data.room)}`);
    } catch (err) {
      state.busy = false;
      state.error = `Could not start the table: ${err.message}`;
      render();
    }
  }

  const radio = (group, value, label, help) =>
    h("label", { class: "choice" },
      h("input", {
        type: "radio", name: group, value, checked: state[group] === value, "data-key": `${group}-${value}`,
        onchange: () => { state[group] = value; render(); },
      }),
      h("span", {}, label, help ? h("small", {}, help) : null));

  const check = (key, label, help) =>
    h("label", { class: "choice" },
      h("input", {
        type: "checkbox", checked: state[key], "data-key": key, name: key,
        onchange: (e) => { state[key] = e.target.checked; render(); },
      }),
      h("span", {}, label, h("small", {}, help)));

  function seatRows() {
    const { players, partnerships } = layout();
    const rows = [h("li", {}, h("span", { class: "seat-label" }, "Seat 1"), h("span", {}, "You"))];
    for (let s = 1; s < players; s += 1) {
      const id = `seat-${s}`;
      const note = partnerships ? (s === 2 ? " (your partner)" : " (opponent)") : "";
      rows.push(h("li", {},
        h("label", { class: "seat-label", for: id }, `Seat ${s + 1}${note}`),
        h("select", {
          id, name: id, "data-key": id,
          onchange: (e) => { state.seats[s] = e.target.value; },
        }, SEAT_CHOICES.map((c) => h("option", { value: c.value, selected: state.seats[s] === c.value }, c.label)))));
    }
    return rows;
  }

  function render() {
    const lowballMuggins = state.lowball && state.muggins;
    replaceKeepingFocus(root, h("main", { class: "start" },
      h("h1", {}, "Cribbage"),
      h("p", { class: "lede" }, "Start a table, share the link, play. No sign-up."),
      h("form", { class: "panel start-form", onsubmit: submit, "aria-describedby": state.error ? "form-error" : null },
        h("div", { class: "field" },
          h("label", { for: "your-name" }, "Your name"),
          h("input", {
            id: "your-name", name: "name", "data-key": "your-name", value: state.name, maxlength: 32,
            autocomplete: "nickname", required: true,
            oninput: (e) => { state.name = e.target.value; },
          })),
        h("fieldset", {},
          h("legend", {}, "Players"),
          h("div", { class: "choices" }, LAYOUTS.map((l) => radio("layout", l.value, l.label)))),
        h("fieldset", {},
          h("legend", {}, "Game to"),
          h("div", { class: "choices" },
            radio("target", "121", "121 holes", "the full game"),
            radio("target", "61", "61 holes", "a short game"))),
        h("fieldset", {},
          h("legend", {}, "Variants"),
          h("div", { class: "choices" },
            check("muggins", "Muggins", "count your own hands; opponents may claim what you miss"),
            check("lowball", "Lowball", "the first to reach the target loses"),
            check("backup10", "Back-up 10", "a hand or crib that scores nothing moves back 10 holes"),
            check("hints", "Allow hints", "players may ask the computer for a suggestion")),
          lowballMuggins ? h("p", { class: "note" }, "With Lowball the game is played without Muggins.") : null),
        h("div", { class: "field" },
          h("label", { for: "turn-clock" }, "Turn clock"),
          h("select", {
            id: "turn-clock", name: "turn-clock", "data-key": "turn-clock",
            "aria-describedby": "turn-clock-help",
            onchange: (e) => { state.turnSeconds = e.target.value; },
          }, TURN_CLOCKS.map((c) => h("option", { value: c.value, selected: state.turnSeconds === c.value }, c.label))),
          h("small", { id: "turn-clock-help" },
            "when a player's time runs out, the computer plays that move for them")),
        h("fieldset", {},
          h("legend", {}, "Seats"),
          h("ul", { class: "seat-choices" }, seatRows())),
        state.error ? h("p", { class: "error", id: "form-error", role: "alert" }, state.error) : null,
        h("button", { type: "submit", class: "primary", disabled: state.busy, "data-key": "create" },
          state.busy ? "Starting…" : "Start the table"))));
  }

  render();
}

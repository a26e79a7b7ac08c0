// Replays: a finished game as the public saw it, in a file to keep or share, and played
// back step by step in the page.
//
// The file (JSON, "format": "cribbage-replay", "format_version": 1) holds the room's
// options, the seats' public names, and every version of the game from the server's
// public `history` (docs/protocol.md): each `{version, events}` redacted as for a
// spectator, so nobody's hidden cards are in it — only the hands shown in the show
// (`show_hand`), the starter and the cards laid in the play. `result` is the outcome.
//
// Playing back folds the events up to the chosen step (one step per version: one move)
// into what a spectator's table showed then: the scores (pegs), the dealer, the starter,
// the cards of the count, and the show.
import { board } from "./board.js";
import { cardEl, sortCards } from "./cards.js";
import { capitalize, gameOverLines, logLine, makeNames, sayShow } from "./describe.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

export const FORMAT = "cribbage-replay";
export const FORMAT_VERSION = 1;

/** Build the replay of the current game from the server's public history. */
export async function fetchReplay(client, seats, view) {
  const story = await client.historyAll({ public: true });
  return {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    room: story.room,
    game: story.game,
    saved_at: new Date().toISOString(),
    options: view.options,
    seats: seats.map((s) => ({ seat: s.seat, name: s.name, kind: s.kind, level: s.level ?? null })),
    first: story.first,
    versions: story.versions,
    result: view.result ?? null,
  };
}

/** Offer the replay as a file download. */
export function downloadReplay(data) {
  const blob = new Blob([JSON.stringify(data, null, 1)], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `cribbage-${data.room}-game-${data.game}.json`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Check a parsed replay file; throws an Error with a message key when it is not one. */
export function checkReplay(data) {
  if (!data || data.format !== FORMAT || !Array.isArray(data.versions) || !data.options) {
    throw new Error("replay.not_a_replay");
  }
  if (data.format_version !== FORMAT_VERSION) throw new Error("replay.bad_version");
  return data;
}

/** The table a spectator saw after the first `steps` versions of the replay. */
export function foldReplay(data, steps) {
  const o = data.options;
  const players = o.players || 2;
  const sides = o.partnerships ? [0, 1, 0, 1] : Array.from({ length: players }, (_, i) => i);
  const nSides = new Set(sides).size;
  const s = {
    target: o.target || 121, options: o, sides, players, game_number: data.game || 1,
    scores: Array(nSides).fill(0), previous_scores: Array(nSides).fill(0), dealer: null,
    deal_number: 0, starter: null, pile: [], count: 0, show: [], cut: null, result: null,
  };
  for (const { events } of data.versions.slice(0, steps)) {
    for (const ev of events) {
      switch (ev.type) {
        case "game_start":
          s.sides = ev.sides;
          break;
        case "cut_for_deal":
          s.cut = ev;
          s.dealer = ev.dealer;
          break;
        case "deal":
          s.deal_number = ev.deal_number;
          s.dealer = ev.dealer;
          s.starter = null;
          s.pile = [];
          s.count = 0;
          s.show = [];
          break;
        case "starter":
          s.starter = ev.card;
          break;
        case "play":
          s.pile.push({ seat: ev.seat, card: ev.card });
          s.count = ev.count;
          break;
        case "count_reset":
          s.pile = [];
          s.count = 0;
          break;
        case "peg":
        case "backup":
          s.previous_scores[ev.side] = ev.score_before;
          s.scores[ev.side] = ev.score_after;
          break;
        case "show_hand":
          s.show.push({ ...ev, pegged: ev.total });
          break;
        case "muggins_result": {
          const entry = [...s.show].reverse().find((e) => e.seat === ev.owner && e.kind === ev.kind);
          if (entry) Object.assign(entry, { announced: ev.announced, call: ev.call, correct: ev.correct });
          break;
        }
        case "game_over":
          s.result = ev;
          break;
        default:
          break;
      }
    }
  }
  return s;
}

/**
 * The replay viewer: `replay` is `{data, step}` (step 0..versions), `rerender` draws the
 * page again after a change of step. Buttons step one version (one move) back or on, to
 * the start or the end; the slider jumps.
 */
export function replayPanel(replay, rerender) {
  const { data } = replay;
  const total = data.versions.length;
  const step = Math.max(0, Math.min(total, replay.step));
  const go = (n) => { replay.step = Math.max(0, Math.min(total, n)); rerender(); };
  const table = foldReplay(data, step);
  const seats = data.seats.map((x) => ({ ...x, taken: true }));
  const names = makeNames(seats, { sides: table.sides }, null);
  const lines = [];
  data.versions.slice(0, step).forEach((v, i) => {
    for (const ev of v.events) {
      const text = logLine(ev, names);
      if (text) lines.push({ text, kind: ev.type, now: i === step - 1 });
    }
  });
  const current = lines.filter((l) => l.now);
  const button = (id, label, n, disabled) => h("button", {
    type: "button", id, "data-key": id, disabled, onclick: () => go(n),
  }, label);
  return h("section", { class: "panel replay", "aria-labelledby": "replay-h", "data-step": step, "data-steps": total },
    h("h2", { id: "replay-h" }, t("replay.title", { n: data.game || 1 })),
    h("p", { class: "muted" }, t("replay.of", { room: data.room })),
    h("div", { class: "replay-controls", role: "group", "aria-label": t("replay.controls") },
      button("replay-first", t("replay.first"), 0, step === 0),
      button("replay-prev", t("replay.prev"), step - 1, step === 0),
      button("replay-next", t("replay.next"), step + 1, step === total),
      button("replay-last", t("replay.last"), total, step === total),
      h("label", { for: "replay-step", class: "sr-only" }, t("replay.slider")),
      h("input", { type: "range", id: "replay-step", "data-key": "replay-step", "data-keep": "no", min: 0, max: total, value: step,
        oninput: (e) => go(Number(e.target.value)) }),
      h("span", { class: "replay-position", role: "status" }, t("replay.position", { n: step, total }))),
    h("div", { class: "replay-grid" },
      h("div", { class: "replay-board" }, board(table, names, { lowball: Boolean(data.options.lowball) }),
        table.result ? h("ul", { class: "board-lines" }, gameOverLines(table.result, names).map((l) => h("li", { class: "line-over" }, l))) : null),
      h("div", { class: "replay-felt felt panel" },
        h("p", { class: "status replay-now", "aria-live": "polite" }, current.length ? current.map((l) => l.text).join(" ") : t("replay.start")),
        table.deal_number ? h("p", {}, t("replay.deal", { n: table.deal_number, who: names.seat(table.dealer), form: names.form(table.dealer) })) : null,
        h("div", { class: "play-area" },
          h("figure", { class: "starter" },
            table.starter ? cardEl(table.starter, { note: t("table.starter_note") }) : h("span", { class: "card placeholder", "aria-hidden": "true" }),
            h("figcaption", {}, table.starter ? t("table.starter") : t("table.no_starter"))),
          table.pile.length ? h("div", { class: "count-box" },
            h("div", { class: "count" }, h("span", { class: "count-label" }, t("table.count")), h("strong", { class: "replay-count" }, String(table.count))),
            h("ol", { class: "pile", "aria-label": t("table.pile") }, table.pile.map((p) =>
              h("li", {}, cardEl(p.card, { small: true, note: names.seat(p.seat) }), h("span", { class: "pile-who" }, names.seat(p.seat)))))) : null),
        table.show.length ? h("ol", { class: "show-list replay-show" }, table.show.map((e) =>
          h("li", { class: "show-entry" },
            h("div", { class: "show-cards" }, sortCards(e.cards).map((c) => cardEl(c, { small: true })),
              h("span", { class: "plus", "aria-hidden": "true" }, "+"), cardEl(e.starter, { small: true, note: t("table.starter_note") })),
            h("div", { class: "show-words" },
              h("div", { class: "show-head" }, h("span", { class: "show-who" }, capitalize(names.whose(e.seat, e.kind))),
                h("span", { class: "show-total" }, String(e.total))),
              h("p", { class: "say" }, e.total ? `${capitalize(sayShow(e.items))}.` : t("say.nineteen_line")))))) : null),
      h("div", { class: "panel replay-log" },
        h("h3", { id: "replay-log-h" }, t("log.title")),
        h("div", { class: "log", role: "log", tabindex: "0", "aria-labelledby": "replay-log-h" },
          h("ol", {}, lines.slice(-60).map((l) => h("li", { class: [`log-${l.kind}`, l.now && "now"] }, l.text)))))));
}

/** The /replay page: open a replay file, then play it back. */
export function replayFilePage(root, { topBar, render: setPage }) {
  const state = { replay: null, error: null };
  const open = async (file) => {
    try {
      const data = checkReplay(JSON.parse(await file.text()));
      state.replay = { data, step: 0 };
      state.error = null;
    } catch (err) {
      // A file that is not a replay replaces the one shown: the error stands alone.
      state.replay = null;
      state.error = err.message?.startsWith("replay.") ? t(err.message) : t("replay.not_a_replay");
    }
    draw();
  };
  function draw() {
    setPage(root, h("div", {}, topBar(),
      h("main", { class: "replay-page", id: "replay" },
        h("h1", {}, t("replay.page_title")),
        h("div", { class: "field" },
          h("label", { for: "replay-file" }, t("replay.open")),
          h("input", { type: "file", id: "replay-file", accept: "application/json,.json",
            onchange: (e) => e.target.files?.[0] && open(e.target.files[0]) })),
        state.error ? h("p", { class: "error", role: "alert" }, state.error) : null,
        state.replay ? replayPanel(state.replay, draw) : h("p", { class: "muted" }, t("replay.hint")))));
  }
  return draw;
}

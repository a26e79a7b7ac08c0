// Replays: a finished game as the public saw it, in a file to keep or share, and played
// back step by step in the page.
//
// The file (JSON, "format": "cribbage-replay", "format_version": 1; docs/protocol.md
// "Replay files") holds the room's options, the seats' public names, and every version of
// the game from the server's public `history`: each `{version, events}` redacted as for a
// spectator, so nobody's hidden cards are in it — only the hands shown in the show
// (`show_hand`), the starter and the cards laid in the play. `result` is the outcome. A
// file opened on the /replay page is checked whole first (replaycheck.js) and shown only
// if it keeps every rule.
//
// Playing back folds the events up to the chosen step into what a spectator's table showed
// then: the scores (pegs), the dealer, the starter, the cards of the count, and the show.
// A step is one version (one move), except that the end of a deal is laid out as the table
// shows it: the last card of the play, then each hand and the crib, one step each, then
// the next deal.
import { board } from "./board.js";
import { cardBack, cardEl, sortCards } from "./cards.js";
import { capitalize, describeOptions, gameOverLines, logLine, makeNames, sayShow } from "./describe.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { FORMAT, FORMAT_VERSION, ReplayError, checkReplay, readReplayFile } from "./replaycheck.js";

export { FORMAT, FORMAT_VERSION, checkReplay };

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

// -------------------------------------------------------------------- steps -----------
const stepCache = new WeakMap();

/**
 * The replay's steps, `[{version, events}]`: one per version, but a version that ends a
 * deal's play is split so that its show is laid out — the play's end, each `show_hand`
 * (with its pegs), and the next `deal` are steps of their own.
 */
export function replaySteps(data) {
  if (stepCache.has(data)) return stepCache.get(data);
  const steps = [];
  for (const v of data.versions) {
    let step = { version: v.version, events: [] };
    steps.push(step);
    for (const ev of v.events) {
      const has = (type) => step.events.some((e) => e.type === type);
      const split = (ev.type === "show_hand" && (has("show_hand") || has("count_reset")))
        || (ev.type === "deal" && has("show_hand"));
      if (split) {
        step = { version: v.version, events: [] };
        steps.push(step);
      }
      step.events.push(ev);
    }
  }
  stepCache.set(data, steps);
  return steps;
}

/** The table a spectator saw after the first `n` steps of the replay (replaySteps). */
export function foldReplay(data, n) {
  const o = data.options;
  const players = o.players;
  const sides = o.partnerships ? [0, 1, 0, 1] : Array.from({ length: players }, (_, i) => i);
  const nSides = new Set(sides).size;
  const s = {
    target: o.target, options: o, sides, players, game_number: data.game,
    scores: Array(nSides).fill(0), previous_scores: Array(nSides).fill(0), dealer: null,
    deal_number: 0, starter: null, crib: 0, pile: [], count: 0, earlier: [], playOver: false,
    show: [], current: null, cut: null, result: null, now: [],
  };
  const steps = replaySteps(data).slice(0, n);
  steps.forEach((step, i) => {
    const last = i === steps.length - 1;
    if (last) s.now = step.events;
    for (const ev of step.events) {
      switch (ev.type) {
        case "cut_for_deal":
          s.dealer = ev.dealer;
          if (last) s.cut = ev;
          break;
        case "deal":
          Object.assign(s, {
            deal_number: ev.deal_number, dealer: ev.dealer, starter: null, crib: ev.crib_size, pile: [], count: 0,
            earlier: [], playOver: false, show: [], current: null,
          });
          break;
        case "discard":
          s.crib += ev.count;
          break;
        case "starter":
          s.starter = ev.card;
          break;
        case "play":
          s.pile.push({ seat: ev.seat, card: ev.card });
          s.count = ev.count;
          break;
        case "count_reset":
          if (s.pile.length) s.earlier.push({ cards: s.pile, count: s.count });
          s.pile = [];
          s.count = 0;
          s.playOver = ev.next === null;
          break;
        case "peg":
        case "backup":
          s.previous_scores[ev.side] = ev.score_before;
          s.scores[ev.side] = ev.score_after;
          break;
        case "show_hand":
          s.show.push({ ...ev, pegged: ev.total });
          if (last) s.current = s.show.length - 1;
          break;
        case "muggins_result": {
          const entry = [...s.show].reverse().find((e) => e.seat === ev.owner && e.kind === ev.kind);
          if (entry) Object.assign(entry, { announced: ev.announced, call: ev.call, correct: ev.correct, pegged: ev.owner_pegs + ev.penalty });
          break;
        }
        case "game_over":
          s.result = ev;
          break;
        default:
          break;
      }
    }
  });
  return s;
}

// --------------------------------------------------------------------- icons ----------
const SVG = "http://www.w3.org/2000/svg";
const ICONS = {
  first: ["M6 5v14", "M18 6l-8 6 8 6z"],
  prev: ["M16 6l-8 6 8 6z"],
  next: ["M8 6l8 6-8 6z"],
  last: ["M18 5v14", "M6 6l8 6-8 6z"],
};

/** A step control's picture, drawn (no font needed); the button's text says what it does. */
function icon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", "step-icon");
  for (const d of ICONS[name]) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
  }
  return svg;
}

// --------------------------------------------------------------------- felt -----------
function showEntry(e, options, names, current) {
  let muggins = null;
  if (e.announced !== undefined && e.announced !== null) {
    const called = e.call && e.call !== "accept" && e.call !== "timeout";
    muggins = h("p", { class: "muted show-muggins" }, called
      ? t(e.correct ? "show.announced_called_right" : "show.announced_called_wrong", { n: e.announced, call: t(`call.${e.call}`), pegged: e.pegged })
      : t("show.announced", { n: e.announced, pegged: e.pegged }));
  }
  const backup = options.backup10 && e.total === 0 ? h("p", { class: "backup-note" }, t("show.backup_note")) : null;
  return h("li", {
    class: ["show-entry", e.total === 0 && "zero", current && "current"], "data-seat": e.seat, "data-kind": e.kind,
    "aria-current": current ? "step" : null,
  },
  h("div", { class: "show-cards" }, sortCards(e.cards).map((c) => cardEl(c, { small: true })),
    h("span", { class: "plus", "aria-hidden": "true" }, "+"), cardEl(e.starter, { small: true, note: t("table.starter_note") })),
  h("div", { class: "show-words" },
    h("div", { class: "show-head" },
      h("span", { class: "show-who" }, capitalize(names.whose(e.seat, e.kind))),
      h("span", { class: "show-total" }, h("span", { class: "sr-only" }, t("show.total_sr")), String(e.total))),
    h("p", { class: "say" }, e.total ? `${capitalize(sayShow(e.items))}.` : t("say.nineteen_line")),
    muggins, backup));
}

function cutFigure(cut, names) {
  if (cut.reason !== "cut") return null;
  return h("figure", { class: "cut-for-deal", "aria-labelledby": "replay-cut-h" },
    h("figcaption", { id: "replay-cut-h" }, t("cut.title")),
    h("ol", { class: "cut-rounds" }, cut.cuts.map((round) => h("li", {},
      round.map((c) => h("span", { class: "cut-card" },
        cardEl(c.card, { small: true, note: names.seat(c.seat) }), h("span", { class: "cut-who" }, names.seat(c.seat))))))),
    h("p", { class: "cut-result" }, t("cut.deals", { who: names.seat(cut.dealer), form: names.form(cut.dealer) })));
}

/** The line of a step that heads the felt: the game's end, the show's count of a hand or
 * the crib, else the step's first line that is not about a seat being taken. */
function headline(table, lines, names) {
  const over = lines.find((l) => l.kind === "game_over");
  if (over) return over;
  if (table.current !== null) {
    const e = table.show[table.current];
    const whose = capitalize(names.whose(e.seat, e.kind));
    return { text: e.total ? t("replay.show_now", { whose, n: e.total }) : t("replay.show_nineteen", { whose }), kind: "show_hand" };
  }
  return lines.find((l) => l.kind !== "seat_taken") || lines[0] || { text: t("replay.step_quiet"), kind: null };
}

function felt(table, lines, names) {
  const showing = table.current !== null || (table.show.length && table.playOver);
  const head = lines.length || table.deal_number ? headline(table, lines, names) : { text: t("replay.start") };
  // What else happened in this step, in a box under the cards: not the headline, nor what
  // the felt shows anyway (the deal's line, the cut, the counted hand).
  const shown = new Set(["deal", "show_hand", table.cut ? "cut_for_deal" : null]);
  const rest = lines.filter((l) => l !== head && !shown.has(l.kind));
  return h("section", { class: "panel felt replay-felt", "aria-labelledby": "replay-now" },
    h("p", { class: "status replay-now", id: "replay-now", "aria-live": "polite" }, head.text),
    table.deal_number ? h("p", { class: "replay-deal" }, t("replay.deal", { n: table.deal_number, who: names.seat(table.dealer), form: names.form(table.dealer) })) : null,
    table.cut ? cutFigure(table.cut, names) : null,
    table.deal_number ? h("div", { class: "play-area" },
      h("div", { class: "starter-crib" },
        h("figure", { class: "starter" },
          table.starter ? cardEl(table.starter, { note: t("table.starter_note") }) : h("span", { class: "card placeholder", "aria-hidden": "true" }),
          h("figcaption", {}, table.starter ? t("table.starter") : t("table.no_starter"))),
        h("figure", { class: "crib" },
          h("span", { class: "crib-cards" }, Array.from({ length: Math.max(table.crib, 1) }, (_, i) =>
            i < table.crib ? cardBack() : h("span", { class: "card small placeholder", "aria-hidden": "true" }))),
          h("figcaption", {}, t("table.crib_of", { whose: capitalize(names.whose(table.dealer, "crib")), n: table.crib })))),
      table.pile.length || (table.starter && !showing && !table.playOver) ? h("div", { class: "count-box" },
        h("div", { class: "count" }, h("span", { class: "count-label", id: "replay-count-label" }, t("table.count")),
          h("strong", { class: "replay-count", "aria-labelledby": "replay-count-label" }, String(table.count))),
        h("ol", { class: "pile", "aria-label": t("table.pile") }, table.pile.map((p) =>
          h("li", {}, cardEl(p.card, { small: true, note: names.seat(p.seat) }), h("span", { class: "pile-who" }, names.seat(p.seat)))))) : null,
      table.earlier.length && !showing ? h("div", { class: "earlier" },
        h("span", { class: "earlier-label" }, t("table.earlier")),
        h("ol", { class: "earlier-counts" }, table.earlier.map((c) => h("li", {},
          c.cards.map((p) => cardEl(p.card, { small: true, note: names.seat(p.seat) })),
          h("span", { class: "earlier-count" }, t("table.count_reached", { n: c.count })))))) : null) : null,
    showing ? h("section", { class: "show-review replay-show", "aria-labelledby": "replay-show-h" },
      h("h2", { id: "replay-show-h" }, t("show.title_deal", { n: table.deal_number })),
      h("ol", { class: "show-list" }, table.show.map((e, i) => showEntry(e, table.options, names, i === table.current)))) : null,
    rest.length ? h("ul", { class: "recent replay-recent" }, rest.map((l) => h("li", { class: `log-${l.kind}` }, l.text))) : null);
}

// ---------------------------------------------------------------------- log -----------
/** Scroll the play-by-play so that the current step's lines are in view. */
function followStep(box) {
  if (!box.isConnected) return;
  const now = box.querySelectorAll("li.now");
  box.scrollTop = box.scrollHeight;
  const first = now[0];
  if (first && first.offsetTop < box.scrollTop) box.scrollTop = first.offsetTop;
}

function logPanel(data, step, table, names) {
  const lines = [];
  replaySteps(data).slice(0, step).forEach((st, i) => {
    for (const ev of st.events) {
      const text = logLine(ev, names);
      if (text) lines.push({ text, kind: ev.type, step: i + 1 });
    }
  });
  const box = h("div", { class: "log replay-lines", role: "log", tabindex: "0", "aria-labelledby": "replay-log-h", "data-key": "replay-log" },
    h("ol", {}, lines.map((l) => h("li", {
      class: [`log-${l.kind}`, l.step === step && "now"], "data-step": l.step, "aria-current": l.step === step ? "step" : null,
    }, l.text))));
  requestAnimationFrame(() => followStep(box));
  return h("section", { class: "panel replay-log", "aria-labelledby": "replay-log-h" },
    h("h2", { id: "replay-log-h", "data-deal": table.deal_number },
      table.deal_number ? t("replay.log_deal", { n: table.deal_number }) : t("log.title")),
    box);
}

// -------------------------------------------------------------------- panel -----------
const KEYS = { ArrowLeft: -1, ArrowRight: 1 };

/**
 * The arrow keys, Home and End step the replay with no control focused too: on a page just
 * opened, or after a click on the felt (the focus is then on the body or the page's root).
 * `current()` gives the page's replay (`{data, step}`, or null while there is none); a key
 * moves its `step` and calls `draw`.
 */
export function keysAnywhere(root, current, draw) {
  document.addEventListener("keydown", (e) => {
    const replay = current();
    if (!replay?.data || (e.target !== document.body && e.target !== root)) return;
    const total = replaySteps(replay.data).length;
    const to = keyStep(e, replay.step, total);
    if (to === null) return;
    e.preventDefault();
    replay.step = Math.max(0, Math.min(total, to));
    draw();
  });
}

/** The step a key moves the replay to (the arrow keys step, Home and End jump), or null
 * for any other key, a key with a modifier, or a key meant for the slider or the log. */
function keyStep(e, step, total) {
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return null;
  if (e.target?.type === "range" || e.target?.closest?.(".replay-lines")) return null;
  if (e.key in KEYS) return step + KEYS[e.key];
  if (e.key === "Home") return 0;
  if (e.key === "End") return total;
  return null;
}

/**
 * The replay viewer: `replay` is `{data, step}` (step 0..steps), `rerender` draws the page
 * again after a change of step. Buttons step back or on, to the start or the end; the
 * slider jumps; the arrow keys step and Home and End jump (anywhere in the viewer but the
 * slider and the play-by-play, which have keys of their own).
 */
export function replayPanel(replay, rerender) {
  const { data } = replay;
  const total = replaySteps(data).length;
  const step = Math.max(0, Math.min(total, replay.step));
  const go = (n) => {
    const next = Math.max(0, Math.min(total, n));
    if (next === replay.step) return;
    replay.step = next;
    rerender();
  };
  const table = foldReplay(data, step);
  const seats = data.seats.map((x) => ({ ...x, taken: true }));
  const names = makeNames(seats, { sides: table.sides }, null);
  const lines = table.now.map((ev) => ({ text: logLine(ev, names), kind: ev.type })).filter((l) => l.text);
  const button = (id, name, label, n, disabled) => h("button", {
    type: "button", id, "data-key": id, class: "step-button", disabled, onclick: () => go(n),
  }, icon(name), h("span", {}, label));
  const onkeydown = (e) => {
    const to = keyStep(e, step, total);
    if (to === null) return;
    e.preventDefault();
    go(to);
  };
  return h("section", {
    class: "panel replay", "aria-labelledby": "replay-h", "data-step": step, "data-steps": total,
    "data-version": step ? replaySteps(data)[step - 1].version : "", onkeydown,
  },
  h("div", { class: "replay-head" },
    h("h2", { id: "replay-h" }, t("replay.title", { n: data.game })),
    h("p", { class: "muted replay-of" }, t("replay.of", { room: data.room }), " ", describeOptions(data.options))),
  h("div", { class: "replay-controls", role: "group", "aria-label": t("replay.controls"), "data-focus-region": "replay-controls" },
    h("div", { class: "step-buttons" },
      button("replay-first", "first", t("replay.first"), 0, step === 0),
      button("replay-prev", "prev", t("replay.prev"), step - 1, step === 0),
      button("replay-next", "next", t("replay.next"), step + 1, step === total),
      button("replay-last", "last", t("replay.last"), total, step === total)),
    h("div", { class: "step-slider" },
      h("label", { for: "replay-step", class: "sr-only" }, t("replay.slider")),
      h("input", { type: "range", id: "replay-step", "data-key": "replay-step", "data-keep": "no", min: 0, max: total, value: step,
        "aria-valuetext": t("replay.position", { n: step, total }),
        oninput: (e) => go(Number(e.target.value)) }),
      h("span", { class: "replay-position" }, t("replay.position", { n: step, total })))),
  h("p", { class: "muted replay-keys" }, t("replay.keys")),
  h("div", { class: "replay-grid" },
    felt(table, lines, names),
    h("section", { class: "panel replay-board", "aria-labelledby": "replay-board-h" },
      h("h2", { id: "replay-board-h" }, t("board.title")),
      board(table, names, { lowball: Boolean(data.options.lowball) }),
      table.result ? h("ul", { class: "board-lines" }, gameOverLines(table.result, names).map((l) => h("li", { class: "line-over" }, l))) : null),
    logPanel(data, step, table, names)));
}

// --------------------------------------------------------------------- page -----------
/** The /replay page: open a replay file, check it whole, then play it back. */
export function replayFilePage(root, { topBar, render: setPage }) {
  const state = { replay: null, error: null, file: "" };
  const open = async (file) => {
    try {
      const data = await readReplayFile(file);
      state.replay = { data, step: 0 };
      state.error = null;
      // The file input cannot keep the file across drawings: say which one is shown.
      state.file = [...String(file.name)].slice(0, 80).join("");
      draw();
      root.querySelector("#replay-next")?.focus();
      return;
    } catch (err) {
      // A file that is refused replaces the one shown: the error stands alone.
      state.replay = null;
      state.error = err instanceof ReplayError ? err : new ReplayError("not_a_replay");
    }
    draw();
  };
  keysAnywhere(root, () => state.replay, draw);
  const errorText = (err) => h("div", { class: "error replay-error", role: "alert" },
    h("p", {}, t(`replay.${err.code}`)),
    err.where ? h("p", { class: "replay-where" }, t("replay.where", { where: err.where })) : null);
  function draw() {
    setPage(root, h("div", {}, topBar(),
      h("main", { class: "replay-page", id: "replay" },
        h("h1", {}, t("replay.page_title")),
        h("div", { class: "field" },
          h("label", { for: "replay-file" }, t("replay.open")),
          h("input", { type: "file", id: "replay-file", accept: "application/json,.json",
            onchange: (e) => e.target.files?.[0] && open(e.target.files[0]) })),
        state.replay && state.file ? h("p", { class: "muted replay-file-name" }, t("replay.showing", { file: state.file })) : null,
        state.error ? errorText(state.error) : null,
        state.replay ? replayPanel(state.replay, draw) : h("p", { class: "muted" }, t("replay.hint")))));
  }
  return draw;
}

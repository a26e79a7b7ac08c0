// The cribbage board, drawn in SVG: one lane of holes per player or side, in streets of
// 30 holes (blocks of five) that run up and back — four streets to 121, two to 61 — with
// two start holes per lane, the game hole at the end, and the skunk line(s) where a street
// ends (docs/rules.md §4.4: to 121 after hole 90, double skunk after 60; to 61 after 30).
// Each side has its colour and two pegs: the front peg in the hole of its score and the
// back peg where it stood before its last move (view.previous_scores) — behind the front
// peg always: after a move back (Back-up 10) it stands in the hole just behind the front
// peg, or in the second start hole. When a score moves the front peg steps along hole by
// hole (unless the reader prefers reduced motion).
//
// On a phone (the page 600 px wide or less) the streets are cut into rows of 20 holes, so
// the holes and pegs are drawn half as large again and stay readable at 390 px; the scores
// are written beside the board in both layouts.
import { h } from "./dom.js";
import { t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const PER_STREET = 30;
const PER_ROW_COMPACT = 20;
/** The width at and under which the board is drawn in rows of 20 holes. */
export const COMPACT_QUERY = "(max-width: 600px)";
const PITCH = 10; // between holes of a block
const BLOCK_GAP = 5; // extra space between blocks of five
const LEFT = 30; // room for the start holes and the game hole
const RIGHT = 14;
const LANE = 10;
const STREET_PAD = 6;
const STREET_GAP = 12;
const TOP = 14;
const STEP_MS = 45;

/** Where the skunk lines sit: [hole after which the line is drawn, kind]. */
export function skunkLines(target) {
  return target === 121 ? [[90, "skunk"], [60, "double"]] : [[30, "skunk"]];
}

function geometry(target, lanes, per = PER_STREET) {
  const streets = (target - 1) / per;
  const streetH = lanes * LANE + 2 * STREET_PAD;
  const width = LEFT + per * PITCH + (per / 5 - 1) * BLOCK_GAP + RIGHT;
  const height = TOP + streets * streetH + (streets - 1) * STREET_GAP + 10;
  const streetTop = (k) => TOP + k * (streetH + STREET_GAP);
  const laneY = (k, lane) => streetTop(k) + STREET_PAD + lane * LANE + LANE / 2;
  const columnX = (i) => LEFT + i * PITCH + Math.floor(i / 5) * BLOCK_GAP + PITCH / 2;
  /** The centre of hole `n` (1..target-1) of a lane; 0 and target are the start and game holes. */
  const hole = (n, lane) => {
    if (n <= 0) return { x: 8, y: laneY(0, lane) };
    if (n >= target) return { x: 14, y: streetTop(streets - 1) + streetH / 2 };
    const k = Math.floor((n - 1) / per);
    const i = (n - 1) % per;
    return { x: columnX(k % 2 === 0 ? i : per - 1 - i), y: laneY(k, lane) };
  };
  const backStart = (lane) => ({ x: 18, y: laneY(0, lane) });
  return { per, streets, streetH, width, height, streetTop, laneY, columnX, hole, backStart };
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children) if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return node;
}

// Where each side's front peg is drawn now (it may still be stepping toward its score).
const shown = new Map();
let stepper = null;

function reducedMotion() {
  return window.matchMedia?.("(prefers-reduced-motion: reduce)").matches;
}

function boardKey(view) {
  return `${view.game_number}/${view.target}/${view.sides.join("")}`;
}

function compact() {
  return Boolean(window.matchMedia?.(COMPACT_QUERY).matches);
}

/**
 * Where the back peg stands (a hole number, 0 for the start), or null when it is not
 * drawn apart from the front peg: `score` the front peg's hole, `back` the score before
 * the side's last move. Behind the front peg always — after a move back (Back-up 10: 4 → 0,
 * 35 → 25) the back peg stands just behind the front one.
 */
export function backPegHole(score, back) {
  if (back === score) return score === 0 ? 0 : null;
  if (back < score) return Math.max(0, back);
  return Math.max(0, score - 1);
}

/**
 * The board for `view` (scores, previous_scores, target, sides, dealer). `names` gives the
 * sides' names (describe.makeNames). Returns a <figure> holding the SVG and, for every
 * reader, the scores as text.
 */
export function board(view, names, { lowball = false } = {}) {
  const target = view.target;
  const sides = [...new Set(view.sides)].sort((a, b) => a - b);
  const small = compact();
  const g = geometry(target, sides.length, small ? PER_ROW_COMPACT : PER_STREET);
  const key = boardKey(view);
  const r = small ? { hole: 2.7, start: 2.5, peg: 4.4, back: 3.7, game: 4.6 }
    : { hole: 2, start: 1.9, peg: 3.6, back: 3, game: 4.2 };
  const svg = el("svg", {
    viewBox: `0 0 ${g.width} ${g.height}`, class: ["board-svg", small && "compact"].filter(Boolean).join(" "),
    id: "board-svg", role: "img", "aria-labelledby": "board-caption", "data-target": target,
    "data-per-row": g.per, focusable: "false",
  });
  svg.appendChild(el("rect", { x: 1, y: 1, width: g.width - 2, height: g.height - 2, rx: 12, class: "board-wood" }));
  // Streets: a groove of holes per lane, blocks of five; the street's last hole numbered.
  for (let k = 0; k < g.streets; k += 1) {
    svg.appendChild(el("rect", {
      x: LEFT - 4, y: g.streetTop(k), width: g.width - LEFT - RIGHT + 8, height: g.streetH, rx: 5, class: "street",
    }));
    const last = (k + 1) * g.per;
    const end = g.hole(last, 0);
    svg.appendChild(el("text", { x: end.x, y: g.streetTop(k) - 2.5, class: "street-label", "text-anchor": "middle" }, String(last)));
  }
  sides.forEach((side, lane) => {
    const group = el("g", { class: `lane side-${side}`, "data-side": side });
    for (let n = 1; n < target; n += 1) {
      const p = g.hole(n, lane);
      group.appendChild(el("circle", { cx: p.x, cy: p.y, r: r.hole, class: "hole", "data-hole": n }));
    }
    const s0 = g.hole(0, lane);
    const s1 = g.backStart(lane);
    group.appendChild(el("circle", { cx: s0.x, cy: s0.y, r: r.start, class: "hole start", "data-hole": 0 }));
    group.appendChild(el("circle", { cx: s1.x, cy: s1.y, r: r.start, class: "hole start" }));
    svg.appendChild(group);
  });
  const gameHole = g.hole(target, 0);
  svg.appendChild(el("circle", { cx: gameHole.x, cy: gameHole.y, r: r.game, class: "game-hole", "data-hole": target }));
  svg.appendChild(el("text", { x: gameHole.x, y: gameHole.y + 11, class: "street-label", "text-anchor": "middle" }, String(target)));
  // Skunk lines: across the street where hole N ends it, between N and N+1.
  if (!lowball) {
    for (const [after, kind] of skunkLines(target)) {
      const a = g.hole(after, 0);
      const b = g.hole(after + 1, 0);
      const k = Math.floor((after - 1) / g.per);
      const x = after % g.per === 0 ? (k % 2 === 0 ? a.x + PITCH * 0.75 : a.x - PITCH * 0.75) : (a.x + b.x) / 2;
      svg.appendChild(el("line", {
        x1: x, x2: x, y1: g.streetTop(k) + 1, y2: g.streetTop(k) + g.streetH - 1,
        class: ["skunk-line", kind].join(" "), "data-after": after, "data-kind": kind,
      }));
      // At a row's end the label is anchored inward, so it stays on the board.
      const anchor = x > g.width - 40 ? "end" : x < LEFT + 20 ? "start" : "middle";
      svg.appendChild(el("text", {
        x, y: g.streetTop(k) + g.streetH + 8, class: "skunk-label", "text-anchor": anchor,
      }, t(kind === "double" ? "board.double_skunk_short" : "board.skunk_short")));
    }
  }
  // Pegs: back first, so the front peg sits on top when they share a hole.
  const animate = [];
  sides.forEach((side, lane) => {
    const score = view.scores[side];
    const back = view.previous_scores?.[side] ?? score;
    const was = shown.get(`${key}/${side}`);
    let from = was === undefined ? score : was;
    if (reducedMotion()) from = score;
    const backHole = backPegHole(score, back);
    if (backHole !== null) {
      const backPos = backHole <= 0 ? g.backStart(lane) : g.hole(backHole, lane);
      svg.appendChild(el("circle", {
        cx: backPos.x, cy: backPos.y, r: r.back, class: `peg back side-${side}`, "data-side": side, "data-hole": backHole,
        "data-peg": `back-${side}`,
      }));
    }
    const at = g.hole(from, lane);
    svg.appendChild(el("circle", {
      cx: at.x, cy: at.y, r: r.peg, class: `peg front side-${side}`, "data-side": side, "data-hole": score,
      "data-peg": `front-${side}`,
    }));
    shown.set(`${key}/${side}`, from);
    if (from !== score) animate.push({ side, lane, to: score });
  });
  if (animate.length) stepPegs(key, g, animate);

  const lines = sides.map((side) => t("board.side_score", { who: names.side(side), n: view.scores[side], target }));
  const caption = h("figcaption", { id: "board-caption", class: "sr-only" },
    t(lowball ? "board.caption_lowball" : "board.caption", { n: target }), " ", lines.join("; "));
  return h("figure", { class: "board" }, svg, caption, legend(view, names, sides));
}

/** Move front pegs one hole at a time toward their scores, on whatever board is drawn. */
function stepPegs(key, g, moves) {
  clearInterval(stepper);
  stepper = setInterval(() => {
    let moving = false;
    for (const m of moves) {
      const id = `${key}/${m.side}`;
      const at = shown.get(id);
      if (at === m.to) continue;
      const next = at + Math.sign(m.to - at);
      shown.set(id, next);
      moving = moving || next !== m.to;
      const peg = document.querySelector(`#board-svg [data-peg="front-${m.side}"]`);
      if (peg) {
        const p = g.hole(next, m.lane);
        peg.setAttribute("cx", p.x);
        peg.setAttribute("cy", p.y);
      }
    }
    if (!moving) {
      clearInterval(stepper);
      stepper = null;
    }
  }, STEP_MS);
}

/** The scores as text beside the board: colour, name, score, and who has the crib. */
function legend(view, names, sides) {
  return h("ul", { class: "board-legend" }, sides.map((side) => {
    const members = names.sideSeats(side);
    const dealing = members.includes(view.dealer);
    return h("li", { class: `side-${side}`, "data-side": side },
      h("span", { class: "swatch", "aria-hidden": "true" }),
      h("span", { class: "legend-name" }, names.side(side)),
      dealing ? h("span", { class: "chip dealer" }, t("chip.crib")) : null,
      h("span", { class: "legend-score", "data-score": view.scores[side] },
        h("strong", {}, String(view.scores[side])), h("span", { class: "muted" }, ` / ${view.target}`)));
  }));
}

// The score board: one track per player or side, from 0 to the target, with the front peg
// (the score) and the back peg (the score before the last peg or back-up), tick marks every
// 5 holes, and the skunk line. Plain elements and CSS; every number is also in the text.
import { h } from "./dom.js";

/** Where the skunk line sits: a loser at or below it is skunked (docs/rules.md §4.4). */
function skunkLine(target) {
  return target === 121 ? 90 : 30;
}

export function board(view, names, { lowball = false } = {}) {
  const target = view.target;
  const sides = [...new Set(view.sides)];
  const pct = (n) => `${Math.max(0, Math.min(100, (n / target) * 100))}%`;
  const rows = sides.map((side) => {
    const score = view.scores[side];
    const back = view.previous_scores?.[side] ?? score;
    const members = names.sideSeats(side);
    const dealing = members.includes(view.dealer);
    const label = names.side(side);
    return h("li", { class: ["track-row", `side-${side}`], "data-side": side },
      h("div", { class: "track-label" },
        h("span", { class: "track-name" }, label),
        dealing ? h("span", { class: "chip dealer", title: "dealer" }, "crib") : null,
        h("span", { class: "track-score", "data-score": score },
          h("strong", {}, String(score)), h("span", { class: "sr-only" }, ` of ${target}`))),
      h("div", {
        class: "track", role: "meter", style: `--ticks:${target / 5}`, "aria-label": `${label}: ${score} of ${target} holes`,
        "aria-valuemin": 0, "aria-valuemax": target, "aria-valuenow": score,
      },
      h("span", { class: "track-fill", style: `width:${pct(score)}` }),
      !lowball ? h("span", { class: "skunk-line", style: `left:${pct(skunkLine(target))}`, title: "skunk line" }) : null,
      back !== score ? h("span", { class: "peg back-peg", style: `left:${pct(back)}`, title: `back peg ${back}` }) : null,
      h("span", { class: "peg front-peg", style: `left:${pct(score)}`, title: `front peg ${score}` })));
  });
  return h("ol", { class: "tracks", "aria-label": `Scores, game to ${target}${lowball ? " (Lowball: reaching it loses)" : ""}` }, rows);
}

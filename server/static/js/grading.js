// What a player learns after the game (issue 22 point 4; docs/protocol.md "Grading"):
// the archived game's grading (GET /api/games/{id}, `grading`) as a panel of the replay
// page — each seat's accuracy and the choices that cost points — and the profile's average
// accuracy. Everything is text (dom.js text nodes), never markup.
import { h } from "./dom.js";
import { cardsShort, sortCards } from "./cards.js";
import { formatNumber, t } from "./i18n.js";

const num = (n, digits) => (n === null || n === undefined ? "—" : formatNumber(n, digits));

/** One costly move as a sentence: "Deal 3: Anna laid 5♥ 5♦ away to the crib; better 9♣ K♦:
 * cost 2.3 points." (near the end also "That lowered the chance to win by 4.1 percentage points.").
 * `name(seat)` names a seat; `human(seat)`: whether a person held it (the
 * computer's moves for a person's seat are marked so). */
export function moveLine(move, name, human = () => true) {
  const params = {
    // both in the order a hand is shown (the log keeps the order the cards were sent)
    deal: move.deal, who: name(move.seat), chosen: cardsShort(sortCards(move.chosen)),
    // a cost under 0.1 keeps two decimals (never "0.0 points")
    best: cardsShort(sortCards(move.best)), cost: formatNumber(move.cost, move.cost < 0.1 ? 2 : 1),
  };
  let text = t(move.kind === "discard" ? "grading.move_discard" : "grading.move_play", params);
  // Near the end the cost is a chance to win given up (in points at that score): say it.
  if (typeof move.win_cost === "number" && move.win_cost > 0) {
    const win = 100 * move.win_cost;
    text = `${text} ${t("grading.win_cost", { win: formatNumber(win, win < 10 ? 1 : 0) })}`;
  }
  return move.by === "computer" && human(move.seat) ? `${text} ${t("grading.by_computer")}` : text;
}

/**
 * The grading panel of an archived game: `grading` is the body's `grading` (or null: not
 * graded yet), `name(seat)` names a seat, `human(seat)` tells a person's seat.
 */
export function gradingPanel(grading, name, human = () => true) {
  const head = h("h2", { id: "grading-h" }, t("grading.title"));
  if (!grading) {
    return h("section", { class: "panel grading", id: "grading", "aria-labelledby": "grading-h", "data-state": "pending" },
      head, h("p", { class: "muted" }, t("grading.unavailable")));
  }
  if (grading.error) {
    return h("section", { class: "panel grading", id: "grading", "aria-labelledby": "grading-h", "data-state": "error" },
      head, h("p", { class: "muted" }, t("grading.error")));
  }
  const costly = grading.moves.filter((m) => m.cost > 0);
  return h("section", { class: "panel grading", id: "grading", "aria-labelledby": "grading-h", "data-state": "graded" },
    head,
    // The chance to win is weighed only where the expert plays for it (two players, not
    // Lowball): its moves near the end carry `win_cost`.
    h("p", { class: "muted grading-note" }, t("grading.note", { level: t(`level.${grading.grader}`) }),
      grading.moves.some((m) => typeof m.win_cost === "number") ? [" ", t("grading.note_end")] : null),
    h("div", { class: "table-scroll" }, h("table", { class: "stats-table", id: "grading-seats" },
      h("caption", { class: "sr-only" }, t("grading.title")),
      h("thead", {}, h("tr", {}, ["player", "accuracy", "decisions", "exact", "cost"].map((c) =>
        h("th", { scope: "col" }, t(`grading.col_${c}`))))),
      h("tbody", {}, grading.seats.map((s) => h("tr", { "data-seat": s.seat, "data-accuracy": s.accuracy ?? "" },
        h("th", { scope: "row" }, name(s.seat)),
        h("td", { class: "grading-accuracy" }, num(s.accuracy, 1)),
        h("td", {}, num(s.decisions)),
        h("td", {}, num(s.exact)),
        h("td", {}, num(s.cost_per_decision, 2))))))),
    h("h3", { id: "grading-moves-h" }, t("grading.costly_title")),
    costly.length
      ? h("ol", { class: "grading-moves", id: "grading-moves", "aria-labelledby": "grading-moves-h" },
        costly.map((m) => h("li", { "data-seat": m.seat, "data-kind": m.kind, "data-cost": m.cost }, moveLine(m, name, human))))
      : h("p", { class: "muted", id: "grading-moves" }, t("grading.none_costly")));
}

/** The profile's accuracy rows (`[label, value, key]`, for its pair tables), from the
 * profile's `accuracy` (or null). */
export function accuracyRows(accuracy) {
  if (!accuracy) return [];
  return [
    [t("profile.accuracy"), num(accuracy.average, 1), "accuracy"],
    [t("profile.accuracy_games"), num(accuracy.games), "accuracy_games"],
    [t("profile.accuracy_cost"), num(accuracy.cost_per_decision, 2), "accuracy_cost"],
  ];
}

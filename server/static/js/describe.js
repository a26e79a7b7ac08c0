// Words for what happens at the table: peg reasons, the show's breakdown said the way
// players say it ("fifteen two, fifteen four, a pair is six"), and the lines under the
// board (Back-up 10, game over). Pure functions of engine data (docs/rules.md "Events").
import { cardShort, cardsShort } from "./cards.js";

const WORDS = [
  "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
  "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
  "nineteen", "twenty", "twenty-one", "twenty-two", "twenty-three", "twenty-four",
  "twenty-five", "twenty-six", "twenty-seven", "twenty-eight", "twenty-nine", "thirty",
  "thirty-one",
];
export const numberWord = (n) => WORDS[n] ?? String(n);
export const plural = (n, one, many = one + "s") => `${n} ${n === 1 ? one : many}`;

/** Verb agreement with a display name: "You win", "Anna & Carl win", "Anna wins". */
const verb = (name, singular, pluralForm) =>
  name === "You" || name.includes(" & ") ? pluralForm : singular;

const PAIR_NAMES = { 2: "a pair", 6: "pair royal", 12: "double pair royal" };

/** Show items in the order players count them: fifteens, pairs, runs, flush, nobs. */
const SHOW_ORDER = ["fifteen", "pair", "run", "flush", "nobs"];

/**
 * The show's count as said aloud, with a running total:
 * "fifteen two, fifteen four, a pair is six, a run of three is nine, and nobs is ten".
 * `items` are the engine's breakdown items; an empty list is "nineteen" (no score).
 */
export function sayShow(items) {
  const sorted = [...items].sort((a, b) => SHOW_ORDER.indexOf(a.kind) - SHOW_ORDER.indexOf(b.kind));
  if (!sorted.length) return "nineteen (nothing)";
  let total = 0;
  const seen = {};
  const parts = sorted.map((item) => {
    total += item.points;
    const again = (seen[item.kind] = (seen[item.kind] || 0) + 1) > 1;
    const t = numberWord(total);
    switch (item.kind) {
      case "fifteen":
        return `fifteen ${t}`;
      case "pair": {
        const name = PAIR_NAMES[item.points] || "pairs";
        return `${again && item.points === 2 ? "another pair" : name} is ${t}`;
      }
      case "run":
        return `${again ? "another run" : "a run"} of ${numberWord(item.cards.length)} is ${t}`;
      case "flush":
        return `a ${numberWord(item.points)}-card flush is ${t}`;
      case "nobs":
        return `and one for his nobs is ${t}`;
      default:
        return `${item.kind} is ${t}`;
    }
  });
  return parts.join(", ");
}

/** Why a peg in the play scored: "fifteen for 2", "a pair for 2", "run of 4 for 4". */
export function pegReason(peg) {
  const items = peg.items || [];
  switch (peg.source) {
    case "his_heels":
      return "his heels (a jack turned up)";
    case "go":
      return "the go";
    case "last_card":
      return "last card";
    case "hand":
      return items.some((i) => i.kind === "announced") ? "announced hand" : "the hand";
    case "crib":
      return items.some((i) => i.kind === "announced") ? "announced crib" : "the crib";
    case "muggins":
      return "muggins (a count left unclaimed)";
    case "penalty":
      return "a wrong call by an opponent";
    default:
      break;
  }
  if (!items.length) return peg.source;
  return items.map((i) => {
    switch (i.kind) {
      case "fifteen": return "fifteen";
      case "thirty_one": return "thirty-one";
      case "pair": return PAIR_NAMES[i.points] || "pairs";
      case "run": return `a run of ${i.points}`;
      default: return i.kind.replace(/_/g, " ");
    }
  }).join(" and ");
}

/**
 * Names for seats and sides, from the room's seats and the view.
 * `names.seat(s)` -> "Anna" / "You", `names.side(side)` -> "Anna" or "Anna & Carl".
 */
export function makeNames(seats, view, mySeat) {
  // Several computers at one table would all be "Computer (standard)": call them by seat.
  const computers = (seats || []).filter((x) => x?.kind === "computer").length;
  const seatName = (s) => {
    if (s === null || s === undefined) return "nobody";
    if (s === mySeat) return "You";
    if (computers > 1 && seats?.[s]?.kind === "computer") return `Computer ${s + 1}`;
    return seats?.[s]?.name || `Seat ${s + 1}`;
  };
  const sides = view?.sides || (seats || []).map((_, i) => i);
  const sideSeats = (side) => sides.map((sd, i) => (sd === side ? i : -1)).filter((i) => i >= 0);
  const sideName = (side) => {
    const members = sideSeats(side);
    if (members.length <= 1) return seatName(members[0] ?? side);
    return members.map(seatName).join(" & ");
  };
  return { seat: seatName, side: sideName, sideSeats, possessive: (s) => (s === mySeat ? "Your" : `${seatName(s)}'s`), me: mySeat };
}

/** "back 10 holes" or, when the score could not move that far, the real number. */
export function backupLine(ev, names) {
  const whose = `${names.possessive(ev.seat)} ${ev.kind === "crib" ? "crib" : "hand"} scored nothing`;
  const sideSeats = names.sideSeats(ev.side);
  const who = sideSeats.length > 1 ? `${names.side(ev.side)} go back` : "back";
  if (ev.holes === 10) return `${whose}: ${who} 10 holes (${ev.score_before} → ${ev.score_after})`;
  if (ev.holes === 0) return `${whose}: ${who} 0 holes — already at 0`;
  return `${whose}: ${who} only ${plural(ev.holes, "hole")} (${ev.score_before} → ${ev.score_after}; nobody goes below 0)`;
}

/** Lines for the end of a game: the winner (or a draw), a Lowball loss, skunks. */
export function gameOverLines(result, names) {
  const lines = [];
  const scores = result.scores || [];
  const scoreText = scores.join("–");
  if (result.lowball) {
    const loser = names.side(result.reached_by);
    lines.push(`Lowball: ${loser} reached the target first and ${verb(loser, "loses", "lose")}.`);
  }
  if (result.draw) {
    lines.push(`The game is a draw (${scoreText}): the fewest points are shared.`);
  } else if (result.winner !== null && result.winner !== undefined) {
    // The winner's score first, then the others from highest: "Anna wins the game, 61–48".
    const name = names.side(result.winner);
    const others = scores.filter((_, side) => side !== result.winner).sort((a, b) => b - a);
    const winnerFirst = [scores[result.winner], ...others].join("–");
    lines.push(`${name} ${verb(name, "wins", "win")} the game, ${winnerFirst}.`);
  }
  for (const [side, kind] of Object.entries(result.skunks || {})) {
    const name = names.side(Number(side));
    const is = verb(name, "is", "are");
    if (kind === "skunk") lines.push(`${name} ${is} skunked (${scores[side]} points).`);
    if (kind === "double") lines.push(`${name} ${is} double skunked (${scores[side]} points).`);
  }
  return lines;
}

/** One line of the play-by-play log for an event, or null for events not worth a line. */
export function logLine(ev, names) {
  const who = (s) => names.seat(s);
  switch (ev.type) {
    case "seat_taken":
      if (ev.kind === "computer") return `A computer player (${ev.level || "standard"}) takes seat ${ev.seat + 1}.`;
      return `${ev.name} sits at seat ${ev.seat + 1}.`;
    case "computer_standin":
      if (ev.seat === names.me) {
        return ev.active ? "You were away too long: the computer plays for you until you are back." : "You are back: your seat is yours again.";
      }
      return ev.active ? `${who(ev.seat)} is away: the computer plays for them until they are back.`
        : `${who(ev.seat)} is back and plays again.`;
    case "timed_out":
      return ev.seat === names.me
        ? "Your time ran out: the computer made your move."
        : `${who(ev.seat)}'s time ran out: the computer made the move.`;
    case "game_start":
      return ev.game_number > 1 ? `Game ${ev.game_number} begins.` : "The game begins.";
    case "cut_for_deal":
      if (ev.reason === "loser_deals") return `${who(ev.dealer)} lost the last game and deal${ev.dealer === names.me ? "" : "s"} first.`;
      if (ev.reason === "given") return `${who(ev.dealer)} deals first.`;
      return `Cut for deal: ${ev.cuts.map((round) => round.map((c) => `${who(c.seat)} ${cardShort(c.card)}`).join(", ")).join("; then ")} — ${who(ev.dealer)} deal${ev.dealer === names.me ? "" : "s"}.`;
    case "deal":
      return `Deal ${ev.deal_number}: ${who(ev.dealer)} deal${ev.dealer === names.me ? "" : "s"}.`;
    case "discard":
      return ev.cards ? `You lay ${cardsShort(ev.cards)} away to the crib.` : `${who(ev.seat)} lays away to the crib.`;
    case "starter":
      return `The starter is ${cardShort(ev.card)}.`;
    case "play":
      return `${who(ev.seat)} play${ev.seat === names.me ? "" : "s"} ${cardShort(ev.card)} — ${ev.count}.`;
    case "go":
      return `${who(ev.seat)} say${ev.seat === names.me ? "" : "s"} go.`;
    case "count_reset":
      return ev.next === null ? "The play is over."
        : `The count starts again at 0; ${ev.next === names.me ? "you lead" : `${who(ev.next)} leads`}.`;
    case "peg":
    {
      const side = names.side(ev.side);
      return `${side} ${verb(side, "pegs", "peg")} ${ev.points} for ${pegReason(ev)} (${ev.score_after}).`;
    }
    case "show_hand":
      return `${names.possessive(ev.seat)} ${ev.kind}: ${cardsShort(ev.cards)} + ${cardShort(ev.starter)} — ${ev.total}: ${sayShow(ev.items)}.`;
    case "announce":
      return `${who(ev.seat)} announce${ev.seat === names.me ? "" : "s"} ${ev.points} for the ${ev.kind}.`;
    case "answer":
      return `${who(ev.seat)}: ${ev.call}.`;
    case "muggins_result":
      return mugginsLine(ev, names);
    case "backup":
      return backupLine(ev, names);
    case "game_over":
      return gameOverLines(ev, names).join(" ");
    default:
      return null;
  }
}

export function mugginsLine(ev, names) {
  const owner = names.seat(ev.owner);
  const caller = ev.caller === null || ev.caller === undefined ? null : names.seat(ev.caller);
  const base = `${owner} announced ${ev.announced}, the true count is ${ev.true_count}`;
  switch (ev.call) {
    case "muggins":
      return ev.correct
        ? `${base}: ${caller} called muggins and ${verb(caller, "pegs", "peg")} ${ev.caller_pegs}.`
        : `${base}: ${caller} called muggins wrongly — 2 penalty to ${owner}.`;
    case "overcount":
      return ev.correct
        ? `${base}: ${caller} called overcount; ${owner} ${verb(owner, "pegs", "peg")} only ${ev.true_count}.`
        : `${base}: ${caller} called overcount wrongly — 2 penalty to ${owner}.`;
    case "timeout":
      return `${base}: no answer in time, it stands.`;
    default:
      return `${base}: accepted.`;
  }
}

/** Short description of a room's options: "2 players · to 121 · Back-up 10". */
export function describeOptions(o = {}) {
  const parts = [];
  parts.push(o.partnerships ? "4 in partnerships" : `${o.players || 2} players`);
  parts.push(`to ${o.target || 121}`);
  if (o.muggins) parts.push("Muggins");
  if (o.lowball) parts.push("Lowball");
  if (o.backup10) parts.push("Back-up 10");
  return parts.join(" · ");
}

// Words for what happens at the table, in the page's language: names of seats and sides,
// peg reasons, the show's count said the way players say it ("fifteen two, fifteen four,
// a pair is six"), event lines of the play-by-play, and the lines under the board
// (Back-up 10, game over). Pure functions of engine data (docs/rules.md "Events"); every
// word comes from the catalogue (i18n.js).
import { cardShort, cardsShort, countValue, pegsNow, sortCards } from "./cards.js";
import { formatList, formatNumber, genitive, numberWord, t } from "./i18n.js";

/** Show items in the order players count them: fifteens, pairs, runs, flush, nobs. */
const SHOW_ORDER = ["fifteen", "pair", "run", "flush", "nobs"];
const PAIR_KEYS = { 2: "pair", 6: "pair_royal", 12: "double_pair_royal" };

/**
 * What a card to play is worth over the rest of the play (a hint's `value`, holes of this
 * side less the other's): "about even" when it rounds to 0.0, what it costs when it is
 * behind, else what it is worth — never "about 0.0 points" nor "about -0.4 points".
 */
export function playValueText(value) {
  if (Math.abs(value) < 0.05) return t("hint.play_value_even");
  if (value < 0) return t("hint.play_value_behind", { value: formatNumber(-value, 1) });
  return t("hint.play_value", { value: formatNumber(value, 1) });
}

/**
 * The sentences after "Play X." in a play hint (a `play` suggestion, best first) for the
 * seat's `view`, as plain strings: what the card pegs now and what it leaves the next
 * player; with two players out of Lowball what it is worth over the rest of the play (the
 * expert's search; with 3 or 4 players and in Lowball the value is standard's look one card
 * ahead, not said); near the end the chance to win instead. A next player who can always
 * reply is not said to be stuck 0 %, nor one who never can to have a reply worth 0, nor a
 * reply that pegs (next to) nothing to be "worth about 0.0 points"; after thirty-one the
 * count starts again and nobody plays on the card; in Lowball the next player's best reply
 * is not what the card is chosen by. `chance(p)` writes a chance to win (0..1).
 */
export function playHintSentences(hint, view, chance) {
  const top = (hint.choices || [])[0];
  if (!top) return [];
  const seen = view || {};
  const card = top.card || hint.best?.card;
  const said = [];
  if (typeof top.reply === "number") {
    const stuck = Math.round(100 * (top.stuck || 0));
    const key = (seen.count || 0) + countValue(card) === 31 ? "hint.play_why_31"
      : hint.goal === "fewest" ? ((top.stuck || 0) >= 1 ? "hint.play_why_none"
        : stuck > 0 ? "hint.play_why_fewest_stuck" : "hint.play_why_fewest")
      : (top.stuck || 0) >= 1 ? "hint.play_why_none"
      : top.reply < 0.05 ? "hint.play_why_nothing" : stuck > 0 ? "hint.play_why" : "hint.play_why_all";
    said.push(t(key, { points: pegsNow(view, card, top.points), reply: formatNumber(top.reply, 1),
      stuck: formatNumber(stuck, 0) }));
  }
  const own = seen.players === 2 && hint.goal !== "fewest";
  if (typeof top.win === "number") said.push(t("hint.win", { win: chance(top.win) }));
  else if (own && typeof top.value === "number" && typeof top.reply === "number") {
    said.push(playValueText(top.value));
    // Under Muggins near the end the cards keep the order of the chance to win but carry
    // their pegging margin alone (docs/protocol.md "hint"): a card chosen below another's
    // margin is chosen for the game.
    const most = Math.max(...(hint.choices || []).map((c) => (typeof c.value === "number" ? c.value : -Infinity)));
    if (most > top.value + 0.05) said.push(t("hint.play_for_game"));
  }
  return said;
}

/**
 * One choice of a discard hint as a sentence: its cards, expected points and their parts —
 * the kept hand, the crib and (when the hint counts it) the play's expected margin; near the
 * end, when the discards are ranked by the chance to win, that chance first (`chance(p)`
 * writes it, p in 0..1), then the points (which need not be in the same order).
 */
export function discardChoiceText(c, chance) {
  if (typeof c.win !== "number") return discardChoicePoints(c);
  const win = chance(c.win);
  if (typeof c.hand === "number" && typeof c.crib === "number" && typeof c.play === "number") {
    return t("hint.choice_win", { ...discardChoiceParts(c), win, play: formatNumber(c.play, 1) });
  }
  return `${discardChoicePoints(c)} ${t("hint.win", { win })}`;
}

// A discard choice's cards, expected points, hand and crib as the texts show them. The crib
// as it counts in the total: its whole average for the seat's own crib, less an opponent's,
// shared among the other sides (half with three players, a third with four alone): what is
// left of the total after the hand and the play, so that the parts add up to it
// (docs/protocol.md "hint"): to the tenth shown, each of the others being rounded first.
function discardChoiceParts(c) {
  const tenth = (x) => Math.round(x * 10) / 10;
  const crib = tenth(c.expected) - tenth(c.hand) - (typeof c.play === "number" ? tenth(c.play) : 0) || 0;
  return { cards: cardsShort(sortCards(c.cards)), points: formatNumber(c.expected, 1),
    hand: formatNumber(c.hand, 1), crib: formatNumber(crib, 1) };
}

function discardChoicePoints(c) {
  if (typeof c.hand !== "number" || typeof c.crib !== "number") {
    return t("hint.choice", { cards: cardsShort(sortCards(c.cards)), points: formatNumber(c.expected, 1) });
  }
  const parts = discardChoiceParts(c);
  if (typeof c.play === "number") return t("hint.choice_why_play", { ...parts, play: formatNumber(c.play, 1) });
  return t("hint.choice_why", parts);
}

export const capitalize = (s) => s.charAt(0).toLocaleUpperCase() + s.slice(1);

/**
 * The show's count as said aloud, with a running total in words: "fifteen two, fifteen
 * four, a pair is six, a run of three is nine, and one for his nobs is ten". `items` are
 * the engine's breakdown items; an empty list is "nineteen" (no score).
 */
export function sayShow(items) {
  const sorted = [...items].sort((a, b) => SHOW_ORDER.indexOf(a.kind) - SHOW_ORDER.indexOf(b.kind));
  if (!sorted.length) return t("say.nineteen");
  let total = 0;
  const seen = {};
  const parts = sorted.map((item) => {
    total += item.points;
    const again = (seen[item.kind] = (seen[item.kind] || 0) + 1) > 1;
    const words = { total: numberWord(total), len: numberWord(item.cards.length), points: numberWord(item.points) };
    switch (item.kind) {
      case "fifteen":
        return t("say.fifteen", words);
      case "pair":
        return t(item.points === 2 && again ? "say.pair_again" : `say.${PAIR_KEYS[item.points] || "pair"}`, words);
      case "run":
        return t(again ? "say.run_again" : "say.run", words);
      case "flush":
        return t("say.flush", words);
      case "nobs":
        return t("say.nobs", words);
      default:
        return t("say.other", { ...words, what: item.kind });
    }
  });
  return parts.join(t("say.separator"));
}

/** Why a peg scored: "fifteen", "a pair", "a run of 4", "the go", "his heels". `form` is
 * the verb form of the side that pegs ("you", "single", "group"): "the hand you announced". */
export function pegReason(peg, form = "single") {
  const items = peg.items || [];
  const announced = items.some((i) => i.kind === "announced");
  switch (peg.source) {
    case "his_heels": return t("why.his_heels");
    case "go": return t("why.go");
    case "last_card": return t("why.last_card");
    case "hand": return t(announced ? "why.hand_announced" : "why.hand", { form });
    case "crib": return t(announced ? "why.crib_announced" : "why.crib", { form });
    case "muggins": return t("why.muggins");
    case "penalty": return t("why.penalty");
    default: break;
  }
  if (!items.length) return t("why.play");
  return formatList(items.map((i) => {
    switch (i.kind) {
      case "fifteen": return t("why.fifteen");
      case "thirty_one": return t("why.thirty_one");
      case "pair": return t(`why.${PAIR_KEYS[i.points] || "pair"}`);
      case "run": return t("why.run", { n: i.cards.length });
      default: return t("why.play");
    }
  }));
}

/**
 * Names for seats and sides, from the room's seats and the view.
 * - `seat(s)`: "Anna", "You" / "Du", a computer by its level ("Computer (standard)");
 * - `form(s)`: the verb form for a sentence about seat s: "you" or "single";
 * - `side(side)` / `sideForm(side)`: a side's name ("Anna and Carl") and verb form
 *   ("group" for partners);
 * - `whose(s, kind)`: "your hand", "Anna's crib"; `object(s)`: "you" / "dig" / "Anna".
 */
export function makeNames(seats, view, mySeat) {
  const list = seats || [];
  const computers = list.filter((x) => x?.kind === "computer").length;
  const seatName = (s) => {
    if (s === null || s === undefined) return t("name.nobody");
    if (s === mySeat) return t("name.you");
    const info = list[s];
    if (info?.kind === "computer") {
      return computers > 1 ? t("name.computer_seat", { n: s + 1 }) : t("name.computer", { level: t(`level.${info.level || "standard"}`) });
    }
    return info?.name || t("name.seat", { n: s + 1 });
  };
  const plainName = (s) => (s === mySeat ? (list[s]?.name || t("name.you")) : seatName(s));
  const sides = view?.sides || list.map((_, i) => i);
  const sideSeats = (side) => sides.map((sd, i) => (sd === side ? i : -1)).filter((i) => i >= 0);
  const sideName = (side) => {
    const members = sideSeats(side);
    if (members.length <= 1) return seatName(members[0] ?? side);
    // "You and Carl": the reader first.
    const ordered = members.includes(mySeat) ? [mySeat, ...members.filter((m) => m !== mySeat)] : members;
    return formatList(ordered.map(seatName));
  };
  const form = (s) => (s === mySeat ? "you" : "single");
  const sideForm = (side) => {
    const members = sideSeats(side);
    if (members.length > 1) return "group";
    return members[0] === mySeat ? "you" : "single";
  };
  const whose = (s, kind) => t(`whose.${kind}`, { form: form(s), owner: genitive(seatName(s)) });
  const object = (s) => (s === mySeat ? t("name.you_object") : seatName(s));
  return { seat: seatName, plainName, side: sideName, sideSeats, form, sideForm, whose, object, me: mySeat };
}

/** The line under the board for a Back-up 10 event. */
export function backupLine(ev, names) {
  const params = {
    whose: capitalize(names.whose(ev.seat, ev.kind === "crib" ? "crib" : "hand")),
    who: names.side(ev.side), form: names.sideForm(ev.side), n: ev.holes,
    before: ev.score_before, after: ev.score_after,
  };
  if (ev.holes === 10) return t("backup.ten", params);
  if (ev.holes === 0) return t("backup.none", params);
  return t("backup.some", params);
}

/** Lines for the end of a game: the winner (or a draw), a Lowball loss, skunks. */
export function gameOverLines(result, names) {
  const lines = [];
  const scores = result.scores || [];
  if (result.lowball) {
    lines.push(t("over.lowball_loser", { who: names.side(result.reached_by), form: names.sideForm(result.reached_by) }));
  }
  if (result.draw) {
    lines.push(t("over.draw", { scores: scores.join("–") }));
  } else if (result.winner !== null && result.winner !== undefined) {
    // The winner's score first, then the others from highest: "Anna wins the game, 61–48".
    const others = scores.filter((_, side) => side !== result.winner).sort((a, b) => b - a);
    lines.push(t("over.winner", {
      who: names.side(result.winner), form: names.sideForm(result.winner),
      scores: [scores[result.winner], ...others].join("–"),
    }));
  }
  for (const [side, kind] of Object.entries(result.skunks || {})) {
    if (kind !== "skunk" && kind !== "double") continue;
    const s = Number(side);
    lines.push(t(kind === "skunk" ? "over.skunk" : "over.double_skunk",
      { who: names.side(s), form: names.sideForm(s), n: scores[s] }));
  }
  return lines;
}

/** The match score (docs/rules.md §8, `view.match`): "Match, best of 3: Anna 1 – Ben 0". */
export function matchScore(match, names) {
  const wins = match.wins.map((w, side) => `${names.side(side)} ${w}`).join(" – ");
  return t("match.score", { n: match.best_of, wins });
}

/**
 * The match's lines at game over: its score, the game points ("Game points: 5–2") and,
 * once it is over, who won it ("Anna wins the match, 2–1") or why it ended early.
 */
export function matchLines(match, names) {
  const lines = [matchScore(match, names), t("match.points", { points: match.points.join("–") })];
  if (match.over) lines.push(matchOverLine(match, names));
  return lines;
}

/** How a match ended (`view.match` once over, or a `match_over` event): "Anna wins the
 * match, 2–1.", after a forfeit with "The match ended early: a player left it." first. */
export function matchOverLine(match, names) {
  const parts = match.reason === "forfeit" ? [t("match.forfeit")] : [];
  if (match.winner === null || match.winner === undefined) {
    parts.push(t("match.level"));
  } else {
    const others = match.wins.filter((_, side) => side !== match.winner).sort((a, b) => b - a);
    parts.push(t("match.winner", {
      who: names.side(match.winner), form: names.sideForm(match.winner),
      wins: [match.wins[match.winner], ...others].join("–"),
    }));
  }
  return parts.join(" ");
}

/** "Anna 5♥, Ben K♠; then Anna 2♣, Ben 2♦" for a cut for deal. */
export function cutText(ev, names) {
  return ev.cuts.map((round) => round.map((c) => `${names.seat(c.seat)} ${cardShort(c.card)}`).join(", "))
    .join(t("log.cut_then"));
}

/** One line of the play-by-play for an event, or null for events not worth a line. */
export function logLine(ev, names) {
  const who = (s) => names.seat(s);
  const f = (s) => names.form(s);
  switch (ev.type) {
    case "seat_taken":
      if (ev.kind === "computer") return t("log.computer_sits", { level: t(`level.${ev.level || "standard"}`), n: ev.seat + 1 });
      return t("log.sits", { who: ev.name, n: ev.seat + 1 });
    case "computer_standin":
      return t(ev.active ? "log.standin_on" : "log.standin_off", { who: who(ev.seat), form: f(ev.seat) });
    case "seat_abandoned":
      return t("log.abandoned", { who: who(ev.seat), form: f(ev.seat) });
    case "timed_out":
      return t("log.timed_out", { who: who(ev.seat), form: f(ev.seat), whose: names.whose(ev.seat, "time") });
    case "game_start":
      return ev.game_number > 1 ? t("log.game_start_n", { n: ev.game_number }) : t("log.game_start");
    case "cut_for_deal":
      if (ev.reason === "loser_deals") return t("log.loser_deals", { who: who(ev.dealer), form: f(ev.dealer) });
      if (ev.reason === "given") return t("log.deals_first", { who: who(ev.dealer), form: f(ev.dealer) });
      return t("log.cut", { cuts: cutText(ev, names), who: who(ev.dealer), form: f(ev.dealer) });
    case "deal":
      return t("log.deal", { n: ev.deal_number, who: who(ev.dealer), form: f(ev.dealer) });
    case "discard":
      return ev.cards ? t("log.discard_own", { cards: cardsShort(sortCards(ev.cards)) })
        : t("log.discard", { who: who(ev.seat), form: f(ev.seat), n: ev.count });
    case "starter":
      return t("log.starter", { card: cardShort(ev.card) });
    case "play":
      return t("log.play", { who: who(ev.seat), form: f(ev.seat), card: cardShort(ev.card), count: ev.count });
    case "go":
      return t("log.go", { who: who(ev.seat), form: f(ev.seat) });
    case "count_reset":
      return ev.next === null ? t("log.play_over") : t("log.count_reset", { who: who(ev.next), form: f(ev.next) });
    case "peg":
      return t("log.peg", {
        who: names.side(ev.side), form: names.sideForm(ev.side), n: ev.points, why: pegReason(ev, names.sideForm(ev.side)), score: ev.score_after,
      });
    case "show_hand":
      return t("log.show", {
        whose: capitalize(names.whose(ev.seat, ev.kind)), cards: cardsShort(sortCards(ev.cards)), starter: cardShort(ev.starter),
        n: ev.total, say: sayShow(ev.items),
      });
    case "announce":
      return t(`log.announce_${ev.kind}`, { who: who(ev.seat), form: f(ev.seat), n: ev.points });
    case "answer":
      return t(`log.answer_${ev.call}`, { who: who(ev.seat), form: f(ev.seat) });
    case "muggins_result":
      return mugginsLine(ev, names);
    case "backup":
      return backupLine(ev, names);
    case "game_over":
      return gameOverLines(ev, names).join(" ");
    case "match_score":
      return matchScore(ev, names);
    case "match_over":
      return matchOverLine(ev, names);
    case "room_closed":
      return t("log.room_closed");
    default:
      return null;
  }
}

/** How a Muggins step was settled, in one line. */
export function mugginsLine(ev, names) {
  const params = {
    owner: names.seat(ev.owner), ownerForm: names.form(ev.owner), announced: ev.announced,
    true: ev.true_count, caller: ev.caller === null || ev.caller === undefined ? "" : names.seat(ev.caller),
    form: ev.caller === null || ev.caller === undefined ? "single" : names.form(ev.caller),
    n: ev.caller_pegs, penalty: ev.penalty,
  };
  const base = t("muggins.base", params);
  let rest;
  switch (ev.call) {
    case "muggins":
      rest = ev.correct ? t("muggins.right_muggins", params) : t("muggins.wrong_muggins", params);
      break;
    case "overcount":
      rest = ev.correct ? t("muggins.right_overcount", { ...params, form: names.form(ev.owner) })
        : t("muggins.wrong_overcount", params);
      break;
    case "timeout":
      rest = t("muggins.timeout", params);
      break;
    default:
      rest = t("muggins.accepted", params);
  }
  return `${base}: ${rest}`;
}

/** Short description of a room's options: "2 players · to 121 · Back-up 10". */
export function describeOptions(o = {}) {
  const parts = [];
  parts.push(o.partnerships ? t("options.partnerships") : t("options.players", { n: o.players || 2 }));
  parts.push(t("options.to", { n: o.target || 121 }));
  if (o.muggins) parts.push(t("variant.muggins"));
  if (o.lowball) parts.push(t("variant.lowball"));
  if (o.backup10) parts.push(t("variant.backup10"));
  return parts.join(" · ");
}

/** An error or reject code as text in this language (the server's stable codes,
 * protocol/codes.py, and the client library's own). */
export function codeText(code, fallback) {
  const text = t(`code.${code}`);
  return text.startsWith("⟦") ? (fallback || t("code.unknown", { code })) : text;
}

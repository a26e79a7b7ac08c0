// Cards as the engine writes them: rank then suit, "5H", "TD", "JC" (docs/rules.md "Cards").
// On screen a card shows its index and suit symbol ("10♦"); its accessible name starts
// with that same text and adds the card's name in the page's language ("10♦ ten of
// diamonds", "10♦ ruder ti"), so what a screen reader says matches what is seen.
import { h } from "./dom.js";
import { t } from "./i18n.js";

const RANKS = "A23456789TJQK";
const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RED = new Set(["D", "H"]);

export const rankOf = (card) => card[0];
export const suitOf = (card) => card[card.length - 1];

/** Order for sorting a hand: by rank, then suit. */
export function cardOrder(card) {
  return RANKS.indexOf(rankOf(card)) * 4 + "CDHS".indexOf(suitOf(card));
}

export const sortCards = (cards) => [...cards].sort((a, b) => cardOrder(a) - cardOrder(b));

/** A card's value for the count: ace 1, two to ten their face value, jack, queen, king 10. */
export const countValue = (card) => Math.min(RANKS.indexOf(rankOf(card)) + 1, 10);

/**
 * What laying ``card`` pegs at once in the play, from ``points`` (a play suggestion's
 * points: fifteen, thirty-one, pairs and runs, not go or last card) and the seat's view:
 * one more when it is the last card of the play, leaving every hand empty, and does not
 * bring the count to 31 (docs/rules.md §3.6: then only the 2 for 31). A go is not added:
 * it depends on cards this seat cannot see.
 */
export function pegsNow(view, card, points) {
  if (!view) return points;
  const sizes = view.hand_sizes || [];
  const last = (view.hand || []).length === 1
    && sizes.every((n, seat) => seat === view.seat || n === 0);
  return points + (last && (view.count || 0) + countValue(card) !== 31 ? 1 : 0);
}

/** The index printed on the card in this language ("A", "10", "J"; "E", "B"… where the
 * language's packs print other letters). */
export function rankIndex(card) {
  return t(`card.index.${rankOf(card)}`);
}

/** "5♥", "10♦" */
export function cardShort(card) {
  return `${rankIndex(card)}${SUIT_SYMBOLS[suitOf(card)]}`;
}

/** "five of hearts" / "hjerter fem" / "hjärter fem". */
export function cardLong(card) {
  return t("card.name", { rank: t(`card.rank.${rankOf(card)}`), suit: t(`card.suit.${suitOf(card)}`) });
}

/** What a screen reader says for a card: the text shown, then its name. */
export function cardLabel(card) {
  return `${cardShort(card)} ${cardLong(card)}`;
}

export const cardsShort = (cards) => cards.map(cardShort).join(" ");

/**
 * A face-up card. With `onclick` it is a <button> (keyboard-usable, disabled when
 * `disabled`), otherwise a plain element. `selected` marks a card picked for the crib
 * (aria-pressed), `hint` a card the hint suggests; `note` is said after the card's name
 * ("the starter", "playable").
 */
export function cardEl(card, { onclick, disabled = false, selected, hint = false, small = false,
  key, note = "" } = {}) {
  const red = RED.has(suitOf(card));
  const label = cardLabel(card) + (note ? `, ${note}` : "");
  const body = [
    h("span", { class: "card-rank" }, rankIndex(card)),
    h("span", { class: "card-suit" }, SUIT_SYMBOLS[suitOf(card)]),
  ];
  const cls = ["card", red ? "red" : "black", small && "small", selected && "selected", hint && "hinted"];
  if (!onclick) {
    return h("span", { class: cls, role: "img", "aria-label": label, title: cardLong(card), "data-card": card }, body);
  }
  return h("button", {
    type: "button", class: cls, "aria-label": label, title: cardLong(card), "data-card": card,
    "data-key": key || `card-${card}`, disabled, onclick,
    "aria-pressed": selected === undefined ? null : String(Boolean(selected)),
  }, body);
}

/** A face-down card (another player's hand, the crib). */
export function cardBack({ small = true } = {}) {
  return h("span", { class: ["card", "back", small && "small"], "aria-hidden": "true" });
}

// Cards as the engine writes them: rank then suit, "5H", "TD", "JC" (docs/rules.md "Cards").
import { h } from "./dom.js";

const RANKS = "A23456789TJQK";
const RANK_SHORT = { T: "10" };
const RANK_NAMES = {
  A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
  9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
};
export const SUITS = {
  C: { symbol: "♣", name: "clubs", red: false },
  D: { symbol: "♦", name: "diamonds", red: true },
  H: { symbol: "♥", name: "hearts", red: true },
  S: { symbol: "♠", name: "spades", red: false },
};

export const rankOf = (card) => card[0];
export const suitOf = (card) => card[card.length - 1];

/** Counting value: ace 1, number cards their number, ten and court cards 10. */
export function cardValue(card) {
  const i = RANKS.indexOf(rankOf(card));
  return Math.min(i + 1, 10);
}

/** Order for sorting a hand: by rank, then suit. */
export function cardOrder(card) {
  return RANKS.indexOf(rankOf(card)) * 4 + "CDHS".indexOf(suitOf(card));
}

export const sortCards = (cards) => [...cards].sort((a, b) => cardOrder(a) - cardOrder(b));

/** "5♥", "10♦" */
export function cardShort(card) {
  const r = rankOf(card);
  return `${RANK_SHORT[r] || r}${SUITS[suitOf(card)].symbol}`;
}

/** "five of hearts" (for screen readers and titles). */
export function cardLong(card) {
  return `${RANK_NAMES[rankOf(card)]} of ${SUITS[suitOf(card)].name}`;
}

export const cardsShort = (cards) => cards.map(cardShort).join(" ");

/**
 * A face-up card. With `onclick` it is a <button> (keyboard-usable, disabled when
 * `disabled`), otherwise a plain element. `selected` marks a card picked for the crib
 * (aria-pressed), `hint` a card the hint suggests.
 */
export function cardEl(card, { onclick, disabled = false, selected, hint = false, small = false,
  key, extraLabel = "" } = {}) {
  const suit = SUITS[suitOf(card)];
  const r = rankOf(card);
  const label = cardLong(card) + (extraLabel ? `, ${extraLabel}` : "");
  const body = [
    h("span", { class: "card-rank", "aria-hidden": "true" }, RANK_SHORT[r] || r),
    h("span", { class: "card-suit", "aria-hidden": "true" }, suit.symbol),
  ];
  const cls = ["card", suit.red ? "red" : "black", small && "small", selected && "selected",
    hint && "hinted"];
  if (!onclick) {
    return h("span", { class: cls, role: "img", "aria-label": label, title: label,
      "data-card": card }, body);
  }
  return h("button", {
    type: "button", class: cls, "aria-label": label, title: label, "data-card": card,
    "data-key": key || `card-${card}`, disabled, onclick,
    "aria-pressed": selected === undefined ? null : String(Boolean(selected)),
  }, body);
}

/** A face-down card (another player's hand, the crib). */
export function cardBack({ small = true } = {}) {
  return h("span", { class: ["card", "back", small && "small"], "aria-hidden": "true" });
}

"""The cut for first deal, the deal, the discard to the crib and the starter (docs/rules.md §2).

Dealing convention (also what :func:`deck_for` stacks): cards go one at a time, round-robin,
from the top of the pack, starting with the seat left of the dealer; with 3 players the next
card goes into the crib; the next card after that is the starter; the rest stay in the pack.
"""

from __future__ import annotations

from itertools import combinations

from . import rng
from .cards import FULL_DECK
from .errors import (
    ALREADY_DISCARDED,
    BAD_ACTION,
    BAD_CARD,
    CARD_NOT_IN_HAND,
    WRONG_DISCARD_COUNT,
    WRONG_PHASE,
    RulesError,
)
from .options import GameOptions
from .pegging import peg
from .shapes import DiscardAction, Event
from .state import CARDS, GameState, canonical


def cut_for_dealer(seed: str | int, game_number: int, seats: list[int]) -> tuple[int, list]:
    """The cut for first deal (docs/rules.md §2.1): each seat cuts a card, lowest rank deals (ace
    low, suits do not matter); seats tied for lowest cut again among themselves.

    Returns:
        ``(dealer, rounds)``; each round is a list of ``{"seat": int, "card": str}``.
    """
    rounds: list[list[dict]] = []
    contenders = list(seats)
    while True:
        cards = rng.cut_cards(seed, game_number, len(rounds) + 1, len(contenders))
        rounds.append([{"seat": s, "card": c} for s, c in zip(contenders, cards, strict=True)])
        low = min(CARDS[c].rank for c in cards)
        contenders = [s for s, c in zip(contenders, cards, strict=True) if CARDS[c].rank == low]
        if len(contenders) == 1:
            return contenders[0], rounds


def check_deck(deck: object) -> list[str]:
    """A stacked pack in canonical text; ``ValueError`` unless it is 52 distinct cards."""
    if not isinstance(deck, list | tuple):
        raise ValueError("a stacked deck must be a list of 52 card texts")
    cards = [canonical(c) for c in deck]
    if len(cards) != 52 or len(set(cards)) != 52:
        raise ValueError("a stacked deck must hold each of the 52 cards exactly once")
    return cards


def deck_for(
    options: GameOptions,
    dealer: int,
    hands: dict | None = None,
    crib_card: str | None = None,
    starter: str | None = None,
) -> list[str]:
    """Stack a pack so that the deal by ``dealer`` gives exactly the cards asked for.

    Args:
        options: the game's options (player count decides the deal sizes, docs/rules.md §2.3).
        dealer: the dealing seat.
        hands: ``{seat: [card texts]}`` (int or str seat keys); each list at most the deal
            size (6 with 2 players, else 5), in any order. Seats or cards not given are filled
            with the lowest unused cards.
        crib_card: with 3 players, the pack card that goes straight into the crib.
        starter: the card to be cut as the starter.

    Returns:
        52 card texts, top first, for ``new_game(..., decks=[...])``.

    Raises:
        ValueError: a bad seat, a bad or repeated card, too many cards for a hand, or a
            ``crib_card`` with other than 3 players.
    """
    n, size = options.players, options.hand_size
    wanted: dict[int, list[str]] = {}
    for key, cards in (hands or {}).items():
        seat = int(key)
        if not 0 <= seat < n:
            raise ValueError(f"no seat {key!r} with {n} players")
        texts = [canonical(c) for c in cards]
        if len(texts) > size:
            raise ValueError(f"seat {seat} is dealt {size} cards, not {len(texts)}")
        wanted[seat] = texts
    if crib_card is not None and n != 3:
        raise ValueError("only a 3-player deal puts a pack card into the crib")
    used = [c for cards in wanted.values() for c in cards]
    extra = [canonical(c) for c in (crib_card, starter) if c is not None]
    if len(set(used + extra)) != len(used + extra):
        raise ValueError("a card is asked for twice")
    spare = iter(str(c) for c in FULL_DECK if str(c) not in set(used + extra))
    deck: list[str] = []
    for i in range(size):
        for k in range(1, n + 1):
            seat = (dealer + k) % n
            given = wanted.get(seat, [])
            deck.append(given[i] if i < len(given) else next(spare))
    if n == 3:
        deck.append(canonical(crib_card) if crib_card is not None else next(spare))
    deck.append(canonical(starter) if starter is not None else next(spare))
    deck.extend(spare)
    return deck


def start_deal(state: GameState, events: list[Event]) -> None:
    """Deal the next hand (``state.deal_number`` +1) by ``state.dealer``: reset the deal's
    fields, deal per the convention above and enter the ``discard`` phase. Uses the next
    stacked deck if any is left, else the seeded shuffle (docs/rules.md, "The shuffle").
    Emits ``deal_commitment`` (the seeded shuffle only: the SHA-256 of the deal's seed),
    then ``deal``."""
    opts = state.options
    n = opts.players
    state.deal_number += 1
    if state.decks:
        deck = state.decks.pop(0)
    else:
        seed = rng.deal_seed(state.seed, state.game_number, state.deal_number)
        deck = rng.shuffled_pack(seed)
        events.append(
            {
                "type": "deal_commitment", "game_number": state.game_number,
                "deal_number": state.deal_number, "commitment": rng.commitment(seed),
            }
        )
    hands: list[list[str]] = [[] for _ in range(n)]
    pos = 0
    for _ in range(opts.hand_size):
        for k in range(1, n + 1):
            hands[(state.dealer + k) % n].append(deck[pos])
            pos += 1
    state.hands = hands
    state.kept = [[] for _ in range(n)]
    state.discards = [[] for _ in range(n)]
    state.crib = []
    state.crib_card = None
    if n == 3:
        state.crib_card = deck[pos]
        state.crib.append(deck[pos])
        pos += 1
    state.pack = deck[pos:]
    state.starter = None
    state.pile = []
    state.played = []
    state.count = 0
    state.go = [False] * n
    state.turn = None
    state.last_player = None
    state.show_order = []
    state.show_counted = []
    state.show_pending = None
    state.revealed = []
    state.phase = "discard"
    events.append(
        {
            "type": "deal", "deal_number": state.deal_number, "dealer": state.dealer,
            "hands": {str(s): list(h) for s, h in enumerate(hands)},
            "crib_size": len(state.crib),
        }
    )


def discard(state: GameState, seat: int, action: dict, events: list[Event]) -> None:
    """Lay ``action["cards"]`` from ``seat``'s hand away to the crib (docs/rules.md §2.3, §2.4).

    When the crib is complete the starter is cut (docs/rules.md §2.5) and the play begins.

    Raises:
        RulesError: ``wrong_phase``, ``already_discarded``, ``bad_action`` (no card list),
            ``bad_card``, ``wrong_discard_count``, ``card_not_in_hand`` (also a repeated card).
    """
    if state.phase != "discard":
        raise RulesError(WRONG_PHASE, f"cannot discard in the {state.phase} phase")
    if state.discards[seat]:
        raise RulesError(ALREADY_DISCARDED, f"seat {seat} has already discarded this deal")
    raw = action.get("cards")
    if not isinstance(raw, list):
        raise RulesError(BAD_ACTION, 'a discard needs "cards": a list of card texts')
    try:
        cards = [canonical(c) for c in raw]
    except ValueError as exc:
        raise RulesError(BAD_CARD, str(exc)) from None
    need = state.options.discard_count
    if len(cards) != need:
        raise RulesError(WRONG_DISCARD_COUNT, f"discard {need} card(s), not {len(cards)}")
    hand = state.hands[seat]
    if len(set(cards)) != len(cards) or any(c not in hand for c in cards):
        raise RulesError(CARD_NOT_IN_HAND, f"seat {seat} does not hold {' '.join(cards)}")
    for c in cards:
        hand.remove(c)
    state.discards[seat] = cards
    state.crib.extend(cards)
    state.kept[seat] = list(hand)
    events.append({"type": "discard", "seat": seat, "cards": list(cards), "count": len(cards)})
    if all(state.discards):
        cut_starter(state, events)


def discard_options(state: GameState, seat: int) -> list[DiscardAction]:
    """Every legal discard for ``seat`` (``[]`` once it has discarded)."""
    if state.phase != "discard" or state.discards[seat]:
        return []
    return [
        {"type": "discard", "cards": list(combo)}
        for combo in combinations(state.hands[seat], state.options.discard_count)
    ]


def cut_starter(state: GameState, events: list[Event]) -> None:
    """Cut the starter from the top of the pack (docs/rules.md §2.5); a jack pegs the dealer 2 for
    his heels, which may end the game (ACC 6.3b, docs/rules.md §4.3). Then the play begins: the
    seat left of the dealer leads (docs/rules.md §3.1)."""
    state.starter = state.pack.pop(0)
    events.append({"type": "starter", "card": state.starter, "dealer": state.dealer})
    if CARDS[state.starter].rank == 11:
        item = {"kind": "his_heels", "cards": [state.starter], "points": 2}
        if peg(state, events, state.dealer, 2, "his_heels", [item]):
            return
    state.phase = "play"
    state.turn = (state.dealer + 1) % state.players

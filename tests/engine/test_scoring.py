"""Counting hands, cribs and the play: engine.scoring (ACC rules; docs/rules.md §4.2 and §3.5).

Every expected number here was worked out by hand (the working is in the comments); none is
computed with the code under test. The property tests at the end compare ``score_hand`` with
a small independent reference count written for this file.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import FULL_DECK, Card
from engine.scoring import Score, ScoreItem, hand_total, score_hand, score_pegging


def cards(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def breakdown(score: Score) -> Counter[tuple[str, int]]:
    """How many items of each (kind, points) a score has."""
    return Counter((item.kind, item.points) for item in score.items)


# --- The show: docs/rules.md §4.2 ----------------------------------------------------------------

HAND_CASES = [
    # Issue 2, "Cases it must get right".
    # 2 4 6 8 J: all values even, so no fifteen; no run; the jack is the starter, not nobs.
    ("2D 4C 6H 8D", "JS", False, 0),
    # Three hand hearts plus a heart starter is no flush; all values even, no run.
    ("2H 4H 6H 8C", "QH", False, 0),
    # 9+2+4 = 15 (2); 9-10 is only a two-card run.
    ("9C TD 2S 4H", "7C", False, 2),
    # Q K A 2 8: no fifteen, no run (the ace is low); the 4-card flush is not a crib flush.
    ("QS KS AS 2S", "8D", True, 0),
    ("QS KS AS 2S", "8D", False, 4),
    ("QS KS AS 2S", "8S", True, 5),
    ("QS KS AS 2S", "8S", False, 5),
    # 3 4 5 6 6: fifteens 6+6+3, 4+5+6 twice (6); pair (2); double run of four (8) = 16;
    # the four-spade flush adds 4 in a hand only.
    ("6S 5S 4S 3S", "6D", False, 20),
    ("6S 5S 4S 3S", "6D", True, 16),
    # 4+4+4+3 with either 3 (4); pair royal of 4s (6); pair of 3s (2).
    ("4S 4H 4D 3C", "3H", False, 12),
    # 8+6+A four ways (8); two pairs (4).
    ("8S 8H 6D 6C", "AS", False, 12),
    # Double run T J Q K (8) and the pair of queens (2); no fifteen among ten-cards.
    ("TS JH QD QC", "KS", False, 10),
    # J+5 four ways (8), 5+5+5 four ways (8), double pair royal (12), nobs (1).
    ("5S 5C 5D JH", "5H", False, 29),
    # 8 8 9 9 T: double double run of three (4 x 3), two pairs (4); no fifteen.
    ("8S 8C 9D TH", "9H", False, 16),
    # --- More cases, worked by hand.
    # 28: all four 5s and a ten-card: 5+10 four ways, 5+5+5 four ways (16), 12 for the pairs.
    ("5S 5C 5D 5H", "KD", False, 28),
    ("5S 5C 5D 5H", "JD", False, 28),  # a jack starter is his heels, never nobs
    # J555 whose jack is not the starter's suit: 28, not 29.
    ("5S 5C 5D JS", "5H", False, 28),
    # Double double run 4 4 5 5 6: 4 runs (12), 2 pairs (4), 4+5+6 four ways (8) = 24.
    ("4C 4D 5H 5S", "6C", False, 24),
    # 3 3 4 4 5 is *not* 24: 4 runs (12), 2 pairs (4), 3+3+4+5 two ways (4) = 20.
    ("3C 3D 4H 4S", "5C", False, 20),
    # 7 7 8 8 9: 4 runs (12), 2 pairs (4), 7+8 four ways (8) = 24.
    ("7C 7D 8H 8S", "9C", False, 24),
    # A 7 7 7 7: 7+7+A six ways (12) and the double pair royal (12) = 24.
    ("7C 7D 7H 7S", "AC", False, 24),
    # Double run 3 3 4 5 + K: K+5, 3+3+4+5 (4), pair (2), two runs of 3 (6) = 12.
    ("3C 3D 4H 5S", "KC", False, 12),
    # Run of five A 2 3 4 5: 5 points; fifteen A+2+3+4+5 (2) = 7.
    ("AC 2D 3H 4S", "5C", False, 7),
    # 2 4 6 8 J with the jack in hand: all even, no run; nobs only when the suits match.
    ("JH 2C 4D 6S", "8H", False, 1),
    ("JH 2C 4D 6S", "8H", True, 1),  # nobs counts in the crib too
    ("JH 2C 4D 6S", "8C", False, 0),
    # Flush rules with a scoreless spread 2 4 6 8 T.
    ("2H 4H 6H 8H", "TC", False, 4),
    ("2H 4H 6H 8H", "TC", True, 0),
    ("2H 4H 6H 8H", "TH", False, 5),
    ("2H 4H 6H 8H", "TH", True, 5),
    ("2H 4H 6H 8C", "TH", True, 0),
    # Five-card flush with nobs: 2 4 6 8 J of hearts, jack in hand: 5 + 1.
    ("2H 4H 6H JH", "8H", False, 6),
    # 5 5 T T K: 5+10 six ways (12), two pairs (4) = 16.
    ("5S 5C TD TH", "KS", False, 16),
    # A 2 3 + 9 9: fifteens 9+A+2+3 twice (4), run A-2-3 (3), pair 9s (2) = 9.
    ("AS 2C 3D 9H", "9C", False, 9),
    # 19 is impossible ("nineteen" is table talk for zero): A 3 7 9 K has no 15, pair or run.
    ("AS 3C 7D 9H", "KC", False, 0),
]


@pytest.mark.parametrize(("hand", "starter", "crib", "total"), HAND_CASES)
def test_hand_and_crib_counts(hand: str, starter: str, crib: bool, total: int) -> None:
    """docs/rules.md §4.2: each case counted by hand, as Card objects and as text."""
    score = score_hand(cards(hand), Card.parse(starter), crib=crib)
    assert score.total == total
    assert sum(item.points for item in score.items) == total
    assert score_hand(hand.split(), starter, crib=crib).total == total
    assert hand_total(cards(hand), Card.parse(starter), crib) == total


def test_breakdown_of_the_29_hand() -> None:
    """Eight fifteens, one double pair royal of 12, his nobs: docs/rules.md §4.2."""
    score = score_hand(cards("5S 5C 5D JH"), Card.parse("5H"))
    assert breakdown(score) == {("fifteen", 2): 8, ("pair", 12): 1, ("nobs", 1): 1}
    (nobs,) = [item for item in score.items if item.kind == "nobs"]
    assert nobs.cards == (Card.parse("JH"),)
    (pair,) = [item for item in score.items if item.kind == "pair"]
    assert sorted(map(str, pair.cards)) == ["5C", "5D", "5H", "5S"]


def test_breakdown_of_a_double_run_and_a_flush() -> None:
    """6S 5S 4S 3S + 6D: three fifteens, a pair, two runs of four, a hand flush of four."""
    score = score_hand(cards("6S 5S 4S 3S"), Card.parse("6D"))
    assert breakdown(score) == {("fifteen", 2): 3, ("pair", 2): 1, ("run", 4): 2, ("flush", 4): 1}
    runs = [sorted(map(str, item.cards)) for item in score.items if item.kind == "run"]
    assert sorted(runs) == [["3S", "4S", "5S", "6D"], ["3S", "4S", "5S", "6S"]]
    (flush,) = [item for item in score.items if item.kind == "flush"]
    assert set(flush.cards) == set(cards("6S 5S 4S 3S"))
    crib = score_hand(cards("6S 5S 4S 3S"), Card.parse("6D"), crib=True)
    assert "flush" not in {item.kind for item in crib.items}


def test_pair_royal_is_one_item_of_six() -> None:
    score = score_hand(cards("4S 4H 4D 3C"), Card.parse("3H"))
    assert breakdown(score) == {("fifteen", 2): 2, ("pair", 6): 1, ("pair", 2): 1}


def test_items_and_to_dict() -> None:
    """The breakdown is plain data for events: kinds, canonical card text, points."""
    score = score_hand(["9c", "10d", "2♠", "4h"], "7C")
    assert score.to_dict() == {
        "total": 2,
        "items": [{"kind": "fifteen", "cards": ["9C", "2S", "4H"], "points": 2}],
    }
    assert score.items == (ScoreItem("fifteen", tuple(cards("9C 2S 4H")), 2),)
    assert score == Score(2, score.items)
    assert hash(score) == hash(Score(2, score.items))


def test_items_are_built_once_and_kept() -> None:
    score = score_hand(cards("5S 5C 5D JH"), Card.parse("5H"))
    assert score.items is score.items


@pytest.mark.parametrize(
    ("hand", "starter", "message"),
    [
        ("5S 5C 5D", "5H", "4 cards"),
        ("5S 5C 5D JH KH", "5H", "4 cards"),
        ("5S 5C 5D 5S", "KH", "different"),
        ("5S 5C 5D JH", "JH", "different"),
        ("5S 5C 5D JH", "5S", "different"),
        ("5S 5C 5D XH", "5H", "not a card"),
        ("5S 5C 5D JH", "1H", "not a card"),
    ],
)
def test_bad_hands_raise_value_error(hand: str, starter: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score_hand(hand.split(), starter)
    with pytest.raises(ValueError):
        score_hand(tuple(hand.split()), starter, crib=True)


@pytest.mark.parametrize("bad", [None, 5, "5S 5C 5D JH", [1, 2, 3, 4], [None] * 4, b"5S5C"])
def test_hands_that_are_not_cards_raise_value_error(bad: object) -> None:
    with pytest.raises(ValueError):
        score_hand(bad, "KH")  # type: ignore[arg-type]


def test_repeated_card_objects_raise_value_error() -> None:
    five = Card.parse("5H")
    with pytest.raises(ValueError, match="different"):
        score_hand([five, Card.parse("5H"), Card.parse("5D"), Card.parse("5S")], "KC")
    with pytest.raises(ValueError, match="different"):
        score_hand(cards("5S 5C 5D JH"), Card.parse("5S"))


def test_a_wrong_length_iterator_raises_value_error() -> None:
    with pytest.raises(ValueError, match="4 cards"):
        score_hand(iter(cards("5S 5C 5D JH AS")), "KH")
    assert score_hand(iter(cards("5S 5C 5D JH")), "5H").total == 29


def test_a_card_subclass_is_a_card() -> None:
    class MarkedCard(Card):
        __slots__ = ()

    hand = [MarkedCard(5, "S"), MarkedCard(5, "C"), MarkedCard(5, "D"), MarkedCard(11, "H")]
    assert score_hand(hand, MarkedCard(5, "H")).total == 29


# --- Card text: the forms score_hand and the protocol accept -----------------------------------


@pytest.mark.parametrize(
    ("text", "rank", "suit", "canonical"),
    [
        ("5H", 5, "H", "5H"),
        ("5h", 5, "H", "5H"),
        ("TD", 10, "D", "TD"),
        ("td", 10, "D", "TD"),
        ("10D", 10, "D", "TD"),
        ("10d", 10, "D", "TD"),
        ("as", 1, "S", "AS"),
        ("Ac", 1, "C", "AC"),
        ("jC", 11, "C", "JC"),
        ("qh", 12, "H", "QH"),
        ("KS", 13, "S", "KS"),
        ("5♣", 5, "C", "5C"),
        ("10♦", 10, "D", "TD"),
        ("Q♥", 12, "H", "QH"),
        ("a♠", 1, "S", "AS"),
        ("  9s ", 9, "S", "9S"),
    ],
)
def test_card_parse_forms(text: str, rank: int, suit: str, canonical: str) -> None:
    card = Card.parse(text)
    assert (card.rank, card.suit) == (rank, suit)
    assert str(card) == canonical
    assert Card.parse(str(card)) == card


@pytest.mark.parametrize(
    "text", ["", " ", "5", "H", "1H", "11H", "0S", "5X", "ZH", "5HH", "10", "T", "♠5", "5 H"]
)
def test_card_parse_rejects_bad_text(text: str) -> None:
    with pytest.raises(ValueError):
        Card.parse(text)


def test_card_parse_rejects_non_text() -> None:
    with pytest.raises(ValueError):
        Card.parse(None)  # type: ignore[arg-type]


# --- The play: docs/rules.md §3.5 -------------------------------------------------------------

PEGGING_CASES = [
    # Issue 2: pairs only with the card just before.
    ("6S 5H 6D 5C", 0, {}),
    # The 5 at 30 scores nothing.
    ("7S 8H JD 5C", 0, {}),
    # 3 completes the run 4-5-3 (3) and 31 (2).
    ("KS 9H 4D 5C 3S", 5, {("run", 3): 1, ("thirty_one", 2): 1}),
    # 5 completes the run 4-6-5 (3) and fifteen (2).
    ("4S 6H 5D", 5, {("run", 3): 1, ("fifteen", 2): 1}),
    # More, by hand.
    ("7S 8H", 2, {("fifteen", 2): 1}),
    ("4S 4H", 2, {("pair", 2): 1}),
    ("4S 4H 4D", 6, {("pair", 6): 1}),
    ("3S 3H 3D 3C", 12, {("pair", 12): 1}),
    ("5S 5H 5D", 8, {("pair", 6): 1, ("fifteen", 2): 1}),  # pair royal at 15
    ("5S 5H 5D 5C", 12, {("pair", 12): 1}),  # count 20
    ("4S 4H 5D 4C", 0, {}),  # the pair is broken by the 5
    ("3S 5H 4D", 3, {("run", 3): 1}),  # any order
    ("2S 4H 3D 5C", 4, {("run", 4): 1}),  # extends to four
    ("3S 4H 4D 5C", 0, {}),  # 4 4 5 is no run; 3 4 4 5 has a repeat
    ("9S 2H 3D 4C", 3, {("run", 3): 1}),  # the 9 is not part of it
    ("AS 2H 3D 4C 5S 6H 7D", 7, {("run", 7): 1}),  # count 28: run of seven
    ("AS 2H 3D 4C 5S", 7, {("run", 5): 1, ("fifteen", 2): 1}),
    ("KS QH JD AC", 2, {("thirty_one", 2): 1}),  # 10+10+10+1; A J Q K is no run
    ("KS QH JD", 3, {("run", 3): 1}),  # J Q K in any order, count 30
    ("9S 9H 6D 7C", 2, {("thirty_one", 2): 1}),  # 9 6 7 is no run, 6 7 no pair
    ("5S", 0, {}),
    ("", 0, {}),
]


@pytest.mark.parametrize(("pile", "total", "items"), PEGGING_CASES)
def test_pegging(pile: str, total: int, items: dict[tuple[str, int], int]) -> None:
    """docs/rules.md §3.5: the score of the last card laid on the pile."""
    score = score_pegging(cards(pile))
    assert score.total == total
    assert breakdown(score) == items
    assert score_pegging(pile.split()).total == total


def test_pegging_thirty_one_and_run_items_name_the_cards() -> None:
    score = score_pegging(cards("KS 9H 4D 5C 3S"))
    by_kind = {item.kind: item for item in score.items}
    assert by_kind["thirty_one"].cards == tuple(cards("KS 9H 4D 5C 3S"))
    assert by_kind["run"].cards == tuple(cards("4D 5C 3S"))


@pytest.mark.parametrize("pile", ["KS QH JD 2C", "KS QH JD AC AD", "9S 9H 9D 5C"])
def test_pegging_over_31_raises_value_error(pile: str) -> None:
    with pytest.raises(ValueError, match="31"):
        score_pegging(pile.split())


@pytest.mark.parametrize("pile", ["5H 5H", "AS 2C AS", "KS KS"])
def test_pegging_repeated_card_raises_value_error(pile: str) -> None:
    with pytest.raises(ValueError, match="twice"):
        score_pegging(pile.split())


def test_pegging_bad_text_raises_value_error() -> None:
    with pytest.raises(ValueError):
        score_pegging(["5H", "5Z"])


# --- Properties (hypothesis) ------------------------------------------------------------------


def reference_count(hand: list[Card], starter: Card, crib: bool) -> int:
    """An independent count of docs/rules.md §4.2, written plainly for these tests."""
    five = [*hand, starter]
    values = [min(c.rank, 10) for c in five]
    points = 0
    for size in range(2, 6):
        points += 2 * sum(1 for combo in combinations(values, size) if sum(combo) == 15)
    points += 2 * sum(1 for x, y in combinations(five, 2) if x.rank == y.rank)
    for length in (5, 4, 3):
        runs = 0
        for combo in combinations(five, length):
            ranks = sorted(c.rank for c in combo)
            if all(ranks[i + 1] == ranks[i] + 1 for i in range(length - 1)):
                runs += 1
        if runs:
            points += runs * length
            break
    if len({c.suit for c in hand}) == 1:
        if starter.suit == hand[0].suit:
            points += 5
        elif not crib:
            points += 4
    points += sum(1 for c in hand if c.rank == 11 and c.suit == starter.suit)
    return points


five_cards = st.lists(st.sampled_from(FULL_DECK), min_size=5, max_size=5, unique=True)


@settings(max_examples=1000, deadline=None)
@given(five=five_cards, crib=st.booleans())
def test_score_hand_matches_reference_and_its_items(five: list[Card], crib: bool) -> None:
    """total == sum(items) == hand_total == an independent count; never 19, 25, 26, 27."""
    hand, starter = five[:4], five[4]
    score = score_hand(hand, starter, crib=crib)
    assert score.total == sum(item.points for item in score.items)
    assert score.total == hand_total(hand, starter, crib)
    assert score.total == reference_count(hand, starter, crib)
    assert 0 <= score.total <= 29 and score.total not in {19, 25, 26, 27}
    assert {item.kind for item in score.items} <= {"fifteen", "pair", "run", "flush", "nobs"}
    for item in score.items:
        assert set(item.cards) <= set(five)
        if item.kind == "nobs":
            assert item.cards[0] in hand and item.cards[0].suit == starter.suit


@settings(max_examples=500, deadline=None)
@given(five=five_cards, order=st.permutations(range(4)), crib=st.booleans())
def test_hand_order_does_not_matter(five: list[Card], order: list[int], crib: bool) -> None:
    hand, starter = five[:4], five[4]
    shuffled = [hand[i] for i in order]
    first = score_hand(hand, starter, crib=crib)
    second = score_hand(shuffled, starter, crib=crib)
    assert first.total == second.total

    def key(score: Score) -> Counter:
        return Counter((i.kind, i.points, frozenset(i.cards)) for i in score.items)

    assert key(first) == key(second)


@settings(max_examples=500, deadline=None)
@given(five=five_cards)
def test_crib_never_beats_hand(five: list[Card]) -> None:
    """The crib differs from the hand only by a four-card flush (docs/rules.md §4.2)."""
    hand, starter = five[:4], five[4]
    as_hand = score_hand(hand, starter).total
    as_crib = score_hand(hand, starter, crib=True).total
    assert as_crib <= as_hand
    four_flush = len({c.suit for c in hand}) == 1 and starter.suit != hand[0].suit
    assert as_hand - as_crib == (4 if four_flush else 0)


@settings(max_examples=300, deadline=None)
@given(card=st.sampled_from(FULL_DECK))
def test_card_text_round_trips(card: Card) -> None:
    text = str(card)
    assert len(text) == 2
    assert Card.parse(text) == card
    assert Card.parse(text.lower()) == card
    if card.rank == 10:
        assert Card.parse("10" + card.suit) == card
    symbol = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}[card.suit]
    assert Card.parse(text[0] + symbol) == card


@st.composite
def piles(draw: st.DrawFn) -> list[Card]:
    """A legal pile: distinct cards whose count stays at or under 31."""
    drawn = draw(st.lists(st.sampled_from(FULL_DECK), min_size=1, max_size=8, unique=True))
    pile: list[Card] = []
    count = 0
    for card in drawn:
        if count + card.value > 31:
            break
        pile.append(card)
        count += card.value
    return pile


@settings(max_examples=800, deadline=None)
@given(pile=piles())
def test_pegging_total_is_the_sum_of_its_items(pile: list[Card]) -> None:
    score = score_pegging(pile)
    assert score.total == sum(item.points for item in score.items)
    assert {item.kind for item in score.items} <= {"fifteen", "thirty_one", "pair", "run"}
    assert all(pile[-1] in item.cards for item in score.items)

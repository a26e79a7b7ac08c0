"""Cards and the pack.

A :class:`Card` is an immutable value with a rank (1 = ace .. 13 = king) and a suit
(``"C"``, ``"D"``, ``"H"``, ``"S"``). Its canonical text is two characters, rank then suit:
``"AS"``, ``"5H"``, ``"TD"``, ``"JC"``. Ten is written ``T`` (``"10"`` is accepted on input).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

RANK_CHARS = "A23456789TJQK"
"""Rank characters in rank order; index + 1 is the rank."""

SUITS = "CDHS"
"""Suit letters: clubs, diamonds, hearts, spades."""

_SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}

RANK_NAMES = {
    1: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king",
}


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One playing card.

    Attributes:
        rank: 1 (ace) .. 13 (king).
        suit: one of ``"C" "D" "H" "S"``.

    Cards order by rank, then suit (clubs < diamonds < hearts < spades), which is only a
    display order: suits never rank in cribbage.
    """

    rank: int
    suit: str

    def __post_init__(self) -> None:
        if not isinstance(self.rank, int) or not 1 <= self.rank <= 13:
            raise ValueError(f"card rank must be 1..13, not {self.rank!r}")
        if self.suit not in SUITS or len(self.suit) != 1:
            raise ValueError(f"card suit must be one of C D H S, not {self.suit!r}")

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read a card from text.

        Args:
            text: rank ``A 2..9 T 10 J Q K`` then suit ``C D H S`` (either case) or a suit
                symbol ``♣ ♦ ♥ ♠``; surrounding whitespace is ignored. Examples: ``"5h"``,
                ``"10♦"``, ``"TD"``, ``"as"``.

        Returns:
            The card.

        Raises:
            ValueError: the text is not a card.
        """
        if not isinstance(text, str):
            raise ValueError(f"a card must be given as text, not {type(text).__name__}")
        raw = text.strip()
        if len(raw) < 2:
            raise ValueError(f"not a card: {text!r}")
        rank_text, suit_text = raw[:-1].upper(), raw[-1]
        suit = _SUIT_SYMBOLS.get(suit_text, suit_text.upper())
        if suit not in SUITS:
            raise ValueError(f"not a card: {text!r} (unknown suit {suit_text!r})")
        if rank_text == "10":
            rank = 10
        elif len(rank_text) == 1 and rank_text in RANK_CHARS:
            rank = RANK_CHARS.index(rank_text) + 1
        else:
            raise ValueError(f"not a card: {text!r} (unknown rank {rank_text!r})")
        return cls(rank, suit)

    @property
    def value(self) -> int:
        """Counting value for fifteens and the play: ace 1, 2..10 face value, J Q K 10."""
        return 10 if self.rank >= 10 else self.rank

    @property
    def index(self) -> int:
        """A dense index 0..51 (suit-major), handy for bitsets and tables."""
        return SUITS.index(self.suit) * 13 + self.rank - 1

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card with :attr:`index` ``index`` (0..51); ``ValueError`` outside that."""
        if not 0 <= index < 52:
            raise ValueError(f"card index must be 0..51, not {index}")
        return FULL_DECK[index]

    def __str__(self) -> str:
        return RANK_CHARS[self.rank - 1] + self.suit

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


FULL_DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in SUITS for rank in range(1, 14))
"""The 52 cards, ordered by :attr:`Card.index`."""


def parse_cards(texts: Iterable[str] | str) -> list[Card]:
    """Parse several cards.

    Args:
        texts: an iterable of card texts, or one string of space- or comma-separated cards
            (``"5H 5C JD"``).

    Returns:
        The cards, in the order given.

    Raises:
        ValueError: any text is not a card.
    """
    if isinstance(texts, str):
        texts = texts.replace(",", " ").split()
    return [Card.parse(t) if not isinstance(t, Card) else t for t in texts]


def card_strs(cards: Iterable[Card]) -> list[str]:
    """The canonical texts of ``cards``, in order (for plain-data views and events)."""
    return [str(c) for c in cards]

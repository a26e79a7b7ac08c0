"""The game state: one plain-data record of everything about a game in progress.

Cards are stored as their canonical two-character text (``"5H"``), seats and scores as
ints, so :meth:`GameState.to_dict` is JSON-ready and :meth:`GameState.from_dict` restores an
equal state. The engine never mutates a state it was given: :func:`engine.apply` works on
:meth:`GameState.clone`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import get_args

from .cards import FULL_DECK, Card
from .options import GameOptions
from .rng import check_seed
from .shapes import Phase

PHASES: tuple[str, ...] = get_args(Phase)
"""The phases a game moves through (docs/rules.md, "Phases"): ``discard``, ``play``,
``show``, ``game_over`` (:data:`engine.shapes.Phase`)."""

CARDS: dict[str, Card] = {str(c): c for c in FULL_DECK}
"""Canonical text -> :class:`Card`, for the 52 cards."""

VALUES: dict[str, int] = {t: c.value for t, c in CARDS.items()}
"""Canonical text -> counting value (ace 1 .. ten and faces 10)."""


def canonical(text: object) -> str:
    """The canonical text of a card given as text (``"10h"`` -> ``"TH"``).

    Raises:
        ValueError: not text, or not a card.
    """
    if isinstance(text, str) and text in CARDS:
        return text
    if not isinstance(text, str):
        raise ValueError(f"a card must be given as text, not {type(text).__name__}")
    return str(Card.parse(text))


def plain_copy(value):
    """A deep copy of plain data (dicts, lists, scalars); much faster than ``copy.deepcopy``."""
    kind = type(value)
    if kind is list:
        return [plain_copy(v) if type(v) in _CONTAINERS else v for v in value]
    if kind is dict:
        return {k: plain_copy(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    return value


_CONTAINERS = (list, dict)


@dataclass
class GameState:
    """Everything about one game (and its room's game count).

    Attributes (all plain data except ``options``):
        options: the :class:`GameOptions` chosen (rules use ``options.effective()``).
        seed: the secret seed (str or int) every shuffle derives from; never shown to seats.
        game_number: 1 for the first game, +1 per rematch.
        deal_number: 1 for the first deal of the game.
        dealer: seat of the dealer of the current deal.
        phase: ``"discard"``, ``"play"``, ``"show"`` (Muggins only) or ``"game_over"``.
        scores: holes per side (docs/rules.md §1.4).
        previous_scores: per side, the score before that side's last move (the back peg).
        hands: per seat, the cards still held.
        kept: per seat, the four cards kept for the show (empty until the seat discards).
        discards: per seat, the cards laid away to the crib this deal.
        crib: the crib's cards so far (3 players: the pack card first).
        crib_card: 3 players: the card dealt from the pack into the crib, else ``None``.
        starter: the starter, ``None`` until cut (docs/rules.md §2.5).
        pack: the undealt cards, top first; the starter is cut from the top.
        pile: ``[{"seat", "card"}]`` of the current count, oldest first.
        played: ``[{"seat", "card"}]`` every card laid this deal, in order.
        count: the count of the play (0..31).
        go: per seat, has said go in the current count.
        turn: seat to play in the play phase, else ``None``.
        last_player: seat that laid the most recent card of the current count, or ``None``.
        show_order: the show's steps still to count, ``[{"seat", "kind"}]`` (docs/rules.md §4.1).
        show_counted: the hands and crib counted this deal, as shown in the view.
        show_pending: under Muggins, the step being announced / answered, or ``None``.
        revealed: seats whose kept hands are public this deal (the show has begun for them).
        last_show: the previous deal's ``show_counted``.
        result: the ``game_over`` event's outcome fields once the game has ended, else ``None``.
        decks: stacked packs (52 card texts each) still to be used by later deals, in order.
        match: the match over the room's games (:class:`engine.shapes.Match`,
            :mod:`engine.match`), or ``None`` for a single game (best of 1).
    """

    options: GameOptions
    seed: str | int
    game_number: int = 1
    deal_number: int = 0
    dealer: int = 0
    phase: str = "discard"
    scores: list[int] = field(default_factory=list)
    previous_scores: list[int] = field(default_factory=list)
    hands: list[list[str]] = field(default_factory=list)
    kept: list[list[str]] = field(default_factory=list)
    discards: list[list[str]] = field(default_factory=list)
    crib: list[str] = field(default_factory=list)
    crib_card: str | None = None
    starter: str | None = None
    pack: list[str] = field(default_factory=list)
    pile: list[dict] = field(default_factory=list)
    played: list[dict] = field(default_factory=list)
    count: int = 0
    go: list[bool] = field(default_factory=list)
    turn: int | None = None
    last_player: int | None = None
    show_order: list[dict] = field(default_factory=list)
    show_counted: list[dict] = field(default_factory=list)
    show_pending: dict | None = None
    revealed: list[int] = field(default_factory=list)
    last_show: list[dict] = field(default_factory=list)
    result: dict | None = None
    decks: list[list[str]] = field(default_factory=list)
    match: dict | None = None

    # -- derived -------------------------------------------------------------------------
    @property
    def players(self) -> int:
        """Number of seats."""
        return self.options.players

    @property
    def rules(self) -> GameOptions:
        """The effective options (docs/rules.md §1.3)."""
        return self.options.effective()

    def side_of(self, seat: int) -> int:
        """The side (score index) of ``seat`` (docs/rules.md §1.2)."""
        return self.options.side_of(seat)

    # -- copying and plain data -----------------------------------------------------------
    def clone(self) -> GameState:
        """An independent copy for the engine to change (the input of ``apply`` never is).

        Speed matters (computer players and property tests apply millions of actions), so
        this copies each container the engine changes in place and shares the records it
        only ever replaces: the ``pile``/``played`` entries, ``show_order`` and
        ``show_counted`` entries, ``last_show``, ``result``, ``match`` and the stacked
        ``decks``. Code in the engine must never mutate those in place.
        """
        new = object.__new__(GameState)
        d = new.__dict__
        d.update(self.__dict__)
        d.pop("_legal", None)  # the clone will change: nothing cached may carry over
        d["scores"] = list(self.scores)
        d["previous_scores"] = list(self.previous_scores)
        d["hands"] = [list(h) for h in self.hands]
        d["kept"] = [list(k) for k in self.kept]
        d["discards"] = [list(k) for k in self.discards]
        d["crib"] = list(self.crib)
        d["pack"] = list(self.pack)
        d["pile"] = list(self.pile)
        d["played"] = list(self.played)
        d["go"] = list(self.go)
        d["show_order"] = list(self.show_order)
        d["show_counted"] = list(self.show_counted)
        d["show_pending"] = plain_copy(self.show_pending)
        d["revealed"] = list(self.revealed)
        d["decks"] = list(self.decks)
        return new

    def to_dict(self, copy: bool = True) -> dict:
        """The whole state as JSON-ready plain data (dict, list, str, int, bool, None).

        Holds hidden information (hands, pack, seed): store it, never send it to a client;
        send :func:`engine.view` instead.

        Args:
            copy: True (the default): the result shares nothing with the state. False: it
                shares the state's lists and dicts, which saves copying them when the
                result is only read (e.g. encoded as JSON); then neither the result nor
                the state may be mutated.
        """
        values = self.__dict__
        if not copy:
            out = {name: values[name] for name in _FIELD_NAMES}
            out["options"] = self.options.to_dict()
            return out
        out = {name: plain_copy(values[name]) for name in _FIELD_NAMES}
        out["options"] = self.options.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict) -> GameState:
        """Restore a state from :meth:`to_dict`'s output; ``from_dict(s.to_dict()) == s``.

        A state stored before matches existed has no ``match`` key: it is a single game
        (``match`` None).

        Raises:
            ValueError: not a dict, a missing or unknown key, bad options or a bad seed.
        """
        if not isinstance(data, dict):
            raise ValueError("a game state must be a dict")
        names = _FIELD_NAMES
        if "match" not in data:
            data = {**data, "match": None}
        missing = [n for n in names if n not in data]
        unknown = sorted(set(data) - set(names))
        if missing or unknown:
            raise ValueError(f"bad game state: missing {missing}, unknown {unknown}")
        kwargs = {n: plain_copy(data[n]) for n in names}
        kwargs["options"] = GameOptions.from_dict(data["options"])
        check_seed(kwargs["seed"])
        if kwargs["phase"] not in PHASES:
            raise ValueError(f"bad game state: unknown phase {kwargs['phase']!r}")
        return cls(**kwargs)


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(GameState))
"""The fields of :class:`GameState`, in order (the keys of :meth:`GameState.to_dict`)."""

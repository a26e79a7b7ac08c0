"""The shapes of everything that crosses the engine's boundary, as typed dicts.

One typed definition of the view (:class:`View`), every event (:data:`Event`), the actions
(:data:`Action`), score items, the computer's hint (:data:`Suggestion`), options and the
outcome (:class:`GameResult`). At run time these are plain ``dict``s: annotating the engine
with them costs nothing and validates nothing. ``protocol/`` builds its pydantic models and
the JSON Schema (``docs/protocol.schema.json``) from these definitions, and a property test
checks every view, event, legal action list and suggestion of thousands of random games
against them, so the types and the engine cannot drift apart.

Constraints on values are stated with :data:`typing.Annotated` and two markers,
:class:`Range` (a whole number from ``lo`` to ``hi``) and :class:`Pattern` (text matching a
regular expression); ``protocol`` turns them into schema constraints.

This module deliberately does not use ``from __future__ import annotations``: under Python
3.11 a ``NotRequired`` written as a string is not recognised by ``TypedDict``.
"""

from typing import Annotated, Literal, NamedTuple, NotRequired, TypedDict


class Range(NamedTuple):
    """Marker: a whole number from ``lo`` to ``hi`` (either bound ``None``: unbounded)."""

    lo: int | None
    hi: int | None


class Pattern(NamedTuple):
    """Marker: text that matches ``regex`` (a full match, anchored)."""

    regex: str


CARD_PATTERN = "^[A2-9TJQK][CDHS]$"
"""A card's canonical text as the engine emits it: rank ``A 2-9 T J Q K``, suit ``C D H S``."""

Card = Annotated[str, Pattern(CARD_PATTERN)]
"""A card, canonical text (``"5H"``, ``"TD"``); docs/rules.md, "Cards"."""

Seat = Annotated[int, Range(0, 3)]
"""A seat number, 0..n-1 clockwise (docs/rules.md §1.1)."""

SeatKey = Annotated[str, Pattern("^[0-3]$")]
"""A seat number as an object key (JSON keys are text): ``"0"`` .. ``"3"``."""

Side = Annotated[int, Range(0, 3)]
"""A side (score index): the seat playing alone, or 0 / 1 in partnerships (docs/rules.md §1.2)."""

SideKey = Annotated[str, Pattern("^[0-3]$")]
"""A side as an object key: ``"0"`` .. ``"3"``."""

Holes = Annotated[int, Range(0, 121)]
"""A score, in holes (0 .. the target)."""

Points = Annotated[int, Range(0, None)]
"""A number of points (holes), never negative."""

HandCount = Annotated[int, Range(0, 29)]
"""A hand's or crib's count, or an announcement: 0..29 (docs/rules.md §4.2, §5.1)."""

Count = Annotated[int, Range(0, 31)]
"""The count of the play, 0..31 (docs/rules.md §3)."""

Positive = Annotated[int, Range(1, None)]
"""A whole number from 1 (game and deal numbers)."""

Phase = Literal["discard", "play", "show", "game_over"]
"""The phases of a game (docs/rules.md, "Phases"); ``show`` only under Muggins."""

ShowKind = Literal["hand", "crib"]
"""What is counted in a step of the show."""

Call = Literal["accept", "muggins", "overcount"]
"""An opponent's answer to an announcement (docs/rules.md §5.2)."""

SettledBy = Literal["accept", "muggins", "overcount", "timeout"]
"""How a Muggins step was settled: a call, or the answer window (``timeout``)."""

PegSource = Literal[
    "his_heels", "play", "go", "last_card", "hand", "crib", "muggins", "penalty"
]
"""What a peg is for (docs/rules.md, "Events")."""

ItemKind = Literal[
    "fifteen", "pair", "run", "flush", "nobs", "thirty_one", "go", "last_card", "his_heels",
    "announced", "penalty", "muggins",
]
"""The kind of a scoring breakdown item."""

Skunk = Literal["none", "skunk", "double"]
"""A loser's skunk level (docs/rules.md §4.4)."""


# -- options ------------------------------------------------------------------------------
class Options(TypedDict):
    """The options a game is played with, as played (docs/rules.md §1.3: Muggins is off with
    Lowball). ``engine.GameOptions.to_dict()``."""

    players: Literal[2, 3, 4]
    """Seats at the table."""
    partnerships: bool
    """Four seats in two sides: 0 and 2 against 1 and 3 (docs/rules.md §1.2)."""
    target: Literal[61, 121]
    """Holes to win (in Lowball: to lose)."""
    muggins: bool
    """Owners announce their counts and opponents may call (docs/rules.md §5)."""
    lowball: bool
    """The first to reach the target loses (docs/rules.md §7)."""
    backup10: bool
    """A hand or crib counting 0 moves its owner back 10 holes (docs/rules.md §6)."""


# -- actions ------------------------------------------------------------------------------
class DiscardAction(TypedDict):
    """Lay cards away to the crib: 2 with two players, 1 with three or four (docs/rules.md §2.3)."""

    type: Literal["discard"]
    cards: list[Card]


class PlayAction(TypedDict):
    """Lay a card in the play, on your turn; the count stays at 31 or under (docs/rules.md §3)."""

    type: Literal["play"]
    card: Card


class AnnounceAction(TypedDict):
    """Muggins: the owner of the pending hand or crib announces its count (docs/rules.md §5.1)."""

    type: Literal["announce"]
    points: int


class AnswerAction(TypedDict):
    """Muggins: an opponent answers the pending announcement (docs/rules.md §5.2)."""

    type: Literal["answer"]
    call: Call
    ref: NotRequired[int]
    """The announcement answered (``view.show.pending.ref``): refused with ``stale_answer``
    once that announcement is settled."""


class RematchAction(TypedDict):
    """After game over: a new game, same seats and options (docs/rules.md §2.1)."""

    type: Literal["rematch"]


class AnswerTimeoutAction(TypedDict):
    """System only (seat ``None``): the answer window ran out; whoever has not answered
    accepts (docs/rules.md §5.2)."""

    type: Literal["answer_timeout"]


class ForfeitAction(TypedDict):
    """System only (seat ``None``), at game over of a match that is not over: the sides
    named leave the match and lose it (docs/rules.md §8.5)."""

    type: Literal["forfeit"]
    sides: list[Side]


Action = (
    DiscardAction | PlayAction | AnnounceAction | AnswerAction | RematchAction
    | AnswerTimeoutAction | ForfeitAction
)
"""Any action ``engine.apply`` takes (docs/rules.md, "Actions")."""


# -- pieces -------------------------------------------------------------------------------
class ScoreItem(TypedDict):
    """One scoring combination (``engine.ScoreItem.to_dict()``); ``announced``, ``penalty``
    and ``muggins`` items (Muggins pegs) have no cards."""

    kind: ItemKind
    cards: list[Card]
    points: Points


class SeatCard(TypedDict):
    """A card laid or cut by a seat."""

    seat: Seat
    card: Card


class CountedHand(TypedDict):
    """A hand or crib counted in the show (``view.show.counted``, ``view.last_show``)."""

    seat: Seat
    """The owner (the dealer for the crib)."""
    kind: ShowKind
    cards: list[Card]
    """The four cards (the crib includes the 3-player pack card)."""
    starter: Card
    total: HandCount
    """The true count."""
    items: list[ScoreItem]
    """The true count's breakdown."""
    pegged: Points
    """What the owner actually pegged for it: the true count, or under Muggins the
    announced (or corrected) count plus a penalty actually pegged. Like a peg's
    ``points``, not capped at the target."""
    announced: NotRequired[HandCount]
    """Muggins: the owner's announcement."""
    call: NotRequired[SettledBy]
    """Muggins: how the step was settled."""
    caller: NotRequired[Seat | None]
    """Muggins: the seat that called ``muggins`` / ``overcount``, else null."""
    correct: NotRequired[bool | None]
    """Muggins: whether the call was right (null after accept or timeout)."""
    caller_pegs: NotRequired[Points]
    """Muggins: what the caller's side actually pegged for a correct ``muggins``."""


class PendingStep(TypedDict):
    """Muggins: the step of the show waiting for its owner or the opponents."""

    seat: Seat
    """The owner, who announces."""
    kind: ShowKind
    cards: list[Card]
    announced: HandCount | None
    """Null until the owner announces."""
    answers: dict[SeatKey, Call]
    """The answers so far, by seat."""
    awaiting: list[Seat]
    """Opponents who may still answer (empty before the announcement)."""
    ref: NotRequired[Annotated[int, Range(0, None)]]
    """The step's identity within the game (10 x deal number + place in the show); absent
    only in a game stored before steps carried one."""


class ShowView(TypedDict):
    """The show of the current deal."""

    counted: list[CountedHand]
    """Hands and crib counted so far, in order."""
    pending: PendingStep | None
    """Muggins: the step waiting, else null."""
    hands: dict[SeatKey, list[Card]]
    """Kept hands made public this deal."""


class GameResult(TypedDict):
    """The outcome of a game (``view.result``; the ``game_over`` event)."""

    winner: Side | None
    """Null on a draw (Lowball, 3 or 4 playing alone)."""
    winner_seats: list[Seat]
    draw: bool
    losers: list[Side]
    loser_seats: list[Seat]
    skunks: dict[SideKey, Skunk]
    """Each loser's skunk level (always ``none`` in Lowball)."""
    scores: list[Holes]
    """Per side."""
    reason: Literal["target_reached"]
    reached_by: Side
    """The side that reached the target (the loser in Lowball)."""
    lowball: bool


# -- the match ----------------------------------------------------------------------------
BestOf = Literal[3, 5, 7]
"""A match's length in games (best of 1 is a single game: no match)."""

GamePoints = Annotated[int, Range(0, 3)]
"""Game points of one game (ACC rule 12.1, docs/rules.md §8.2): a win 2, a win with a loser
skunked or double skunked 3, a loss or a draw 0."""

Spread = Annotated[int, Range(-121, 121)]
"""A game's spread, in holes (docs/rules.md §8.3)."""

MatchReason = Literal["won", "forfeit"]
"""How a match ended: a side won the majority of its games, or sides forfeited (§8.5)."""


class MatchGame(TypedDict):
    """One finished game of a match, as scored into it (docs/rules.md §8)."""

    game_number: Positive
    """The room's game number (``view.game_number`` of that game)."""
    winner: Side | None
    """Null for a drawn Lowball game (3 or 4 playing alone, docs/rules.md §7.3)."""
    points: list[GamePoints]
    """Game points, per side (§8.2)."""
    spread: list[Spread]
    """Spread, per side (§8.3)."""
    forfeit: list[Side]
    """Sides that forfeited the match after this game (§8.5); usually empty."""


class Match(TypedDict):
    """A match over a room's games (``view.match``; ``engine.match``, docs/rules.md §8).
    All lists are per side."""

    best_of: BestOf
    number: Positive
    """1 for the room's first match, +1 for each new match after one is over."""
    needed: Literal[2, 3, 4]
    """Wins that take the match: ``best_of // 2 + 1``."""
    games: list[MatchGame]
    """The match's finished games, in order."""
    wins: list[Annotated[int, Range(0, None)]]
    """Games won, per side."""
    points: list[Annotated[int, Range(0, None)]]
    """Game points so far, per side."""
    spread: list[int]
    """Spread so far, per side, in holes."""
    over: bool
    winner: Side | None
    """The side that won the match; null while it is not over (or, after a forfeit, when
    the sides left are level, §8.5)."""
    reason: MatchReason | None
    """Null while the match is not over."""
    forfeited: list[Side]
    """Sides that forfeited (§8.5)."""


# -- the view -----------------------------------------------------------------------------
class View(TypedDict):
    """What one seat (or a spectator) may see: ``engine.view(state, seat)``.

    docs/rules.md, "The view". Other seats' hands before the show, others' discards, the
    crib before it is counted (or pending under Muggins), the pack and the seed are never
    in it.
    """

    seat: Seat | None
    """The seat looking; null for a spectator."""
    options: Options
    """The effective options (docs/rules.md §1.3)."""
    players: Literal[2, 3, 4]
    sides: list[Side]
    """The side of each seat."""
    phase: Phase
    game_number: Positive
    """1 for the room's first game, +1 per rematch."""
    games_played: Annotated[int, Range(0, None)]
    """Rematches so far (game_number - 1)."""
    deal_number: Positive
    """1 for the first deal of a game."""
    dealer: Seat
    scores: list[Holes]
    """Per side."""
    previous_scores: list[Holes]
    """Per side: where the back peg stands."""
    target: Literal[61, 121]
    hand: list[Card]
    """This seat's cards still held (empty for a spectator)."""
    kept: list[Card]
    """This seat's four cards for the show (empty until it discards)."""
    my_discards: list[Card]
    """What this seat laid away this deal."""
    hand_sizes: list[Annotated[int, Range(0, 6)]]
    """Cards still held, per seat."""
    discarded: list[bool]
    """Per seat: has laid away this deal."""
    crib_size: Annotated[int, Range(0, 4)]
    starter: Card | None
    """Null until cut."""
    turn: Seat | None
    """The seat to play (play phase) or to announce (show, before the announcement)."""
    count: Count
    pile: list[SeatCard]
    """Cards of the current count, oldest first."""
    played: list[SeatCard]
    """Every card laid this deal, in order."""
    go: list[bool]
    """Per seat: has said go in the current count."""
    last_player: Seat | None
    """The seat that laid the most recent card this deal."""
    show: ShowView
    last_show: list[CountedHand]
    """The previous deal's counted hands."""
    result: GameResult | None
    """The outcome once the game is over."""
    legal: list[Action]
    """Every action this seat may take now, exactly ``engine.legal_actions(state, seat)``
    and in the shape ``act`` takes; empty for a spectator or a seat with nothing to do."""
    match: NotRequired[Match]
    """The match over the room's games (docs/rules.md §8); absent for a single game (best
    of 1)."""


# -- events -------------------------------------------------------------------------------
class GameStartEvent(TypedDict):
    """A game begins (a new room's first, or a rematch)."""

    type: Literal["game_start"]
    options: Options
    players: Literal[2, 3, 4]
    sides: list[Side]
    game_number: Positive


class GameCommitmentEvent(TypedDict):
    """The commitment to the game's seed, from which the cut for first deal and every deal
    of the game are shuffled (docs/rules.md, "The shuffle"); the seed is published in the
    archive once the game is over."""

    type: Literal["game_commitment"]
    game_number: Positive
    commitment: Annotated[str, Pattern("^[0-9a-f]{64}$")]
    """SHA-256 of the game's 32-byte seed, 64 lowercase hex digits."""


class DealCommitmentEvent(TypedDict):
    """The commitment to a deal's shuffle, just before the deal (docs/rules.md, "The
    shuffle"); the seed is published in the archive once the game is over."""

    type: Literal["deal_commitment"]
    game_number: Positive
    deal_number: Positive
    commitment: Annotated[str, Pattern("^[0-9a-f]{64}$")]
    """SHA-256 of the deal's 32-byte seed, 64 lowercase hex digits."""


class CutForDealEvent(TypedDict):
    """The first dealer of a game (docs/rules.md §2.1)."""

    type: Literal["cut_for_deal"]
    cuts: list[list[SeatCard]]
    """One round per cut (a re-cut after a tie for lowest); empty unless ``reason`` is
    ``cut``."""
    dealer: Seat
    reason: Literal["cut", "loser_deals", "given"]


class DealEvent(TypedDict):
    """A deal (docs/rules.md §2.3). Each seat sees only its own hand."""

    type: Literal["deal"]
    deal_number: Positive
    dealer: Seat
    hands: dict[SeatKey, list[Card]]
    """The hands dealt, by seat; redacted to the seat's own (``{}`` for a spectator)."""
    crib_size: Annotated[int, Range(0, 1)]
    """1 with three players (the pack card, face down), else 0."""


class DiscardEvent(TypedDict):
    """A seat laid cards away to the crib (docs/rules.md §2.4)."""

    type: Literal["discard"]
    seat: Seat
    cards: list[Card] | None
    """The cards; null for every seat but the discarder."""
    count: Annotated[int, Range(1, 2)]
    """How many cards."""


class StarterEvent(TypedDict):
    """The starter is cut (docs/rules.md §2.5)."""

    type: Literal["starter"]
    card: Card
    dealer: Seat


class PegEvent(TypedDict):
    """Holes pegged to a side; only for points above 0."""

    type: Literal["peg"]
    seat: Seat
    """The seat that scores."""
    side: Side
    points: Annotated[int, Range(1, None)]
    """The points scored (not capped at the target)."""
    source: PegSource
    items: list[ScoreItem]
    """The breakdown."""
    score_before: Holes
    score_after: Holes
    """Stops at the target."""


class PlayEvent(TypedDict):
    """A card laid in the play (docs/rules.md §3)."""

    type: Literal["play"]
    seat: Seat
    card: Card
    count: Count
    """The count after the card."""
    pile: list[Card]
    """The cards of the current count, oldest first."""


class GoEvent(TypedDict):
    """A seat holding cards could not play (docs/rules.md §3.2)."""

    type: Literal["go"]
    seat: Seat


class CountResetEvent(TypedDict):
    """The count goes back to 0 (docs/rules.md §3.4)."""

    type: Literal["count_reset"]
    next: Seat | None
    """The seat to lead, or null when the play is over."""


class ShowHandEvent(TypedDict):
    """A hand or crib counted (docs/rules.md §4); under Muggins when its step is settled."""

    type: Literal["show_hand"]
    seat: Seat
    kind: ShowKind
    cards: list[Card]
    starter: Card
    total: HandCount
    """The true count."""
    items: list[ScoreItem]


class AnnounceEvent(TypedDict):
    """Muggins: the owner announced a count (docs/rules.md §5.1)."""

    type: Literal["announce"]
    seat: Seat
    kind: ShowKind
    points: HandCount


class AnswerEvent(TypedDict):
    """Muggins: an opponent answered (docs/rules.md §5.2)."""

    type: Literal["answer"]
    seat: Seat
    call: Call


class MugginsResultEvent(TypedDict):
    """Muggins: how a step was settled (docs/rules.md §5.3, §5.4). The pegs that follow are
    the truth; the numbers here say what was actually pegged: after the game ended on an
    earlier peg of the step, later ones are 0."""

    type: Literal["muggins_result"]
    owner: Seat
    kind: ShowKind
    announced: HandCount
    true_count: HandCount
    call: SettledBy
    caller: Seat | None
    correct: bool | None
    """Null after accept or timeout."""
    owner_pegs: Points
    """What the owner pegs for the step (N, or T after a correct overcount), not capped
    at the target."""
    caller_pegs: Points
    """What the caller's side actually pegged (T - N after a correct muggins)."""
    penalty: Annotated[int, Range(0, 2)]
    """The penalty actually pegged to the owner for a wrong call (2, or 0)."""


class BackupEvent(TypedDict):
    """Back-up 10 (docs/rules.md §6)."""

    type: Literal["backup"]
    seat: Seat
    side: Side
    kind: ShowKind
    holes: Annotated[int, Range(0, 10)]
    """How far the score actually moved back."""
    score_before: Holes
    score_after: Holes


class GameOverEvent(GameResult):
    """A target was reached and the game is over (docs/rules.md §4.3)."""

    type: Literal["game_over"]


class MatchScoreEvent(Match):
    """In a match: the match as it stands after a game ended (right after ``game_over``) or
    after a forfeit (docs/rules.md §8)."""

    type: Literal["match_score"]


class MatchOverEvent(TypedDict):
    """A match is decided (after ``match_score``): a side won the majority, or sides
    forfeited (docs/rules.md §8.1, §8.5). Lists are per side."""

    type: Literal["match_over"]
    winner: Side | None
    """Null only after a forfeit that leaves the sides level (§8.5)."""
    winner_seats: list[Seat]
    wins: list[Annotated[int, Range(0, None)]]
    points: list[Annotated[int, Range(0, None)]]
    spread: list[int]
    reason: MatchReason


Event = (
    GameStartEvent | GameCommitmentEvent | CutForDealEvent | DealCommitmentEvent | DealEvent
    | DiscardEvent | StarterEvent | PegEvent
    | PlayEvent | GoEvent | CountResetEvent | ShowHandEvent | AnnounceEvent | AnswerEvent
    | MugginsResultEvent | BackupEvent | GameOverEvent | MatchScoreEvent | MatchOverEvent
)
"""Any event the engine emits (docs/rules.md, "Events")."""


# -- the computer's hint --------------------------------------------------------------------
Goal = Literal["most", "fewest"]
"""What the suggestion plays for: most points, or fewest in Lowball (docs/rules.md §7)."""


class DiscardChoice(TypedDict):
    """One discard with its expected points, in holes."""

    cards: list[Card]
    expected: float
    """``hand`` plus (own crib) or minus (an opponent's crib, weighed) ``crib``; the
    ``expert`` level adds ``play``."""
    hand: float
    """The kept cards' average show count over every starter the seat cannot see."""
    crib: float
    """The crib's average count with these cards."""
    play: NotRequired[float]
    """``expert`` only: the kept four's average pegging margin (own pegs less the
    opponent's), included in ``expected``."""
    win: NotRequired[float]
    """``expert`` only, near the end: the chance to win (0..1), by which choices are ranked."""


class PlayChoice(TypedDict):
    """One playable card with its value."""

    card: Card
    points: Points
    """Pegged at once (not counting go or last card)."""
    reply: float
    """Expected points of the next player's best reply."""
    stuck: float
    """Chance the next player cannot play (0..1)."""
    value: float
    """The score the choice is ranked by."""
    win: NotRequired[float]
    """``expert`` only, near the end: the chance to win (0..1), also ``value``."""


class DiscardSuggestion(TypedDict):
    """Every discard ranked, best first."""

    goal: Goal
    kind: Literal["discard"]
    choices: list[DiscardChoice]
    best: DiscardAction | None


class PlaySuggestion(TypedDict):
    """Every playable card ranked, best first."""

    goal: Goal
    kind: Literal["play"]
    choices: list[PlayChoice]
    best: PlayAction | None


class AnnounceSuggestion(TypedDict):
    """Muggins: the seat is to announce its own count. Counting your own hand is what
    Muggins is about, so the hint never gives the count nor an action that would tell it
    (``best`` is always null): only what is being counted (docs/rules.md §5.1)."""

    goal: Goal
    kind: Literal["announce"]
    counting: ShowKind
    """The pending step: a ``hand`` (counted with the starter) or the ``crib`` (a flush
    only with the starter, docs/rules.md §4.2)."""
    best: None


class AnswerSuggestion(TypedDict):
    """Muggins: the seat may answer an opponent's announcement. The hint gives neither the
    true count nor the right call (``best`` is always null), only what is being answered."""

    goal: Goal
    kind: Literal["answer"]
    counting: ShowKind
    """The pending step's kind."""
    announced: HandCount | None
    """The owner's announcement (public)."""
    best: None


class NoSuggestion(TypedDict):
    """Nothing to advise (no legal action, or only ``rematch``)."""

    goal: NotRequired[Goal]
    """Absent when the game has not started."""
    kind: Literal["none"]
    best: None


Suggestion = (
    DiscardSuggestion | PlaySuggestion | AnnounceSuggestion | AnswerSuggestion | NoSuggestion
)
"""``engine.computer.suggest``'s answer (docs/rules.md, "Computer players")."""


__all__ = [
    "CARD_PATTERN", "Action", "AnnounceAction", "AnnounceEvent", "AnnounceSuggestion",
    "AnswerAction", "AnswerEvent", "AnswerSuggestion", "AnswerTimeoutAction", "BackupEvent",
    "BestOf", "Call", "Card", "Count", "CountResetEvent", "CountedHand", "CutForDealEvent",
    "DealCommitmentEvent", "DealEvent", "GameCommitmentEvent",
    "DiscardAction", "DiscardChoice", "DiscardEvent", "DiscardSuggestion", "Event",
    "ForfeitAction", "GamePoints", "GameOverEvent", "GameResult", "GameStartEvent", "GoEvent",
    "Goal", "HandCount", "Holes",
    "ItemKind", "Match", "MatchGame", "MatchOverEvent", "MatchReason", "MatchScoreEvent",
    "MugginsResultEvent", "NoSuggestion", "Options", "Pattern", "PegEvent",
    "PegSource", "PendingStep", "Phase", "PlayAction", "PlayChoice", "PlayEvent",
    "PlaySuggestion", "Points", "Positive", "Range", "RematchAction", "ScoreItem", "Seat",
    "SeatCard", "SeatKey", "SettledBy", "ShowHandEvent", "ShowKind", "ShowView", "Side",
    "SideKey", "Skunk", "Spread", "StarterEvent", "Suggestion", "View",
]

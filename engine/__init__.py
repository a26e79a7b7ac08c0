"""The rules engine: cribbage as this server plays it (ACC rules + docs/rules.md).

Pure Python, standard library only, no I/O. A game is a :class:`GameState` plus actions:
:func:`new_game`, :func:`apply`, :func:`legal_actions`; :func:`view` and
:func:`redact_event` give each seat exactly what it may see. The shapes of views, events,
actions and suggestions are typed in :mod:`engine.shapes`. See docs/rules.md.
"""

from . import shapes
from .cards import FULL_DECK, Card, card_strs, parse_cards
from .deal import deck_for
from .errors import CODES, RulesError
from .game import apply, has_move, legal_actions, new_game
from .options import GameOptions
from .scoring import Score, ScoreItem, hand_total, score_hand, score_pegging
from .state import PHASES, GameState
from .views import EVENT_REDACTIONS, EventRedaction, redact_event, view

__all__ = [
    "CODES",
    "EVENT_REDACTIONS",
    "FULL_DECK",
    "PHASES",
    "Card",
    "EventRedaction",
    "GameOptions",
    "GameState",
    "RulesError",
    "Score",
    "ScoreItem",
    "apply",
    "card_strs",
    "deck_for",
    "hand_total",
    "has_move",
    "legal_actions",
    "new_game",
    "parse_cards",
    "redact_event",
    "score_hand",
    "score_pegging",
    "shapes",
    "view",
]

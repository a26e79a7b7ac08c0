"""The rating model (issue 19 point 2): openskill's Weng-Lin Plackett-Luce with the
library's defaults, the number shown, and the computer levels' fixed ratings.

* :data:`MODEL`: ``openskill.models.PlackettLuce()`` — mu 25, sigma 25/3, beta 25/6, tau
  25/300 (each rate() widens every sigma by tau first, so a rating never freezes). Teams are
  the table's sides: one player each at 2, 3 and 4 alone, two in partnerships.
* :func:`display`: the number shown is the library's ordinal (the conservative estimate
  ``mu - 3 sigma``) on an Elo-like scale, ``1000 + 50 x (mu - 3 sigma)``, rounded, never
  below 0. A newcomer (mu 25, sigma 25/3) shows 1000; the number rises as games make sigma
  small, and between two settled players (small sigma) 50 points per unit of mu make a
  difference of ``d`` read as Elo's: the model's chance to win a 2-player game
  ``Phi(dmu / sqrt(2) beta)`` is within 1 % of Elo's ``1 / (1 + 10^(-d/400))`` (the
  logistic approximation ``Phi(x) ~ 1 / (1 + e^(-1.702 x))`` gives 50.2 points per unit).
* A rating is provisional for its first ``rating_provisional_games`` games (a setting).
* Computer levels: fixed ratings per table kind (:data:`COMPUTER_RATINGS`, calibrated by
  ``bench/computer_ratings.py``, docs/performance.md "Ratings"), used as the computer
  seat's rating and never updated.
"""

from __future__ import annotations

from typing import Any

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
"""The one model every rating is computed with (the library's defaults)."""

MU = MODEL.mu
"""A new rating's mean (25)."""

SIGMA = MODEL.sigma
"""A new rating's deviation (25/3)."""

DISPLAY_BASE = 1000
"""What a rating of ordinal 0 shows (a newcomer)."""

DISPLAY_SCALE = 50
"""Points shown per unit of the ordinal (about Elo's scale between settled players)."""

STANDARD_MU = MU
"""The ``standard`` computer's mean: the anchor of the scale (the library's default mean),
at every table kind."""

COMPUTER_SIGMA = 1.0
"""The computer levels' fixed deviation: they are known well (hundreds of calibration
games), so a human's game against one moves the human, not the anchor."""

TABLE_KINDS = ("2", "3", "4", "2x2")
"""The table kinds a rating is kept for (``server.archive.rows.table_kind``)."""

from .computers import COMPUTER_MU  # noqa: E402  (data, kept apart from the model)

COMPUTER_RATINGS: dict[str, dict[str, tuple[float, float]]] = {
    kind: {level: (mu, COMPUTER_SIGMA) for level, mu in levels.items()}
    for kind, levels in COMPUTER_MU.items()
}
"""``{table kind: {level: (mu, sigma)}}``: the computer levels' fixed ratings."""


def display(mu: float, sigma: float) -> int:
    """The number shown for a rating: ``max(0, round(1000 + 50 * (mu - 3 * sigma)))``
    (see the module docstring)."""
    return max(0, round(DISPLAY_BASE + DISPLAY_SCALE * (mu - 3.0 * sigma)))


def computer_rating(kind: str, level: str | None) -> tuple[float, float]:
    """A computer level's fixed ``(mu, sigma)`` at a table kind (an unknown level: the
    ``standard`` one's)."""
    levels = COMPUTER_RATINGS.get(kind) or COMPUTER_RATINGS["2"]
    return levels.get(level or "standard", levels["standard"])


def rate(teams: list[list[tuple[float, float]]], ranks: list[int]
         ) -> list[list[tuple[float, float]]]:
    """openskill's update for one result.

    Args:
        teams: per side, each member's ``(mu, sigma)`` before.
        ranks: per side, 1 = first; equal ranks tie.

    Returns:
        Per side, each member's ``(mu, sigma)`` after (the library's ``rate`` exactly).
    """
    rated: Any = MODEL.rate([[MODEL.rating(mu=mu, sigma=sigma) for mu, sigma in team]
                             for team in teams], ranks=[float(r) for r in ranks])
    return [[(p.mu, p.sigma) for p in team] for team in rated]

"""Hints: the ``expert`` player's suggestion for a seat, made once per room version and
seat, with a bound on how many are being made at once (:class:`HintDesk`)."""

from .desk import SEARCHED, HintDesk, HintsBusy

__all__ = ["SEARCHED", "HintDesk", "HintsBusy"]

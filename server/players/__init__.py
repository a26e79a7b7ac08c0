"""Players (issue 18 points 1, 2, 6 and 7): an identity without sign-up.

* :mod:`server.players.store`: :class:`PlayerStore` over the SQL database (players, device
  credentials, one-time link codes, export, deletion).
* :mod:`server.players.auth`: :func:`player_from_request` (``Authorization: Player
  <id>.<secret>``) and where the store is (``services.players``).
* :mod:`server.players.http`: the ``/api/players`` routes.
"""

from .auth import ApiError, optional_player, player_from_request, player_store
from .store import Player, PlayerStore

__all__ = ["ApiError", "Player", "PlayerStore", "optional_player", "player_from_request",
           "player_store"]

"""A player's history and statistics, read from the archive (issue 18 point 4).

* :mod:`.stats`: the profile's statistics, one aggregate query over the player's
  ``game_seats`` rows (each row's summary was computed from the game's events at archive
  time, ``server.archive.summary``) plus the streaks, folded into the ``PlayerStatistics``
  shape of ``protocol.http``.
* :mod:`.games`: the player's games, newest first, a page at a time (keyset cursor), with
  every seat of each game (opponents, partner), its result and score.
* :mod:`.http`: ``GET /api/players/{id}``, ``GET /api/players/{id}/games`` and the pages
  ``/p/{id}`` and ``/replay/{game}`` (``ROUTES``, spliced into ``server.app``).
"""

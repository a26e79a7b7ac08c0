"""Table talk (issue 21): what players and spectators say at a table, and who hears it.

* :mod:`.rules`: who hears whom (pure): a seated player's message reaches the whole table;
  a spectator's reaches only the spectators while a game is on.
* :mod:`.limits`: the per-player message rate (this process) — the per-room rate is counted
  by the room store with the message itself.
* :mod:`.mutes`: who muted whom, in the SQL database (remembered for the player).
* :mod:`.service`: saying, muting, reporting and hiding messages (:class:`ChatService`).
* :mod:`.handlers`: the WebSocket handlers (``chat``, ``chat_mute``, ``chat_unmute``,
  ``chat_report``).
* :mod:`.http`: ``GET``/``PUT``/``DELETE /api/players/me/mutes``.

A room's last messages live in the room store next to the room (``RoomStore.chat_post``,
``chat_recent``, ``chat_hide``) and travel on the room's own channel, so every process that
serves the room delivers them (``server.fanout``); the archive keeps a finished game's
messages with the game (``game_chat``).
"""

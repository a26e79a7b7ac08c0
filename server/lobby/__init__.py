"""The lobby: the public tables waiting for players (issue 20 point 1; docs/protocol.md
"Public tables and the lobby", docs/architecture.md "The lobby").

* :mod:`.entry`: what the lobby says of a room (``entry_of``, pure) and the filters.
* :mod:`.index`: the index of entries (:class:`.index.LobbyIndex`), in memory
  (:class:`.index.MemoryLobbyIndex`); :mod:`.redis_index` on Redis and Redis Cluster.
* :mod:`.service`: :class:`.service.Lobby`, which keeps the index in step with every room
  change (a commit hook of the room service), serves the connections that follow the lobby
  (``lobby_subscribe``) and answers ``GET /api/lobby`` (:mod:`.http`).
"""

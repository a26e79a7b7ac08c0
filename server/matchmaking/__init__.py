"""Quick match (issue 20 point 2): queues per table kind and options, matching by rating
with a gap that widens with the time waited, and rooms made for the matched players.

* :mod:`.tables`: a queue's table (``queue_join.table``), its queue key, engine options and
  room settings.
* :mod:`.matching`: the pure part — the accepted rating gap as a function of the time
  waited, and the grouping of a queue's players into tables with seats.
* :mod:`.store`: where the queues live (memory, Redis, Redis Cluster: one hash tag).
* :mod:`.matcher`: one process's quick match: its waiting connections, the lease that lets
  one process at a time match, making the rooms, telling the players.
* :mod:`.handlers`: the WebSocket messages ``queue_join``, ``queue_leave``,
  ``queue_accept_computer`` (``server.session`` dispatches to them).

docs/protocol.md "Quick match"; docs/architecture.md "Quick match".
"""

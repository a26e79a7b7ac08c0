"""The archive: every ended game kept in the SQL database, exactly once (issue 18 point 3).

* ``outbox``: what the commit that ends a game records as durable work (an ``archive``
  deadline, due at once) and the public game id;
* ``rows``: an ended game's outbox entry and log turned into the database's rows, with the
  seeds (docs/rules.md "The shuffle") and each seat's summary (``summary``);
* ``writer``: the one idempotent SQL transaction per game (insert-or-nothing on room, room
  creation and game number);
* ``worker``: the deadline handlers (archive, abandon) with back-off, the room kept while
  its archive is pending, and the figures /metrics shows;
* ``reader``: a game by id with its log, a player's games a page at a time; ``replay``: an
  archived game as the web client's replay file.
* ``grading``: a game's discards and plays graded against a computer level (pure);
  ``grader``: graded once per game in a one-worker process pool, kept in the database.

How it fits together, and why it is exactly once: docs/architecture.md, "The archive".
"""

"""Challenges, blocks and online now (issue 20 point 3; docs/protocol.md "Challenges,
blocks and online now", docs/architecture.md "Challenges, blocks and online now").

* :mod:`.blocks`: who blocked whom, in SQL (:class:`BlockStore`; the quick-match matcher
  asks :meth:`BlockStore.blocked_between`).
* :mod:`.online`: "online now", per process with leases (memory, Redis, Redis Cluster).
* :mod:`.challenges`: challenge records with their expiry as data, and the players'
  channels.
* :mod:`.service`: what sessions call; :mod:`.handlers`: the WebSocket handlers;
  :mod:`.http`: the blocks' HTTP routes; :mod:`.build`: the process's parts.
"""

from .blocks import BlockError, BlockStore

__all__ = ["BlockError", "BlockStore"]

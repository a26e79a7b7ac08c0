"""The process's :class:`~server.social.service.SocialService`, from the lifespan's parts."""

from __future__ import annotations

from typing import Any

from .blocks import BlockStore
from .challenges import Channels, MemoryChallenges, RedisChallenges, publisher
from .online import MemoryOnline, RedisOnline
from .service import SocialService


def build_social(settings: Any, broker: Any, service: Any, players: Any, database: Any,
                 limits: Any = None, redis: Any = None, cluster_keys: Any = None
                 ) -> SocialService:
    """Args:
        settings: the process's settings.
        broker: the process's broker (the players' channels).
        service: the room service.
        players: the ``PlayerStore``.
        database: the ``Database`` (blocks).
        limits: the ``AddressLimits`` (budgets), or None.
        redis: the Redis (or Redis Cluster) client, or None for this process's memory.
        cluster_keys: the ``ClusterKeys`` on a Redis Cluster (sharded pub/sub).
    """
    lease = settings.presence_lease_seconds
    if redis is None:
        online: Any = MemoryOnline(lease)
        challenges: Any = MemoryChallenges()
    else:
        online = RedisOnline(redis, settings.key_prefix, lease)
        challenges = RedisChallenges(redis, settings.key_prefix)
    channels = Channels(broker, publisher(broker, redis, settings.key_prefix, cluster_keys))
    return SocialService(settings, service, players, BlockStore(database), online,
                         challenges, channels, limits)

-- Store or remove one deadline of a room outside a commit (RedisStore.schedule / cancel),
-- e.g. a dropped player's takeover grace, and move the room's index entry.
-- KEYS[1] room:{id}:deadlines  KEYS[2] room:{id}:deadline_data  KEYS[3] deadlines (index)
-- ARGV[1] room id  ARGV[2] "<kind>|<key>"  ARGV[3] due time, or "" to remove
-- ARGV[4] deadline JSON  ARGV[5] ttl seconds
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('HDEL', KEYS[2], ARGV[2])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[1] then
  redis.call('ZADD', KEYS[3], first[2], ARGV[1])
else
  redis.call('ZREM', KEYS[3], ARGV[1])
end
return 1

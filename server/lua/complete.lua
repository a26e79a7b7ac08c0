-- Remove a claimed deadline unless rescheduled since the claim (RedisStore.complete).
-- KEYS[1] deadlines zset  KEYS[2] deadlines:data hash  ARGV[1] member  ARGV[2] lease
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
return 0

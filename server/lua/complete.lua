-- Remove a claimed deadline unless rescheduled since the claim (RedisStore.complete).
-- KEYS[1] room:{id}:deadlines  KEYS[2] room:{id}:deadline_data  KEYS[3] deadlines (index)
-- ARGV[1] "<kind>|<key>"  ARGV[2] lease  ARGV[3] room id
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
local done = 0
if s and tonumber(s) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  done = 1
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[1] then
  redis.call('ZADD', KEYS[3], first[2], ARGV[3])
else
  redis.call('ZREM', KEYS[3], ARGV[3])
end
return done

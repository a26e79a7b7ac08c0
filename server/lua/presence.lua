-- Change a seat's connection count; publish when it crosses zero (RedisStore.presence_change).
-- KEYS[1] room:{id}:presence  KEYS[2] room:{id}:state (must exist)
-- ARGV[1] seat  ARGV[2] delta  ARGV[3] channel  ARGV[4] message if now connected
-- ARGV[5] message if now disconnected  ARGV[6] ttl seconds
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local before = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local after = before + tonumber(ARGV[2])
if after < 0 then after = 0 end
redis.call('HSET', KEYS[1], ARGV[1], after)
redis.call('EXPIRE', KEYS[1], ARGV[6])
if before == 0 and after > 0 then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
if before > 0 and after == 0 then redis.call('PUBLISH', ARGV[3], ARGV[5]) end
return after

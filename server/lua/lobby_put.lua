-- The lobby index: write one room's entry, or its removal, if its version is new
-- (server/lobby/redis_index.py).
-- KEYS: tables (hash), seen (hash), expiry (zset), v (counter) -- one hash tag, {lobby}.
-- ARGV: room id, room version, entry JSON ("" for not listed), expires at, now (Unix s).
-- Returns 1 when written, 0 when a version at least as new was written before.
local function prune(now)
  local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)
  for _, room in ipairs(old) do
    redis.call('ZREM', KEYS[3], room)
    redis.call('HDEL', KEYS[2], room)
    if redis.call('HDEL', KEYS[1], room) == 1 then redis.call('INCR', KEYS[4]) end
  end
end
prune(ARGV[5])
local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if tonumber(ARGV[2]) <= seen then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
if ARGV[3] == '' then
  if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then redis.call('INCR', KEYS[4]) end
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('INCR', KEYS[4])
end
return 1

-- Put a player in a queue (replacing any entry of theirs, in any queue: one at a time).
-- KEYS[1] entries (hash player -> entry JSON), KEYS[2] counts (hash queue -> players),
-- KEYS[3] owners (hash owner -> heartbeat ms).
-- ARGV[1] player, ARGV[2] entry JSON, ARGV[3] queue, ARGV[4] owner, ARGV[5] now (ms).
-- Returns the replaced entry's JSON, or nil.
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local q = cjson.decode(old)['q']
  if redis.call('HINCRBY', KEYS[2], q, -1) <= 0 then redis.call('HDEL', KEYS[2], q) end
end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
return old

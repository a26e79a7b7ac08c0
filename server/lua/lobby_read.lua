-- The lobby index: drop expired rooms, then answer {version, 0} when the caller knows that
-- version, else {version, 1, entry JSON, ...} (server/lobby/redis_index.py).
-- KEYS: tables (hash), seen (hash), expiry (zset), v (counter) -- one hash tag, {lobby}.
-- ARGV: now (Unix s), the version the caller knows ("" for none).
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, 100)
for _, room in ipairs(old) do
  redis.call('ZREM', KEYS[3], room)
  redis.call('HDEL', KEYS[2], room)
  if redis.call('HDEL', KEYS[1], room) == 1 then redis.call('INCR', KEYS[4]) end
end
local v = redis.call('GET', KEYS[4]) or '0'
if ARGV[2] == v then return {v, 0} end
local out = {v, 1}
for _, text in ipairs(redis.call('HVALS', KEYS[1])) do out[#out + 1] = text end
return out

-- Keep a room while its archive is pending (RedisStore.hold): every key of the room expires
-- no sooner than ARGV[1] seconds from now (an expiry already later is left alone).
-- KEYS[1] room:{id}:state  KEYS[2..] the room's other keys
-- ARGV[1] seconds
-- Returns 1 if the room exists, else 0.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local want = tonumber(ARGV[1])
for i = 1, #KEYS do
  local t = redis.call('TTL', KEYS[i])
  if t >= 0 and t < want then redis.call('EXPIRE', KEYS[i], want) end
end
return 1

-- Write one owner's (server process's) spectators of a room, checking the room's cap in the
-- same step (RedisStore.set_watchers). The count is absolute, like presence.
-- KEYS[1] room:{id}:watchers  hash <owner> -> spectators
-- KEYS[2] room:{id}:state     (the room must exist)
-- ARGV[1] owner  ARGV[2] count  ARGV[3] cap (0: none)  ARGV[4] ttl seconds
-- Returns the room's total after the write; -1 when a growing count would take the total
-- past the cap (nothing written); -2 when the room does not exist (nothing written).
if redis.call('EXISTS', KEYS[2]) == 0 then return -2 end
local owner = ARGV[1]
local count = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local all = redis.call('HGETALL', KEYS[1])
local mine = 0
local others = 0
for i = 1, #all, 2 do
  if all[i] == owner then mine = tonumber(all[i + 1]) else others = others + tonumber(all[i + 1]) end
end
if cap > 0 and count > mine and others + count > cap then return -1 end
if count > 0 then
  redis.call('HSET', KEYS[1], owner, count)
  redis.call('EXPIRE', KEYS[1], ARGV[4])
else
  redis.call('HDEL', KEYS[1], owner)
end
return others + count

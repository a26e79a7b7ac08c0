-- Say one chat message in a room (RoomStore.chat_post): number it, keep it, publish it.
-- KEYS[1] room:{id}:state  KEYS[2] room:{id}:chat (list, oldest first)
-- KEYS[3] room:{id}:chat_seq  KEYS[4] room:{id}:chat_rate:<unix second>
-- ARGV[1] the entry's JSON after its id: ',"at":…}'  ARGV[2] messages kept
-- ARGV[3] ttl seconds  ARGV[4] the room's channel  ARGV[5] the room id (JSON-safe)
-- ARGV[6] messages a second the room takes (0: no limit)
-- Returns the message's id (1, 2, …), 0 when the room does not exist, -1 when the room
-- said ARGV[6] messages this second already (nothing kept or published).
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local limit = tonumber(ARGV[6])
if limit > 0 then
  local n = redis.call('INCR', KEYS[4])
  if n == 1 then redis.call('EXPIRE', KEYS[4], 2) end
  if n > limit then return -1 end
end
local id = redis.call('INCR', KEYS[3])
local entry = '{"id":' .. id .. ARGV[1]
redis.call('RPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
local ttl = tonumber(ARGV[3])
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)
-- (ClusterRedisStore sends this script with SPUBLISH, sharded pub/sub, instead.)
redis.call('PUBLISH', ARGV[4], '{"t":"c","room":"' .. ARGV[5] .. '","m":' .. entry .. '}')
return id

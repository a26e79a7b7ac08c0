-- A moderator hides a room's chat message (RoomStore.chat_hide) and the room is told.
-- KEYS[1] room:{id}:chat_hidden (set of ids)
-- ARGV[1] the message id  ARGV[2] ttl seconds  ARGV[3] the room's channel
-- ARGV[4] the room id (JSON-safe)
-- Returns 1 when newly hidden, 0 when it was hidden already.
local added = redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
if added == 1 then
  -- (ClusterRedisStore sends this script with SPUBLISH, sharded pub/sub, instead.)
  redis.call('PUBLISH', ARGV[3], '{"t":"h","room":"' .. ARGV[4] .. '","id":' .. ARGV[1] .. '}')
end
return added

-- Claim due deadlines of every room (RedisStore.claim_due), in one round trip.
-- Each claimed deadline is re-scored to the lease end, so no other process sees it until
-- then (if the claimer dies, it becomes due again), and the room's index entry moves to its
-- new earliest deadline.
-- KEYS[1] deadlines (global index: room id -> earliest due)
-- ARGV[1] now  ARGV[2] lease until  ARGV[3] most rooms per call  ARGV[4] key prefix
-- The rooms' own keys (room:{id}:deadlines, room:{id}:deadline_data) are derived here from
-- the index, which a standalone Redis allows; on a Redis Cluster they sit on other slots,
-- and this step would be split into the index read and one claim per room (docs/protocol.md).
local rooms = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, room in ipairs(rooms) do
  local zk = ARGV[4] .. 'room:{' .. room .. '}:deadlines'
  local hk = ARGV[4] .. 'room:{' .. room .. '}:deadline_data'
  local due = redis.call('ZRANGEBYSCORE', zk, '-inf', ARGV[1])
  for _, m in ipairs(due) do
    local d = redis.call('HGET', hk, m)
    if d then
      redis.call('ZADD', zk, ARGV[2], m)
      table.insert(out, d)
    else
      redis.call('ZREM', zk, m)
    end
  end
  local first = redis.call('ZRANGE', zk, 0, 0, 'WITHSCORES')
  if first[1] then
    redis.call('ZADD', KEYS[1], first[2], room)
  else
    redis.call('ZREM', KEYS[1], room)
  end
end
return out

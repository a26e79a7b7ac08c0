-- Claim the due deadlines of one room (Redis Cluster: ClusterRedisStore.claim_due, after it
-- read the room's id from its bucket's index). Each claimed deadline is re-scored to the
-- lease end, and the bucket index's entry for the room moves to its new earliest deadline.
-- Every key is passed in (all share the bucket's hash tag, so one slot).
-- KEYS[1] room deadlines zset  KEYS[2] room deadline_data hash  KEYS[3] the bucket's index
-- ARGV[1] now  ARGV[2] lease until  ARGV[3] room id
-- Returns the claimed deadlines' JSON.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local out = {}
for _, m in ipairs(due) do
  local d = redis.call('HGET', KEYS[2], m)
  if d then
    redis.call('ZADD', KEYS[1], ARGV[2], m)
    table.insert(out, d)
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[1] then
  redis.call('ZADD', KEYS[3], first[2], ARGV[3])
else
  redis.call('ZREM', KEYS[3], ARGV[3])
end
return out
